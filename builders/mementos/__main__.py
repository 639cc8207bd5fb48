"""``python -m builders.mementos``."""

from builders.mementos.cli import main

raise SystemExit(main())
