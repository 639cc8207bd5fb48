#!/usr/bin/env bash
# The lint's word lists (builders/lint/dictionary.py); called by .ci/install. Idempotent.
#   pyspellchecker  the `lint` extra (already in the `test` extra)
#   scowl           Debian's package of the SCOWL word lists (/usr/share/dict/scowl/): ordinary words that
#                   pyspellchecker lacks ("hoodie", "countertop", "bruschetta"); not on PyPI
set -euo pipefail
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

python -c "import spellchecker" 2>/dev/null || python -m pip install --quiet "pyspellchecker>=0.8"

if [ ! -d /usr/share/dict/scowl ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq scowl >/dev/null
fi

python - <<'PY'
from builders.lint.dictionary import load_dictionary
words = load_dictionary()
assert words is not None and "bruschetta" in words and "teh" not in words, "the lint's word lists did not load"
print(f"lint deps: {len(words)} words")
PY
