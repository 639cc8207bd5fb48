"""Writing a scorer's ``results.json``: one format (sorted keys, indent 1, UTF-8) and atomically, so an
interrupted run never leaves a results file that looks complete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sources.atomic import write_atomic


def write_json_atomic(path: str | Path, data: Any) -> Path:
    """``data`` as JSON at ``path`` (folders made), written through a temporary file and renamed."""
    return write_atomic(Path(path), (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode())
