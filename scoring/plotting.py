"""Matplotlib set-up every scorer's ``plots`` shares: the headless backend and a reproducible PNG writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (scoring runs headless: servers, CI); imported only when plotting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig: Any, path: str | Path) -> Path:
    """Write a figure as PNG without a "Software" stamp (same results, same bytes) and free it."""
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120, metadata={"Software": None})
    pyplot().close(fig)
    return path
