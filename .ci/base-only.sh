#!/usr/bin/env bash
# The base install, held green: a virtualenv with Mirage and its `test` extra only (no torch, OpenCV, Label Studio,
# datasets, ...), and the fast tests (-m "not slow") in it. A module that imports an extra at the top breaks their
# collection here, which the full install hides. Tests that need an extra skip there (CI is unset for this run,
# tests/conftest.py), and every skip must name what to install: a skip that does not fails this script.
# Called by .ci/run before the README's test command; the venv (.venv-base, git-ignored) is reused between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
VENV=.venv-base
if [ ! -x "$VENV/bin/python" ]; then
  python -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip" pip_install -e ".[test]"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
start=$SECONDS
status=0
env -u CI "$VENV/bin/python" -m pytest -q -m "not slow" -p no:cacheprovider -rs >"$log" 2>&1 || status=$?
tail -n 3 "$log" >&2
if [ "$status" -ne 0 ]; then
  grep -E "^(FAILED|ERROR)" "$log" >&2 || tail -n 40 "$log" >&2
  echo "base-only install: the fast tests fail without the extras (see above)" >&2
  exit 1
fi
unnamed="$(grep -E "^SKIPPED" "$log" | grep -vE "pip install|\.ci/install|apt-get install" || true)"
if [ -n "$unnamed" ]; then
  echo "$unnamed" >&2
  echo "base-only install: a skip above does not say what to install" >&2
  exit 1
fi
echo "base-only install: fast tests green in $((SECONDS - start)) s" >&2
