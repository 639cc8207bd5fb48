#!/usr/bin/env bash
# lmms-eval and VLMEvalKit for the harness-export tests (tests/scoring/test_harness_lmms_eval.py,
# test_harness_vlmevalkit.py); called by .ci/install after the release and services parts (it reuses their torch,
# datasets, pyarrow and Pillow). Idempotent: a second run only checks that what the tests use imports.
#
# lmms-eval goes into its own virtualenv, .venv-lmms-eval, that sees the project env (torch, transformers,
# datasets, Mirage itself, installed editable) behind its own packages without changing it (.ci/lib.sh says how,
# and why not --system-site-packages). lmms-eval 0.7.3 declares ~50
# dependencies for its model wrappers and built-in task scorers (transformers, wandb==0.25.0, yt-dlp, av,
# sentence-transformers, pycocoevalcap, ...: several GB with their own pins); the path Mirage's tasks take
# (TaskManager(include_path=...), simple_evaluate, the generate_until request flow) imports only the few listed
# below, so the package is installed with --no-deps plus those. A lab's own lmms-eval env is the full
# `pip install lmms-eval`, plus `pip install mirage-bench` for the hooks of Mirage's tasks.
#
# VLMEvalKit likewise, in .venv-vlmevalkit: it is not on PyPI as such; ms-vlmeval is its packaging by ModelScope
# (module `vlmeval`, VLMEvalKit's code). Its ~60 declared dependencies cover every model and benchmark it knows;
# `vlmeval.dataset` (build_dataset, the custom MCQ/VQA datasets, CircularEval with exact matching) imports the
# ones listed below. qwen-vl-utils goes without its own dependencies (PyAV is needed for videos only).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
LMMS_EVAL_VERSION="0.7.3"
VENV=".venv-lmms-eval"
# pinned to the versions the tests last passed with (lmms-eval itself pins none of them)
# filelock: lmms-eval's simple_evaluate imports filelock._api, which filelock 4 no longer has; the project env's
# datasets / huggingface_hub take filelock 4, so the venv keeps a 3.x of its own in front of it
EVALUATOR_DEPS=("loguru==0.7.3" "pytz==2026.6" "accelerate==1.15.0" "tenacity==9.2.1" "evaluate==0.4.6"
                "sacrebleu==2.6.0" "filelock==3.32.7")

check() {
  "$VENV/bin/python" - <<PY
import importlib.metadata as m
assert m.version("lmms_eval") == "$LMMS_EVAL_VERSION", m.version("lmms_eval")
from lmms_eval.evaluator import simple_evaluate  # noqa: F401
from lmms_eval.tasks import TaskManager  # noqa: F401
import filelock._api  # noqa: F401 - simple_evaluate needs it at run time
import scoring.harness.lmms_eval_utils  # noqa: F401 - Mirage's hooks import in the harness env
PY
}

if ! check 2>/dev/null; then
  rm -rf "$VENV" && child_venv "$VENV"
  PIP="$VENV/bin/python -m pip" pip_install --no-deps "lmms-eval==$LMMS_EVAL_VERSION"
  # pip then lists every declared dependency left out ("lmms-eval 0.7.3 requires ..."): expected, summed up
  # in one line by pip_install (.ci/lib.sh)
  PIP="$VENV/bin/python -m pip" pip_install "${EVALUATOR_DEPS[@]}"
  check
fi
VLM_VERSION="0.0.20"   # ms-vlmeval
VLM_VENV=".venv-vlmevalkit"
VLM_DEPS=("tabulate==0.10.0" "termcolor==3.3.0" "validators==0.36.0" "sty==1.0.6" "portalocker==4.4.2"
          "timeout-decorator==0.5.0" "Levenshtein==0.27.5" "joblib==1.6.0" "jieba==0.42.1" "nltk==3.10.4"
          "rouge==1.0.1" "math-verify==0.9.0" "pylatexenc==2.11" "imageio==2.38.1" "json_repair==0.64.6"
          "num2words==0.5.14" "scikit-learn==1.9.1" "accelerate==1.15.0")
check_vlm() {
  "$VLM_VENV/bin/python" - <<PY
import importlib.metadata as m, warnings
warnings.filterwarnings("ignore")
assert m.version("ms-vlmeval") == "$VLM_VERSION", m.version("ms-vlmeval")
from vlmeval.dataset import build_dataset  # noqa: F401
PY
}
if ! check_vlm >/dev/null 2>&1; then
  rm -rf "$VLM_VENV" && child_venv "$VLM_VENV"
  PIP="$VLM_VENV/bin/python -m pip" pip_install --no-deps "ms-vlmeval==$VLM_VERSION" "qwen-vl-utils==0.0.14"
  PIP="$VLM_VENV/bin/python -m pip" pip_install "${VLM_DEPS[@]}"
  check_vlm >/dev/null 2>&1 || check_vlm   # quiet when fine (vlmeval logs a missing .env), loud when not
fi

echo "harness deps: lmms-eval $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("lmms_eval"))') ($VENV, $(du -sh "$VENV" | cut -f1)), ms-vlmeval $VLM_VERSION ($VLM_VENV, $(du -sh "$VLM_VENV" | cut -f1))" >&2
