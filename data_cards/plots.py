"""The card's PNG plots (matplotlib, Agg backend, no timestamps in the files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def bar_chart(
    path: Path, counts: Mapping[str, int], *, title: str, xlabel: str, reference: float | None = None
) -> None:
    """A bar chart of ``counts`` (in the given order) written to ``path``, at least 1,200 px wide (readable on
    a Hub card without zooming); ``reference`` draws a dashed line (the uniform share of an answer letter)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    labels = [str(k) for k in counts]
    values = [int(v) for v in counts.values()]
    width = max(8.0, min(16.0, 0.6 * len(labels) + 4.0))
    fig, ax = plt.subplots(figsize=(width, 4.5), dpi=150)
    try:
        bars = ax.bar(range(len(values)), values, color="#4C72B0")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")
        ax.bar_label(bars, labels=[str(v) for v in values], fontsize=9)
        if reference is not None:
            ax.axhline(reference, color="#C44E52", linestyle="--", linewidth=1, label=f"uniform ({reference:.1f})")
            ax.legend(loc="upper right", fontsize=9)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("items")
        ax.margins(y=0.15)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        # No "Software"/date metadata: the same data gives the same bytes.
        fig.savefig(path, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)


PLOTS = {
    "tasks": ("tasks", "Items per task", "task"),
    "pressures": ("pressures", "Items per pressure", "pressure"),
    "n_images": ("n_images", "Number of images per item", "images"),
    "answers": ("answers", "Answer distribution", "answer"),
}


def plot_specs(stats: Mapping[str, Any]) -> list[tuple[str, Mapping[str, int], dict[str, Any]]]:
    """``(path relative to the release, counts, bar_chart options)`` of every plot of the card."""
    specs = [(f"plots/{fname}.png", stats[key], {"title": title, "xlabel": xlabel})
             for fname, (key, title, xlabel) in PLOTS.items()]
    for n, counts in (stats.get("answers_by_options") or {}).items():
        specs.append((f"plots/answers-{n}-options.png", counts,
                      {"title": f"Answer letters of {n}-option questions", "xlabel": "answer",
                       "reference": sum(counts.values()) / int(n)}))
    return specs


def write_plots(out_dir: Path, stats: Mapping[str, Any]) -> list[str]:
    """The card's PNG plots under ``plots/`` (:func:`plot_specs`); returns their paths relative to ``out_dir``."""
    specs = plot_specs(stats)
    for rel, counts, options in specs:
        bar_chart(out_dir / rel, counts, **options)
    return [rel for rel, _, _ in specs]
