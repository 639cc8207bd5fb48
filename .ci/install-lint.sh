#!/usr/bin/env bash
# The lint's word lists (builders/lint/dictionary.py); called by .ci/install. Idempotent. Both from PyPI, so the
# spelling rule reads the same on every machine (the `lint` extra; the `test` extra has them too):
#   pyspellchecker  a curated English word list (MIT)
#   wordfreq        a large English word-frequency list: the ordinary words the curated list lacks ("hoodie",
#                   "countertop", "selfie"); code Apache-2.0, data CC BY-SA 4.0; brings ftfy, langcodes, locate,
#                   msgpack, regex (all pure Python or wheels)
set -euo pipefail
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

python -c "import spellchecker, wordfreq" 2>/dev/null || python -m pip install --quiet "pyspellchecker>=0.8" "wordfreq>=3.1"

python - <<'PY'
from builders.lint.dictionary import dictionary_status, load_dictionary
words = load_dictionary()
assert words is not None and "bruschetta" in words and "hoodie" in words and "teh" not in words, \
    "the lint's word lists did not load"
print(f"lint deps: {dictionary_status(words)}")
PY
