#!/usr/bin/env bash
# Dependencies of data_cards/ (release + publish) and its tests; called by .ci/run. Idempotent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pip_install \
    "datasets>=4.0" "huggingface_hub>=0.24" "jinja2>=3.1" "pyarrow>=15" "matplotlib>=3.7" "statsmodels>=0.14" \
    "pyyaml>=6" "pillow>=10" "rich>=13" \
    "pytest>=8" "pytest-timeout>=2.2"
# The card's plots are drawn with the Agg backend; no display is needed.
python - <<'PY'
import datasets, huggingface_hub, jinja2, pyarrow, matplotlib
from datasets import Image, List  # noqa: F401 - the feature names data_cards uses (datasets >= 4)
print(f"release deps: datasets {datasets.__version__}, huggingface_hub {huggingface_hub.__version__}, "
      f"pyarrow {pyarrow.__version__}, matplotlib {matplotlib.__version__}")
PY
