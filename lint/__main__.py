from lint.cli import main

raise SystemExit(main())
