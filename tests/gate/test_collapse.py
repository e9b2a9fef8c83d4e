"""The gate cannot pass a collapse: a drop on too few cases to test reads "unverified drop" and fails.

Reported: ``evidence_recall@3`` fell from 0.778 to 0.000 on 7 of 9 cases and ``check`` said
"no detectable change" (Holm p 0.30 over 18 tests): with an exact sign-flip test no drop on
fewer changed cases than the family allows can ever be flagged, and nothing said so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.cli import main
from heta_nb.gate.verdicts import changed_cases_needed

MODES = ["m1", "m2", "m3"]


def _kb(lost: set[int]) -> Any:
    """Finds the right document, except for the queries about documents in ``lost`` in mode m1."""

    def query(text: str, *, mode: str, top_k: int) -> dict[str, Any]:
        doc = int(text.rstrip("?").split()[-1])
        out = exact_kb(text, mode="good", top_k=top_k)
        if mode == "m1" and doc in lost:
            out["results"] = [r for r in out["results"] if not r["id"].startswith(f"chunk_{doc}_")]
        return {**out, "mode": mode}

    return query


def _extra(name: str) -> Any:
    def metric(case: Any, response: Any) -> float:
        return 1.0

    metric.__name__ = name
    return metric


def _run(lost: set[int], report_id: str) -> heta_nb.EvaluationReport:
    evaluators = ["evidence_recall@3", "ndcg@3", "answer_contains", *(_extra(f"judge_{i}") for i in range(3))]
    return heta_nb.evaluate(
        toy_benchmark(9, n_docs=9), kb=_kb(lost), knowledge_base_name="collapse", query_modes=MODES,
        evaluators=evaluators, store=None, progress=False, report_id=report_id,
    )  # fmt: skip


@pytest.fixture(scope="module")
def pair() -> tuple[heta_nb.EvaluationReport, heta_nb.EvaluationReport]:
    baseline = _run({7, 8}, "baseline")  # 7 of 9 cases find their evidence: 0.778
    new = _run(set(range(9)), "new")  # none does: 0.000
    return new, baseline


def test_a_collapse_on_seven_of_nine_cases_is_an_unverified_drop(pair: Any) -> None:
    new, baseline = pair
    result = heta_nb.check(new, baseline)
    row = next(r for r in result.rows if (r.mode, r.metric) == ("m1", "evidence_recall@3"))
    assert (round(row.baseline_mean, 3), row.new_mean, row.losses, row.n) == (0.778, 0.0, 7, 9)
    assert not row.significant and row.family_size == 6  # Holm over m1's 6 metrics: 6 * 2 / 2**7 > 0.05
    assert changed_cases_needed(6, 0.05) == 8
    assert row.verdict == "unverified drop"
    assert row.reason.startswith("dropped by 0.778 (p=")
    assert "7 of 9 cases changed (7 fell); too few cases to test at alpha 0.05 over 6 tests" in row.reason
    assert "(at least 8 changed cases needed)" in row.reason and "--allow-unverified" in row.reason
    assert result.verdict == "unverified drop" and result.exit_code == 1 and not result.ok
    assert result.headline.startswith("FAILED: unverified drop in ")
    allowed = heta_nb.check(new, baseline, allow_unverified=True)
    assert allowed.ok and allowed.exit_code == 0 and "2 unverified drop(s) allowed" in allowed.headline  # and ndcg@3
    assert next(r for r in allowed.rows if r.metric == "evidence_recall@3" and r.mode == "m1").verdict == (
        "unverified drop"
    )  # still said
    floor = heta_nb.check(new, baseline, allow_unverified=True, floors={"evidence_recall@3/m1": 0.5})
    assert floor.verdict == "regression"  # a floor is the other way to catch it


def test_heta_nb_check_exits_1_on_the_collapse(pair: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for report in pair:
        path = tmp_path / f"{report.report_id}.json"
        text = report.to_json()
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        paths.append(str(path))
    assert main(["check", paths[0], "--baseline", paths[1]]) == 1
    out = capsys.readouterr().out
    assert out.startswith("heta-nb check: FAILED: unverified drop in 2 (evidence_recall@3/m1, ndcg@3/m1)")
    assert "⇣ unverified drop: dropped by 0.778" in out
    assert main(["check", paths[0], "--baseline", paths[1], "--allow-unverified"]) == 0
