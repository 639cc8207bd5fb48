"""The review's agreement figures (``builders.review``): Fleiss' kappa is statsmodels', wrapped for the review's
rows; raw agreement and Gwet's AC1 (no maintained library computes AC1) by their formulas."""

from __future__ import annotations

import numpy as np
import pytest

from builders.review import VERDICTS, agreement_figures, fleiss_kappa
from tests.conftest import have, require


def plain_kappa(table: np.ndarray) -> float:
    """Fleiss (1971), written out: P-bar against P-e of the category shares."""
    n = table.sum(axis=1)[0]
    p = table.sum(axis=0) / table.sum()
    p_bar = ((table * table).sum(axis=1) - n).sum() / (len(table) * n * (n - 1))
    return float((p_bar - (p * p).sum()) / (1 - (p * p).sum()))


def test_kappa_is_the_librarys_on_review_rows() -> None:
    require(have("statsmodels"), "statsmodels (the annotation and release extras)", "pip install -e '.[test]'")
    from statsmodels.stats.inter_rater import fleiss_kappa as library

    rng = np.random.default_rng(7)
    for _ in range(20):
        table = rng.multinomial(3, [0.7, 0.2, 0.1], size=int(rng.integers(2, 40)))
        if (table.sum(axis=0) == table.sum()).any():
            continue  # one category only: undefined, tested below
        rows = [dict(zip(VERDICTS, map(int, row))) for row in table]
        assert fleiss_kappa(rows) == pytest.approx(library(table, method="fleiss"))
        assert fleiss_kappa(rows) == pytest.approx(plain_kappa(table))


def test_undefined_kappa_is_none_and_unequal_ratings_are_refused() -> None:
    require(have("statsmodels"), "statsmodels (the annotation and release extras)", "pip install -e '.[test]'")
    assert fleiss_kappa([{"accept": 3}, {"accept": 3}]) is None
    assert fleiss_kappa([{"accept": 0}]) is None
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([{"accept": 3}, {"accept": 2, "fix": 0}])
    assert agreement_figures([{"accept": 3}, {"accept": 2}])["fleiss_kappa"] is None  # raw agreement still holds
