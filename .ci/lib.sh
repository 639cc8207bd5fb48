#!/usr/bin/env bash
# Helpers of the .ci/install-*.sh scripts; source this file.
#
# `child_venv DIR`: make a virtualenv at DIR that sees the ACTIVE Python environment's
# packages (torch, datasets, Mirage installed editable, ...) behind its own, without changing that environment.
#
# Why not `python -m venv --system-site-packages`: a venv made from inside another venv is based on the BASE
# interpreter, so --system-site-packages links it to the base interpreter's site-packages, not to the active
# venv's; in a README install (`.venv` active) the harness venvs then saw neither transformers nor Mirage, and pip
# pulled a second CUDA torch into each. Here a `.pth` file in DIR's site-packages calls `site.addsitedir` on the
# active environment's site-packages: it comes after DIR's own packages on sys.path, and its own .pth files
# (Mirage's editable install) are processed too. pip in DIR sees those packages as installed (it reads sys.path)
# and installs only what is missing or of another version, into DIR.
child_venv() {
  local dir="$1" parent child
  parent="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  python -m venv "$dir"
  child="$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  if [ "$parent" != "$child" ]; then
    printf 'import site; site.addsitedir(%s)\n' "$(python -c 'import sys; print(repr(sys.argv[1]))' "$parent")" \
      > "$child/_mirage_project_env.pth"
  fi
}

# `pip_install ARGS...`: `python -m pip install --quiet ARGS` (with `PIP=...` another env's pip) whose expected
# complaints are summed up in one line. Some packages go in with --no-deps plus only what Mirage's code path imports
# (label-studio-sdk, lmms-eval, ms-vlmeval: each script says why); after every later install pip's resolver then
# prints a red "ERROR: pip's dependency resolver ..." block listing those packages' declared dependencies that are
# left out. Those lines are dropped and counted; anything else pip prints is shown, and pip's exit status is kept.
pip_install() {
  local pip=(${PIP:-python -m pip}) log status dropped
  log="$(mktemp)"
  set +e
  "${pip[@]}" install --quiet "$@" >"$log" 2>&1
  status=$?
  set -e
  dropped="$(grep -cE "$EXPECTED_PIP_LINES" "$log" || true)"
  grep -vE "$EXPECTED_PIP_LINES" "$log" >&2 || true
  if [ "$dropped" -gt 0 ]; then
    echo "  (pip listed $dropped declared dependencies of packages installed --no-deps on purpose: expected)" >&2
  fi
  rm -f "$log"
  return "$status"
}
EXPECTED_PIP_LINES="^ERROR: pip's dependency resolver does not currently take|^This behaviour is the source of|^(label-studio-sdk|lmms-eval|ms-vlmeval|qwen-vl-utils) [^ ]+ requires "
