from builders.imports.cli import main

raise SystemExit(main())
