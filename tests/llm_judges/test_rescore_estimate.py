"""``heta_nb.rescore`` adds judge scores to a report without querying its KB again (checkpointed,
resumable, in a store); ``heta_nb.estimate`` measures a sample and scales it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_judges.conftest import capital_kb, capitals

import heta_nb
from heta_nb.llm_judges import Faithfulness, JudgeModel, standin_model
from heta_nb.llm_judges.standin import standin_answer


def source_report(store: Any = None) -> heta_nb.EvaluationReport:
    calls = {"n": 0}

    def kb(query: str) -> Any:
        calls["n"] += 1
        if query.endswith("3?"):
            raise RuntimeError("the KB was down")
        return capital_kb(query)

    report = heta_nb.evaluate(capitals(6), kb=kb, evaluators=["answer_f1"], store=store, progress=False)
    assert calls["n"] == 6
    return report


def test_rescore_adds_judges_keeps_responses_errors_and_scores_and_names_its_source() -> None:
    source = source_report()
    rescored = heta_nb.rescore(
        source, [Faithfulness(), "answer_relevance"], judge_model=standin_model(), judge_cache=None, progress=False
    )
    assert rescored.report_id != source.report_id
    info = rescored.raw["metadata"]["heta_nb"]
    assert info["rescored_from"]["report_id"] == source.report_id
    assert set(info["judges"]) == {"faithfulness", "answer_relevance"}
    assert info["evaluators"] == ["answer_f1", "faithfulness", "answer_relevance"]
    for old, new in zip(source.raw["case_results"], rescored.raw["case_results"], strict=True):
        assert (new["case_id"], new["response"], new["error"], new["latency_ms"]) == (
            old["case_id"],
            old["response"],
            old["error"],
            old["latency_ms"],
        )
        names = [s["name"] for s in new["scores"]]
        assert names == ([] if old["error"] else ["answer_f1", "faithfulness", "answer_relevance"])
        if not old["error"]:
            assert new["scores"][0] == old["scores"][0]
    assert rescored.raw["score_summary"]["full_text_search.faithfulness"] == pytest.approx(0.5)
    assert source.raw["case_results"][0]["scores"] == [source.raw["case_results"][0]["scores"][0]]  # untouched


def test_rescore_replaces_a_score_of_the_same_name() -> None:
    first = heta_nb.rescore(
        source_report(), ["answer_relevance"], judge_model=standin_model(), judge_cache=None, progress=False
    )
    always_off = JudgeModel(lambda prompt: '{"verdict": "not_relevant", "reason": "r"}', name="harsh")
    second = heta_nb.rescore(first, ["answer_relevance"], judge_model=always_off, judge_cache=None, progress=False)
    values = [s["value"] for r in second.raw["case_results"] for s in r["scores"] if s["name"] == "answer_relevance"]
    assert values == [0.0] * 5
    assert second.raw["metadata"]["heta_nb"]["judges"]["answer_relevance"]["model"] == "harsh"
    assert [s["name"] for s in second.raw["case_results"][0]["scores"]] == ["answer_f1", "answer_relevance"]


def test_rescore_saves_under_the_source_kb_and_resumes(tmp_path: Path) -> None:
    store = tmp_path / "store"
    source = source_report(store=str(store))
    asked: list[str] = []

    def model(prompt: str, system: str) -> str:
        asked.append(prompt)
        return standin_answer(system, prompt)

    judge_model = JudgeModel(model, name="counted")
    rescored = heta_nb.rescore(
        source,
        ["answer_relevance"],
        judge_model=judge_model,
        store=str(store),
        report_id="eval_rescored",
        progress=False,
    )
    assert rescored.raw["report_key"].endswith(f"{source.knowledge_base_name}/evaluations/eval_rescored/report.json")
    loaded = heta_nb.load_report(store / rescored.raw["report_key"])
    assert loaded.raw["case_results"] == rescored.raw["case_results"]
    again = heta_nb.rescore(
        source,
        ["answer_relevance"],
        judge_model=judge_model,
        store=str(store),
        report_id="eval_rescored",
        resume=True,
        progress=False,
    )
    assert len(asked) == 5 and again.raw["case_results"] == rescored.raw["case_results"]  # nothing asked twice


def test_estimate_measures_a_sample_and_scales_it_to_every_case() -> None:
    model = JudgeModel(
        lambda prompt, system: {"text": standin_answer(system, prompt), "tokens_in": 100, "tokens_out": 10}, name="m"
    )
    found = heta_nb.estimate(
        capitals(40),
        kb=capital_kb,
        evaluators=["answer_relevance", "faithfulness"],
        judge_model=model,
        judge_prices={"m": {"input": 1.0, "output": 2.0}},
        judge_cache=None,
        sample=5,
    )
    assert found.total == 40 and 1 <= found.sampled <= 12
    assert found.calls == 80 and found.tokens_in == 8000 and found.tokens_out == 800
    assert found.cost == pytest.approx(8000 * 1e-6 + 800 * 2e-6)
    assert found.minutes is not None and "80 calls" in str(found)
    unpriced = heta_nb.estimate(
        capitals(10), kb=capital_kb, evaluators=["answer_relevance"], judge_model=model, judge_cache=None
    )
    assert unpriced.cost is None and "cost unknown" in str(unpriced) or "no price" in str(unpriced)
    on_report = heta_nb.estimate(
        report=source_report(), evaluators=["answer_relevance"], judge_model=model, judge_cache=None, sample=2
    )
    assert on_report.total == 6 and on_report.calls == pytest.approx(5, abs=2)


def test_a_rescore_stopped_by_its_budget_resumes_where_it_stopped(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    source = heta_nb.evaluate(capitals(30), kb=capital_kb, evaluators=["answer_f1"], store=store, progress=False)
    asked: list[str] = []

    def model(prompt: str, system: str) -> dict[str, Any]:
        asked.append(prompt)
        return {"text": standin_answer(system, prompt), "tokens_in": 1000, "tokens_out": 0}

    judge_model = JudgeModel(model, name="priced")
    settings: dict[str, Any] = {
        "judge_model": judge_model,
        "judge_prices": {"priced": (1.0, 0.0)},
        "store": store,
        "report_id": "eval_judged",
        "progress": False,
        "concurrency": 1,
        "judge_limits": heta_nb.JudgeLimits(concurrency=1),
        "judge_cache": None,
    }
    partial = heta_nb.rescore(source, ["answer_relevance"], max_cost=0.005, **settings)
    assert partial.raw["metadata"]["heta_nb"]["status"] == "cancelled"
    stopped_after = len(asked)
    assert 5 <= stopped_after < 30
    finished = heta_nb.rescore(source, ["answer_relevance"], resume=True, **settings)
    assert finished.raw["metadata"]["heta_nb"]["status"] == "complete"
    assert len(asked) == 30  # the resumed run asked only for the cases the first one had not judged
    assert len(finished.raw["case_results"]) == 30


def test_a_sweep_judges_every_pair_with_its_judge_model(tmp_path: Path) -> None:
    def other_kb(query: str) -> Any:
        return {"answer": "Bananas are yellow.", "results": [{"id": "x", "text": "Bananas are yellow."}]}

    board = heta_nb.sweep(
        {"capitals": capitals(4)},
        kbs={"right": capital_kb, "wrong": other_kb},
        store=str(tmp_path / "store"),
        executor="threads",
        evaluators=["answer_relevance"],
        judge_model=standin_model(),
        judge_cache=None,
        progress=False,
    )
    values = {
        name: [s["value"] for r in report.raw["case_results"] for s in r["scores"]]
        for name, report in ((n, board.report(n, "capitals")) for n in ("right", "wrong"))
    }
    assert values == {"right": [1.0] * 4, "wrong": [0.0] * 4}
