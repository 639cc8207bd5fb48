"""``python -m annotation``: see :mod:`annotation.cli` (also ``mirage review``)."""

import sys

from annotation.cli import main

if __name__ == "__main__":
    sys.exit(main())
