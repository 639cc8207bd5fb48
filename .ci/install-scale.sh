#!/usr/bin/env bash
# The `scale` extra: Ray with Ray Data, for --executor ray (docs/scale.md) and tests/builders/test_scale_ray.py,
# which starts a local Ray cluster (no GPU). Called by .ci/install. Idempotent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pip_install "ray[data]>=2.40"
python - <<'PY'
import pandas, pyarrow, ray, ray.data  # noqa: F401 - what the Ray executor imports
print(f"scale deps: ray {ray.__version__}, pyarrow {pyarrow.__version__}, pandas {pandas.__version__}")
PY
