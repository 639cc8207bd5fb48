"""``python -m builders.mmsap``."""

from builders.mmsap.cli import main

raise SystemExit(main())
