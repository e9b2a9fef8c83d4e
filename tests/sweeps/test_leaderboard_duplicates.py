"""A report left off a leaderboard is said, as the docstring promises: a warning (the class ``compare``
uses for the same report twice) and ``board.warnings``."""

from __future__ import annotations

import copy
import json
import warnings

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.comparison.notes import HetaComparisonWarning
from heta_nb.sweeps.leaderboard import Leaderboard

pytestmark = pytest.mark.hostile


@pytest.fixture(scope="module")
def normal() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


def test_the_same_report_twice_warns_and_is_on_the_board_once(normal: heta_nb.EvaluationReport) -> None:
    with pytest.warns(
        HetaComparisonWarning, match=r"report .fixture-normal. is given 2 times: it is on the board once"
    ):
        board = Leaderboard.from_reports([normal, normal], resamples=200)
    assert len(board.reports) == 1
    assert any("is given 2 times" in w for w in board.warnings)
    assert not any("reports 'fixture-normal' and 'fixture-normal'" in w for w in board.warnings)


def test_an_equal_copy_counts_as_the_same_report(normal: heta_nb.EvaluationReport) -> None:
    again = heta_nb.load_report(FIXTURES / "report-normal.json")
    assert again is not normal
    with pytest.warns(HetaComparisonWarning, match=r"is given 3 times"):
        board = Leaderboard.from_reports([normal, again, FIXTURES / "report-normal.json"], resamples=200)
    assert len(board.reports) == 1


def test_an_older_report_for_the_same_pair_warns_naming_the_one_used(normal: heta_nb.EvaluationReport) -> None:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    newer = copy.deepcopy(data)
    newer["report_id"] = "fixture-newer"
    newer["finished_at"] = "2999-01-01T00:00:00Z"
    with pytest.warns(
        HetaComparisonWarning, match=r"reports 'fixture-normal' and 'fixture-newer'; the newer \('fixture-newer'\)"
    ):
        board = Leaderboard.from_reports([normal, heta_nb.load_report(newer)], resamples=200)
    assert [r.report_id for r in board.reports] == ["fixture-newer"]


def test_distinct_pairs_do_not_warn(normal: heta_nb.EvaluationReport) -> None:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    data["report_id"] = "other"
    data["metadata"] = {**data.get("metadata", {}), "recipe": "other-recipe"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", HetaComparisonWarning)
        board = Leaderboard.from_reports([normal, heta_nb.load_report(data)], resamples=200)
    assert len(board.reports) == 2


def test_compare_of_the_same_report_twice_warns_too(normal: heta_nb.EvaluationReport) -> None:
    with pytest.warns(HetaComparisonWarning, match=r"are the same report \(identical results\)"):
        heta_nb.compare(normal, normal, resamples=200)
