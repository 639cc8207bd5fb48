#!/usr/bin/env bash
# Source this file, then `child_venv DIR`: make a virtualenv at DIR that sees the ACTIVE Python environment's
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
