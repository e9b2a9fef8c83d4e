"""``check(..., calibration=)`` and ``heta-nb check --require-calibrated`` gate an LLM judge only where
people calibrated it; an uncalibrated judge is a "not comparable" row saying why, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

import heta_nb
from heta_nb.benchmark import Benchmark
from heta_nb.cli import main
from heta_nb.llm_judges import standin_model
from heta_nb.reviews import import_reviews
from heta_nb.reviews.calibration import calibrate

MANIFEST = {"name": "capitals", "version": "1", "split": "test", "task_type": "qa"}
N = 60


def bench() -> Benchmark:
    rows = [
        {"case_id": f"c{i:03d}", "query": f"What is the capital of country {i}?", "answers": [f"City{i}"]}
        for i in range(N)
    ]
    return Benchmark.from_frame(pd.DataFrame(rows), manifest=MANIFEST)


def kb(query: str) -> dict[str, Any]:
    i = int(query.split()[-1].rstrip("?"))
    answer = f"The capital of country {i} is City{i}." if i % 2 == 0 else "Bananas are yellow."
    return {"answer": answer, "results": [{"id": "d", "text": f"City{i} is the capital of country {i}."}]}


def judged(store: Path, report_id: str) -> Any:
    return heta_nb.evaluate(
        bench(), kb=kb, evaluators=["answer_relevance", "answer_f1"], judge_model=standin_model(), judge_cache=None,
        store=str(store), report_id=report_id, knowledge_base_name="kb", progress=False,
    )  # fmt: skip


def people(report: Any, count: int) -> pd.DataFrame:
    """Verdicts that agree with the right answers (even cases right, odd ones wrong)."""
    rows = [
        {
            "case_id": r["case_id"],
            "query_mode": r["query_mode"],
            "reviewer": "ana",
            "verdict": "correct" if int(r["case_id"][1:]) % 2 == 0 else "wrong",
        }  # fmt: skip
        for r in report.raw["case_results"][:count]
    ]
    return pd.DataFrame(rows)


def test_check_gates_a_judge_only_where_people_calibrated_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    base, new = judged(store, "eval_base"), judged(store, "eval_new")
    import_reviews(people(new, 56), report=new, store=store)
    calibration = calibrate(new, new.reviews(store=store))
    assert calibration.is_calibrated("answer_relevance")
    gated = heta_nb.check(new, base, calibration=calibration)
    rows = {r.metric: r for r in gated.rows}
    assert rows["answer_relevance"].verdict == "no detectable change"
    few = calibrate(new, people(new, 20).assign(value=lambda f: f["verdict"].map({"correct": 1.0, "wrong": 0.0})))
    refused = heta_nb.check(new, base, calibration=few)
    row = next(r for r in refused.rows if r.metric == "answer_relevance")
    assert row.verdict == "not comparable" and row.reason.startswith("not calibrated: 20 reviewed of the 50 needed")
    assert next(r for r in refused.rows if r.metric == "answer_f1").verdict == "no detectable change"  # not a judge
    assert refused.exit_code == 2


def test_the_cli_reads_the_reviews_beside_the_new_report(tmp_path: Path, capsys: Any) -> None:
    store = tmp_path / "store"
    judged(store, "eval_base")
    new = judged(store, "eval_new")
    new_ref, base_ref = f"{store}:kb/eval_new", f"{store}:kb/eval_base"
    assert main(["check", new_ref, "--baseline", base_ref]) == 0
    assert main(["check", new_ref, "--baseline", base_ref, "--require-calibrated"]) == 2
    assert "not calibrated" in capsys.readouterr().out
    import_reviews(people(new, 56), report=new, store=store)
    assert main(["check", new_ref, "--baseline", base_ref, "--require-calibrated"]) == 0
    path_of_new = store / new.raw["report_key"] if new.raw.get("report_key") else None
    assert path_of_new is not None and path_of_new.exists()
    assert main(["check", str(path_of_new), "--baseline", base_ref, "--require-calibrated"]) == 0
