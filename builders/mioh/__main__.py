"""``python -m builders.mioh``."""

from builders.mioh.cli import main

raise SystemExit(main())
