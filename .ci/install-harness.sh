#!/usr/bin/env bash
# lmms-eval for the harness-export tests (tests/scoring/test_harness_lmms_eval.py); called by .ci/install after the
# release and services parts (it reuses their torch, datasets, pyarrow and Pillow). Idempotent: a second run only
# checks that lmms-eval's task loader and evaluator import.
#
# lmms-eval goes into its own virtualenv, .venv-lmms-eval, made with --system-site-packages: it sees the project
# env (torch, datasets, Mirage itself, installed editable) without changing it. lmms-eval 0.7.3 declares ~50
# dependencies for its model wrappers and built-in task scorers (transformers, wandb==0.25.0, yt-dlp, av,
# sentence-transformers, pycocoevalcap, ...: several GB with their own pins); the path Mirage's tasks take
# (TaskManager(include_path=...), simple_evaluate, the generate_until request flow) imports only the few listed
# below, so the package is installed with --no-deps plus those. A lab's own lmms-eval env is the full
# `pip install lmms-eval`, plus `pip install mirage-bench` for the hooks of Mirage's tasks.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
LMMS_EVAL_VERSION="0.7.3"   # keep in step with tests/scoring/test_harness_lmms_eval.py LMMS_EVAL_VERSION
VENV=".venv-lmms-eval"
EVALUATOR_DEPS=("loguru>=0.7" "pytz" "accelerate>=0.29.1" "tenacity>=8.3.0" "evaluate>=0.4.0" "sacrebleu>=1.5.0")

check() {
  "$VENV/bin/python" - <<PY
import importlib.metadata as m
assert m.version("lmms_eval") == "$LMMS_EVAL_VERSION", m.version("lmms_eval")
from lmms_eval.evaluator import simple_evaluate  # noqa: F401
from lmms_eval.tasks import TaskManager  # noqa: F401
import scoring.harness.lmms_eval_utils  # noqa: F401 - Mirage's hooks import in the harness env
PY
}

if ! check 2>/dev/null; then
  python -m venv --system-site-packages "$VENV"
  "$VENV/bin/python" -m pip install --quiet --no-deps "lmms-eval==$LMMS_EVAL_VERSION"
  # pip then lists every declared dependency left out ("lmms-eval 0.7.3 requires ..."): expected, filtered
  "$VENV/bin/python" -m pip install --quiet "${EVALUATOR_DEPS[@]}" 2>&1 \
    | sed -e "/^lmms-eval $LMMS_EVAL_VERSION requires/d" -e "/dependency resolver does not currently take/d" >&2
  check
fi
echo "harness deps: lmms-eval $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("lmms_eval"))') ($VENV, $(du -sh "$VENV" | cut -f1))" >&2
