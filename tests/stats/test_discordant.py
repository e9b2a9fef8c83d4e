"""McNemar's exact test against statsmodels' ``mcnemar(exact=True)``, its counts, text and input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heta_nb import stats
from heta_nb.stats.discordant import EXACT_MAX, McNemar, mcnemar_exact

contingency = pytest.importorskip("statsmodels.stats.contingency_tables")


def _pairs(both_pass: int, b: int, c: int, both_fail: int) -> tuple[list[int], list[int]]:
    """``before``/``after`` verdict lists holding the given 2x2 table."""
    before = [1] * both_pass + [1] * b + [0] * c + [0] * both_fail
    after = [1] * both_pass + [0] * b + [1] * c + [0] * both_fail
    return before, after


def _oracle(b: int, c: int, both_pass: int = 3, both_fail: int = 4) -> float:
    table = np.array([[both_pass, b], [c, both_fail]])
    return float(contingency.mcnemar(table, exact=True).pvalue)


def test_matches_statsmodels_on_random_tables() -> None:
    rng = np.random.default_rng(7)
    tables = [(0, 0), (0, 1), (1, 0), (1, 1), (5, 5), (0, 30), (2, 10), (10, 2)]
    tables += [(int(b), int(c)) for b, c in rng.integers(0, 60, size=(300, 2))]
    tables += [(int(b), int(c)) for b, c in rng.integers(0, 2000, size=(20, 2))]
    for b, c in tables:
        p, q = int(rng.integers(0, 20)), int(rng.integers(0, 20))
        result = mcnemar_exact(*_pairs(p, b, c, q))
        assert (result.b, result.c, result.both_pass, result.both_fail, result.n) == (b, c, p, q, p + b + c + q)
        assert result.p_value == pytest.approx(_oracle(b, c, p, q), rel=1e-12, abs=1e-300), (b, c)


def test_no_discordant_pairs_give_p_one() -> None:
    result = mcnemar_exact([1, 0, 1], [1, 0, 1])
    assert result.p_value == 1.0 == _oracle(0, 0)
    assert result.text == "McNemar exact p=1.00 (0 discordant: 0 gained, 0 lost)"


def test_beyond_exact_summation_uses_incomplete_beta() -> None:
    for b, c in ((EXACT_MAX // 2 + 50, EXACT_MAX // 2 + 400), (15_000, 15_700), (30_000, 29_000)):
        assert b + c > EXACT_MAX
        result = mcnemar_exact(*_pairs(0, b, c, 0))
        assert result.p_value == pytest.approx(_oracle(b, c, 0, 0), rel=1e-9)


def test_text_and_record() -> None:
    result = mcnemar_exact(*_pairs(20, 10, 2, 5))  # 10 lost (1 -> 0), 2 gained (0 -> 1)
    assert result.discordant == 12
    assert result.text == "McNemar exact p=0.04 (12 discordant: 2 gained, 10 lost)"
    assert result.record()["b"] == 10 and result.record()["p_value"] == result.p_value
    small = mcnemar_exact(*_pairs(0, 12, 0, 0))
    assert small.text == "McNemar exact p<0.001 (12 discordant: 0 gained, 12 lost)"
    assert mcnemar_exact(*_pairs(0, 11, 1, 0)).text.startswith("McNemar exact p=0.006 ")


def test_missing_and_bool_inputs() -> None:
    before = [True, False, None, 1, float("nan"), np.int64(0), np.bool_(True)]
    after = [False, True, True, None, 0, 1.0, np.bool_(False)]
    result = mcnemar_exact(before, after)
    assert (result.n, result.b, result.c) == (4, 2, 2)
    empty = mcnemar_exact([None], [1])
    assert empty.n == 0 and math.isnan(empty.p_value) and empty.reason
    assert "n/a" in empty.text


@pytest.mark.parametrize(
    ("before", "after", "match"),
    [
        ([1, 0], [1], "before and after must have equal lengths"),
        ([1, 2], [1, 0], "before must hold bools"),
        ([1, 0], ["yes", 0], "after must hold bools"),
        ("10", [1, 0], "before must be a sequence"),
        (5, [1], "before must be a sequence"),
    ],
)
def test_bad_input(before: object, after: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        mcnemar_exact(before, after)  # type: ignore[arg-type]


def test_exported_lazily() -> None:
    assert stats.mcnemar_exact is mcnemar_exact and stats.McNemar is McNemar
