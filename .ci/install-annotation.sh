#!/usr/bin/env bash
# What annotation/ and tests/annotation need; called by .ci/install before pytest. Idempotent, non-interactive.
#
# - the project env gets the client side: label-studio-sdk, requests, rich and statsmodels (the `annotation`
#   extra; statsmodels for Fleiss' kappa), aiohttp for the rooms' fronts and Playwright, whose own
#   browser download is skipped: the tests drive the Debian Chromium at /usr/bin/chromium;
# - the Label Studio SERVER goes into its own virtualenv, .venv-labelstudio (it pins Django and many libraries
#   that would clash with the project env); `python -m annotation serve` and the test fixture find it there;
# - Chromium from Debian.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
LS_VERSION="1.23.2"   # keep in step with annotation/serve.py LABEL_STUDIO_VERSION
VENV=".venv-labelstudio"

pip_install "requests>=2.31" "aiohttp>=3.10" "rich>=13" "playwright==1.65.2" "statsmodels>=0.14" "pytest>=8" "pytest-timeout>=2.2"
# label-studio-sdk (the client, pinned as in the `annotation` extra) WITHOUT its declared dependencies: it pins
# opencv-python-headless<4.13 (which pins numpy<2.3) and pulls NLTK, datamodel-code-generator and requests-mock,
# none of which the client or LabelInterface import; resolving them would downgrade the `video` extra's OpenCV
# and numpy. So the SDK goes in with --no-deps plus exactly what `label_studio_sdk.client` and
# `label_studio_sdk.label_interface` import (checked by the import below).
SDK_VERSION="2.1.2"   # keep in step with pyproject.toml's annotation extra
pip_install --no-deps "label-studio-sdk==$SDK_VERSION"
pip_install "httpx>=0.21.2" "pydantic>=2" "jsonschema>=4.23" "lxml>=6.1" "xmljson==0.2.1" \
  "jsf>=0.11.2,<0.12" "appdirs>=1.4.3" "pyjwt>=2.13,<2.14" "ujson>=5.8" "ijson>=3.2.3" "pandas>=1.5"
python -c "import label_studio_sdk.client, label_studio_sdk.label_interface"

if ! "$VENV/bin/python" - 2>/dev/null <<PY
import importlib.metadata as m
assert m.version("label-studio") == "$LS_VERSION"
PY
then
  python -m venv "$VENV"
  PIP="$VENV/bin/python -m pip" pip_install "label-studio==$LS_VERSION"
fi

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# versions, read without starting anything (`label-studio --version` would start a server)
LS_INSTALLED="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("label-studio"))')"
PW_INSTALLED="$(python -c 'import importlib.metadata as m; print(m.version("playwright"))')"
echo "annotation deps: label-studio $LS_INSTALLED ($VENV), label-studio-sdk $SDK_VERSION, playwright $PW_INSTALLED, $(chromium --version 2>/dev/null || echo 'chromium ?')" >&2
