"""``python -m mirage``: the ``mirage`` command without the console script installed."""

from mirage.cli import main

raise SystemExit(main())
