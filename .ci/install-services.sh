#!/usr/bin/env bash
# Dependencies of the model services (filters/clip.py: open_clip; builders/llm.py: openai; scoring/nli.py:
# transformers, for Reefknot's VQA entailment judge) and their tests;
# called by .ci/install. Idempotent: a second run only checks versions.
#
# torch and torchvision are pinned and installed FIRST, on their own, so that open_clip_torch then finds torch
# already satisfied and resolves nothing heavy.
#
# What gets installed: torch==2.14.1 from PyPI (or whatever index pip is configured with) is the CUDA build; with
# triton and the nvidia-* CUDA libraries it takes about 5 GB of disk. It also runs on machines without a GPU (CPU
# only), which is how CI uses it. To get the much smaller CPU-only build instead, install it from PyTorch's own CPU
# wheel index before running this script (the version check below then keeps it):
#     pip install torch==2.14.1 torchvision==0.29.1 --index-url https://download.pytorch.org/whl/cpu
# or let this script do it: MIRAGE_TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu bash .ci/install
# (the variable adds --index-url to the torch install; unset, the default, nothing changes).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
TORCH_PIN="torch==2.14.1"
TORCHVISION_PIN="torchvision==0.29.1"
TORCH_INDEX=()
if [ -n "${MIRAGE_TORCH_INDEX_URL:-}" ]; then
  TORCH_INDEX=(--index-url "$MIRAGE_TORCH_INDEX_URL")
fi

if ! python - <<'PY' 2>/dev/null
import importlib.metadata as m
assert m.version("torch").split("+")[0] == "2.14.1" and m.version("torchvision").split("+")[0] == "0.29.1"
PY
then
  pip_install ${TORCH_INDEX[@]+"${TORCH_INDEX[@]}"} "$TORCH_PIN" "$TORCHVISION_PIN"
fi
pip_install "$TORCH_PIN" "$TORCHVISION_PIN" "open_clip_torch>=2.24" "openai>=1.30" "transformers>=4.40"

python - <<'PY'
import open_clip, openai, torch
build = f"CUDA {torch.version.cuda} build" if torch.version.cuda else "CPU-only build"
print(f"services deps: torch {torch.__version__} ({build}), open_clip {open_clip.__version__}, openai {openai.__version__}")
PY
