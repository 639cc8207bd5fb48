#!/usr/bin/env bash
# Dependencies of the model services (filters/clip.py: open_clip; builders/llm.py: openai) and their tests;
# called by .ci/install. Idempotent: a second run only checks versions.
#
# torch and torchvision are pinned and installed FIRST, on their own: this machine's disk has exactly these
# releases (a pip constraints file caps them), while letting pip resolve a plain `torch` pulls several GB.
# open_clip_torch then finds torch already satisfied and resolves nothing heavy.
set -euo pipefail
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
TORCH_PIN="torch==2.14.1"
TORCHVISION_PIN="torchvision==0.29.1"

if ! python - <<'PY' 2>/dev/null
import importlib.metadata as m
assert m.version("torch").split("+")[0] == "2.14.1" and m.version("torchvision").split("+")[0] == "0.29.1"
PY
then
  python -m pip install --quiet "$TORCH_PIN" "$TORCHVISION_PIN"
fi
python -m pip install --quiet "$TORCH_PIN" "$TORCHVISION_PIN" "open_clip_torch>=2.24" "openai>=1.30"

python - <<'PY'
import open_clip, openai, torch
print(f"services deps: torch {torch.__version__}, open_clip {open_clip.__version__}, openai {openai.__version__}")
PY
