"""Where a metric is n/a: decided once, in the column table (ReportColumns.not_applicable)."""

from __future__ import annotations

import json
from typing import Any

from helpers import FIXTURES
from runner_support import toy_benchmark

import heta_nb
from heta_nb.model.columns import required_input


def _kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """'search' retrieves without answering; 'oracle' answers without retrieving."""
    doc = int(query.rstrip("?").split()[-1])
    if mode == "oracle":
        return {"mode": mode, "results": [], "answer": f"answer{doc}"}
    key = f"raw/benchmarks/toy/test/d{doc}/d{doc}.txt"
    return {"mode": mode, "results": [{"id": "c", "text": "t", "score": 1.0, "source": {"object_key": key}}]}


def test_required_input_by_metric_name() -> None:
    assert [required_input(m) for m in ("answer_contains", "answer_f1", "exact_match", "F1")] == ["answer"] * 4
    assert [required_input(m) for m in ("ndcg@5", "evidence_recall@3", "beir_map@10", "mrr@5")] == ["results"] * 4
    assert required_input("my_custom_judge") == ""  # a custom evaluator is never n/a


def test_a_mode_without_the_input_makes_its_metrics_n_a() -> None:
    report = heta_nb.evaluate(toy_benchmark(6), kb=_kb, query_modes=["search", "oracle"], store=None, progress=False)
    assert report.columns.not_applicable() == {
        ("search", "answer_contains"): "search returns no answers",
        ("oracle", "evidence_recall@3"): "oracle returns no retrieved results",
        ("oracle", "ndcg@3"): "oracle returns no retrieved results",
    }
    found = {(s.mode, s.metric): s for s in report.metric_summaries()}
    assert found[("oracle", "answer_contains")].shown == 1.0
    assert found[("search", "evidence_recall@3")].shown == 1.0


def test_a_score_above_zero_without_the_input_is_not_n_a() -> None:
    data = json.loads((FIXTURES / "report-normal.json").read_text())
    report = heta_nb.load_report(data)
    assert ("full_text_search", "answer_contains") in report.columns.not_applicable()
    for result in data["case_results"]:
        if result["query_mode"] == "full_text_search":
            for score in result["scores"]:
                if score["name"] == "answer_contains":
                    score["value"] = True  # an evaluator that did without the answer
                    break
            break
    changed = heta_nb.load_report(data)
    assert ("full_text_search", "answer_contains") not in changed.columns.not_applicable()
