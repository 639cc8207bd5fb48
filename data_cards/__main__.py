"""``python -m data_cards``: see :mod:`data_cards.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
