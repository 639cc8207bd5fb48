"""``python -m builders.reefknot``."""

from builders.reefknot.cli import main

raise SystemExit(main())
