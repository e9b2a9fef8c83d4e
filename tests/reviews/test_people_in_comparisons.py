"""A comparison given the reports' reviews says what people would say of each difference: the
prediction-powered estimate through each metric, the reviews-alone interval beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from reviews.test_gate_calibrated import bench, kb

import heta_nb
from heta_nb.llm_judges import standin_model
from heta_nb.reviews import ppi_difference


def always_right(query: str) -> dict[str, Any]:
    i = int(query.split()[-1].rstrip("?"))
    return {"answer": f"The capital of country {i} is City{i}.", "results": [{"id": "d", "text": f"City{i} is it."}]}


def run(kb_: Any) -> Any:
    return heta_nb.evaluate(
        bench(), kb=kb_, evaluators=["answer_relevance"], judge_model=standin_model(), judge_cache=None,
        store=None, progress=False,
    )  # fmt: skip


def people(report: Any, cases: int, right: Any) -> pd.DataFrame:
    rows = []
    for result in report.raw["case_results"][:cases]:
        ok = right(int(result["case_id"][1:]))
        rows.append({"case_id": result["case_id"], "query_mode": result["query_mode"], "reviewer": "ana",
                     "verdict": "correct" if ok else "wrong", "value": 1.0 if ok else 0.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_compare_with_reviews_adds_peoples_estimate_of_each_difference(tmp_path: Path) -> None:
    base, better = run(kb), run(always_right)
    reviews_base = people(base, 30, lambda i: i % 2 == 0)
    reviews_better = people(better, 30, lambda i: True)
    comparison = heta_nb.compare(base, better, names=["base", "better"], reviews=[reviews_base, reviews_better])
    table = comparison.human_estimates()
    assert table is not None and list(table["metric"]) == ["answer_relevance"]
    direct = ppi_difference(base, better, "answer_relevance", reviews_base, reviews_better)
    row = table.iloc[0]
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == (direct.estimate, direct.ci_low, direct.ci_high)
    assert row["estimate"] == pytest.approx(0.5, abs=0.1)  # half the base answers are wrong, none of better's
    note = next(n for n in comparison.notes if n.startswith("people (prediction-powered"))
    assert "30 cases reviewed in both" in note and "reviews alone" in note
    assert heta_nb.compare(base, better).human_estimates() is None


def test_check_with_reviews_notes_peoples_estimate_and_keeps_its_verdicts() -> None:
    base, better = run(kb), run(always_right)
    reviews = {"baseline": people(base, 30, lambda i: i % 2 == 0), "new": people(better, 30, lambda i: True)}
    plain, informed = heta_nb.check(better, base), heta_nb.check(better, base, reviews=reviews)
    assert [(r.metric, r.verdict) for r in informed.rows] == [(r.metric, r.verdict) for r in plain.rows]
    assert any(n.startswith("people (prediction-powered") for n in informed.notes)
    assert not any(n.startswith("people (") for n in plain.notes)


def test_the_leaderboard_gives_peoples_estimate_where_both_reports_were_reviewed(tmp_path: Path) -> None:
    board = heta_nb.sweep(
        {"capitals": bench()}, kbs={"base": kb, "better": always_right}, store=str(tmp_path / "store"),
        executor="serial", evaluators=["answer_relevance"], judge_model=standin_model(), judge_cache=None,
        baseline="base", progress=False,
    )  # fmt: skip
    base, better = board.report("base", "capitals"), board.report("better", "capitals")
    reviews = {
        ("base", "capitals"): people(base, 30, lambda i: i % 2 == 0),
        ("better", "capitals"): people(better, 30, lambda i: True),
    }
    table = board.human_estimates(reviews)
    assert list(table["recipe"]) == ["better"] and list(table["metric"]) == ["answer_relevance"]
    direct = ppi_difference(
        base, better, "answer_relevance", reviews[("base", "capitals")], reviews[("better", "capitals")]
    )
    assert table.iloc[0]["estimate"] == direct.estimate and table.iloc[0]["ci_low"] == direct.ci_low
    assert board.human_estimates({}).empty
