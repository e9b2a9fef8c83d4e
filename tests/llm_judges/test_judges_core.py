"""The judges' rules with plain-function models: n/a, strict verdicts, repeats, rubrics, versions,
budgets, shared limits, and the cache's key and files (two processes at once, a torn line)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llm_judges.conftest import capital_kb, capitals

import heta_nb
from heta_nb.llm_judges import (
    AnswerRelevance,
    Faithfulness,
    JudgeCache,
    JudgeLimits,
    JudgeModel,
    judge,
    standin_model,
)
from heta_nb.llm_judges.cache import cache_key
from heta_nb.llm_judges.limits import CallLimiter
from heta_nb.llm_judges.models import ModelCallError
from heta_nb.llm_judges.standin import standin_answer
from heta_nb.llm_judges.totals import judge_totals
from heta_nb.runner.errors import RunError


def evaluate(benchmark: Any, evaluators: list[Any], model: Any, kb: Any = capital_kb, **settings: Any) -> Any:
    settings.setdefault("judge_cache", None)
    return heta_nb.evaluate(
        benchmark, kb=kb, evaluators=evaluators, judge_model=model, store=None, progress=False, **settings
    )


def only(report: Any, name: str) -> list[dict[str, Any]]:
    return [s for r in report.raw["case_results"] for s in r["scores"] if s["name"] == name]


def test_what_cannot_be_judged_is_na_with_its_reason_and_never_reaches_a_mean() -> None:
    def kb(query: str) -> Any:
        i = int(query.split()[-1].rstrip("?"))
        return [
            {"results": [{"id": "d", "text": "City0 is the capital."}]},  # no answer
            {"answer": "City1.", "results": []},  # nothing retrieved
            {"answer": "I do not know.", "results": [{"id": "d", "text": "City2 is the capital."}]},  # no claims
        ][i]

    report = evaluate(capitals(3), ["faithfulness", "answer_relevance"], standin_model(), kb=kb)
    faith = only(report, "faithfulness")
    assert [s["metadata"].get("skipped") for s in faith] == [True, True, True]
    assert [s["metadata"]["reason"] for s in faith] == [
        "the response has no answer",
        "nothing with text was retrieved",
        "the answer makes no factual claims",
    ]
    assert faith[2]["metadata"]["calls"] == 1  # asked, and the answer had no claims: n/a, with its cost
    row = report.summary_frame().set_index("metric").loc["faithfulness"]
    assert row["status"] == "skipped" and row["mean"] != row["mean"]  # n/a, not 1.0, not 0
    nocase = evaluate(capitals(2, answers=False), ["answer_correctness", "context_recall"], standin_model())
    assert {s["metadata"]["reason"] for r in nocase.raw["case_results"] for s in r["scores"]} == {
        "the case has no expected answers"
    }


def test_a_verdict_naming_a_chunk_that_does_not_exist_is_an_error_not_a_verdict() -> None:
    answers = iter(
        [
            '{"claims": [{"claim": "x", "verdict": "supported", "chunks": ["c9"], "reason": ""}]}',
            '{"claims": [{"claim": "x", "verdict": "maybe", "chunks": [], "reason": ""}]}',
        ]
    )
    report = evaluate(capitals(1), ["faithfulness"], JudgeModel(lambda prompt: next(answers), name="liar"))
    score = only(report, "faithfulness")[0]
    assert score["value"] == "error" and "'verdict' must be one of" in score["metadata"]["error"]["message"]
    assert len(score["metadata"]["raw_answers"]) == 2


def test_every_chunk_is_judged_once_and_precision_is_rank_aware() -> None:
    def relevant_second(prompt: str) -> str:
        return json.dumps(
            {"chunks": [{"id": "c1", "verdict": "not_relevant"}, {"id": "c2", "verdict": "relevant", "reason": "r"}]}
        )

    score = only(
        evaluate(capitals(1), ["context_precision"], JudgeModel(relevant_second, name="m")), "context_precision"
    )[0]
    assert score["value"] == 0.5  # the one relevant chunk at rank 2: AP = 1/2
    assert [c["result_id"] for c in score["metadata"]["chunks"]] == ["doc-0", "cats"]
    twice = JudgeModel(
        lambda p: '{"chunks": [{"id": "c1", "verdict": "relevant"}, {"id": "c1", "verdict": "relevant"}]}', name="t"
    )
    error = only(evaluate(capitals(1), ["context_precision"], twice), "context_precision")[0]
    assert error["value"] == "error" and "judged twice" in error["metadata"]["error"]["message"]


def test_repeats_average_the_verdicts_and_keep_each_with_their_agreement() -> None:
    verdicts = iter(["relevant", "relevant", "not_relevant"] * 2)

    def wavering(prompt: str) -> str:
        return json.dumps({"verdict": next(verdicts), "reason": "r"})

    report = evaluate(capitals(1), [AnswerRelevance()], JudgeModel(wavering, name="w"), repeats=3)
    score = only(report, "answer_relevance")[0]
    assert score["value"] == pytest.approx(2 / 3)
    assert score["metadata"]["agreement"] == pytest.approx(2 / 3)
    assert sorted(r["value"] for r in score["metadata"]["repeats"]) == [0.0, 1.0, 1.0]
    assert score["metadata"]["calls"] == 3 and score["metadata"]["judge"]["repeats"] == 3


def test_rubrics_binary_graded_and_labelled() -> None:
    judges = [
        judge("on_topic", "The answer addresses the question."),
        judge("graded", "How well the answer addresses the question.", "1-5"),
        judge("tone", "The tone of the answer.", ["formal", "casual"], passing=["formal"]),
    ]
    report = evaluate(capitals(1), judges, standin_model())
    on_topic, graded, tone = (only(report, n)[0] for n in ("on_topic", "graded", "tone"))
    assert on_topic["value"] is True and on_topic["passed"] is True
    assert graded["value"] == 5 and graded["passed"] is True
    assert tone["value"] == "formal" and tone["passed"] is True
    with pytest.raises(ValueError, match="scale"):
        judge("bad", "x", "five")
    out_of_scale = JudgeModel(lambda prompt: '{"score": 9, "reason": ""}', name="nine")
    error = only(evaluate(capitals(1), [judge("graded", "x", "1-5")], out_of_scale), "graded")[0]
    assert error["value"] == "error" and "from 1 to 5" in error["metadata"]["error"]["message"]


def test_the_version_changes_with_the_template_the_model_or_the_settings() -> None:
    base = Faithfulness()
    base.model = JudgeModel(lambda p: "", name="a")
    other_model = Faithfulness()
    other_model.model = JudgeModel(lambda p: "", name="b")
    stricter = Faithfulness(threshold=0.9)
    stricter.model = base.model
    versions = {j.describe()["version"] for j in (base, other_model, stricter)}
    assert len(versions) == 3
    assert (
        judge("x", "one rubric").describe()["template_version"] != judge("x", "another").describe()["template_version"]
    )
    key = cache_key({"name": "a"}, "s", "p", "schema", 0)
    assert (
        len(
            {
                key,
                cache_key({"name": "a", "temperature": 0.5}, "s", "p", "schema", 0),
                cache_key({"name": "a"}, "s", "p", "schema", 1),
            }
        )
        == 3
    )


def test_max_cost_stops_the_run_with_a_partial_report_that_says_why() -> None:
    async def priced(prompt: str, system: str) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        return {"text": standin_answer(system, prompt), "tokens_in": 1000, "tokens_out": 100}

    model = JudgeModel(priced, name="priced")
    report = evaluate(
        capitals(60),
        ["answer_relevance"],
        model,
        concurrency=2,
        judge_prices={"priced": {"input": 10.0, "output": 10.0}},  # $0.011 a call
        judge_limits=JudgeLimits(concurrency=2),
        max_cost=0.05,
    )
    info = report.raw["metadata"]["heta_nb"]
    assert info["status"] == "cancelled" and "stopped at the judge budget" in info["failure"]
    assert 4 <= len(report.raw["case_results"]) < 60
    total = judge_totals(report)["answer_relevance"]
    assert total.cost >= 0.05 and total.cost_unknown == 0
    assert total.cost < 0.05 + 0.011 * (2 + 2)  # passed by at most the cases in flight (2 queries, 2 judge calls)
    with pytest.raises(RunError, match="max_cost needs the price"):
        evaluate(capitals(1), ["answer_relevance"], JudgeModel(priced, name="unpriced"), max_cost=1.0)


def test_an_unknown_price_reads_unknown_never_zero_and_cached_calls_cost_nothing(tmp_path: Path) -> None:
    model = JudgeModel(lambda prompt, system: standin_answer(system, prompt), name="nobody-prices-me")
    first = evaluate(capitals(2), ["answer_relevance"], model, judge_cache=str(tmp_path))
    total = judge_totals(first)["answer_relevance"]
    assert total.cost_text == "unknown" and total.cost_unknown == 2
    assert "no price for model 'nobody-prices-me'" in only(first, "answer_relevance")[0]["metadata"]["cost_unknown"]
    again = judge_totals(evaluate(capitals(2), ["answer_relevance"], model, judge_cache=str(tmp_path)))
    assert again["answer_relevance"].cost_text == "$0" and again["answer_relevance"].cached_calls == 2


def test_a_throttled_answer_pauses_every_call_until_retry_after() -> None:
    async def scenario() -> list[float]:
        limiter = CallLimiter(JudgeLimits(concurrency=4, retries=2, backoff_s=0.0))
        started = time.monotonic()
        refused = [True]
        done: list[float] = []

        async def call() -> str:
            if refused[0]:
                refused[0] = False
                raise ModelCallError("HTTP 429", retryable=True, retry_after=0.3, status=429)
            return "ok"

        async def one(delay: float) -> None:
            await asyncio.sleep(delay)
            await limiter.call(call, prompt_chars=10)
            done.append(time.monotonic() - started)

        await asyncio.gather(one(0.0), one(0.05), one(0.1))
        return done

    done = asyncio.run(scenario())
    assert min(done) >= 0.3  # the calls that came after the 429 waited too


def test_requests_per_minute_spread_the_calls() -> None:
    async def scenario() -> float:
        limiter = CallLimiter(JudgeLimits(concurrency=10, requests_per_minute=600))  # 10 a second, a burst of 600

        async def call() -> str:
            return "ok"

        limiter._requests.level = 0  # an empty bucket: every call waits its turn
        started = time.monotonic()
        await asyncio.gather(*(limiter.call(call, prompt_chars=1) for _ in range(5)))
        return time.monotonic() - started

    assert 0.4 <= asyncio.run(scenario()) < 2.0


FILL = """
import json, os, sys, time
from heta_nb.llm_judges import JudgeCache
folder, worker, go = sys.argv[1], sys.argv[2], sys.argv[3]
cache = JudgeCache(folder)
open(go + "." + worker, "w").close()  # ready
while not os.path.exists(go):  # both start together
    time.sleep(0.005)
for index in range(400):
    key = f"{index:04d}"
    if cache.get(key) is None:
        cache.put(key, json.dumps({"k": key, "pad": "x" * (index % 7) * 500}), model=worker, tokens_in=1, tokens_out=1)
"""


def test_two_processes_judging_into_one_cache_tear_nothing_and_lose_nothing(tmp_path: Path) -> None:
    folder, go = str(tmp_path / "answers"), tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", FILL, folder, f"w{w}", str(go)]) for w in range(2)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(Path(f"{go}.w{w}").exists() for w in range(2)):
        time.sleep(0.01)  # (both have imported heta_nb and wait)
    go.touch()
    for process in workers:
        assert process.wait(60) == 0
    cache = JudgeCache(folder)
    assert len(cache) == 400 and cache.damaged == 0
    for index in range(400):
        entry = cache.get(f"{index:04d}")
        assert entry is not None and json.loads(entry["text"])["k"] == f"{index:04d}"
    assert len(os.listdir(folder)) == 2  # one file per writing process


def test_a_line_cut_short_by_a_killed_process_is_skipped_and_counted(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    cache.put("whole", "{}", model="m", tokens_in=1, tokens_out=1)
    cache.close()
    with open(next(tmp_path.glob("*.jsonl")), "ab") as handle:
        handle.write(b'{"key": "torn", "text": "{\\"verd')
    with open(tmp_path / "answers-other.jsonl", "wb") as handle:
        handle.write(b'not json\n{"key": "fine", "text": "x"}\n')
    fresh = JudgeCache(tmp_path)
    assert fresh.get("whole") is not None and fresh.get("fine") is not None and fresh.get("torn") is None
    assert fresh.damaged == 1
    with pytest.raises(heta_nb.llm_judges.CacheMissError):
        JudgeCache(tmp_path, mode="replay").get("torn")


def test_judges_on_a_dask_executor_are_refused_before_any_work() -> None:
    pytest.importorskip("distributed")  # (executor="dask" needs the [dask] extra)
    from heta_nb.evaluators import PreparedEvaluator
    from heta_nb.runner.config import RunConfig
    from heta_nb.runner.judging import start_judges

    config = RunConfig(benchmark=capitals(1), kb=capital_kb, executor="dask", judge_model=standin_model())
    with pytest.raises(RunError, match="LLM judges run in this process"):
        start_judges(config, None, [PreparedEvaluator(Faithfulness())], lambda reason: None)


def test_a_mode_without_answers_makes_the_answer_judges_na_in_every_view() -> None:
    def retrieval_only(query: str) -> Any:
        return {"results": [{"id": "d", "text": "City0 is the capital of country 0."}]}

    judges = ["faithfulness", "answer_relevance", "context_precision"]
    report = evaluate(capitals(3), judges, standin_model(), kb=retrieval_only)
    frame = report.summary_frame().set_index("metric")
    assert frame.loc["faithfulness", "status"] == "n/a" and frame.loc["answer_relevance", "status"] == "n/a"
    assert "returns no answers" in frame.loc["faithfulness", "reason"]
    assert frame.loc["context_precision", "status"] == "scored"


def test_a_model_that_returns_no_text_is_that_scores_error_and_not_retried() -> None:
    calls: list[str] = []

    def broken(prompt: str) -> Any:
        calls.append(prompt)
        return 42

    score = only(evaluate(capitals(1), ["answer_relevance"], JudgeModel(broken, name="b")), "answer_relevance")[0]
    assert score["value"] == "error" and "returned int, not text" in score["metadata"]["error"]["message"]
    assert len(calls) == 1
