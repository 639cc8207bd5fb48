"""``python -m builders.predictive``."""

from builders.predictive.cli import main

raise SystemExit(main())
