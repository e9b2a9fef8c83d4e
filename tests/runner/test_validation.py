"""Every setting is checked before the first query, with a message that says what to change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runner_support import SlowKB, evaluate_toy, exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import ReportExistsError, StoreError, UnsafeNameError
from heta_nb.runner import RunError

MODES = ["good", "poor"]


def test_everything_is_validated_before_the_first_query(tmp_path: Path) -> None:
    kb = SlowKB(0)
    store = ReportStore(tmp_path)
    with pytest.raises(UnsafeNameError, match="report_id"):
        evaluate_toy(kb=kb, store=store, report_id="../escape")
    with pytest.raises(UnsafeNameError, match="knowledge_base_name"):
        evaluate_toy(kb=kb, store=store, knowledge_base_name="a/b", report_id="r")
    with pytest.raises(RunError, match=r"metadata\['tags'\]: value of type set"):
        evaluate_toy(kb=kb, store=store, report_id="r", metadata={"tags": {"a"}})
    with pytest.raises(RunError, match="duplicates"):
        evaluate_toy(kb=kb, store=None, query_modes=["good", "good"])
    with pytest.raises(RunError, match="evaluator names must be unique"):
        evaluate_toy(kb=kb, store=None, evaluators=["ndcg@3", "ndcg@3"])
    with pytest.raises(RunError, match="exactly one of kb= .* or recipe="):
        evaluate_toy(store=None)
    with pytest.raises(ValueError, match="unknown evaluator 'nope@3'"):
        evaluate_toy(kb=kb, store=None, evaluators=["nope@3"])
    assert kb.calls == 0
    assert list(tmp_path.iterdir()) == []
    evaluate_toy(kb=kb, store=store, report_id="r")
    with pytest.raises(ReportExistsError, match="resume=True"):
        evaluate_toy(kb=kb, store=store, report_id="r")
    calls = kb.calls
    evaluate_toy(kb=kb, store=store, report_id="r", overwrite=True)
    assert kb.calls == calls + 24


def test_settings_the_engine_used_to_take_unchecked_are_refused_before_any_query() -> None:
    kb = SlowKB(0)
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    for settings, message in (
        ({"retry_on": ("x",)}, "retry_on must be exception classes"),
        ({"backoff_s": float("inf")}, "backoff_s must be a finite number"),
        ({"timeout_s": True}, "timeout_s must be a positive number"),
        ({"shard": (True, 2)}, "shard must be"),
        ({"metadata": {"heta_nb": {"mine": 1}}}, r"metadata keys \['heta_nb'\] are written by the runner"),
        ({"metadata": {"run_units": []}}, "are written by the runner"),
        ({"metadata": cyclic}, "nested too deeply or contains itself"),
        ({"metadata": ["not", "a", "mapping"]}, "metadata"),
    ):
        with pytest.raises(RunError, match=message):
            evaluate_toy(lint=False, kb=kb, **settings)
    assert kb.calls == 0


def test_retry_on_takes_one_exception_class() -> None:
    calls: dict[str, int] = {}

    def kb(query: str, *, mode: str, top_k: int) -> Any:
        calls[query + mode] = calls.get(query + mode, 0) + 1
        if calls[query + mode] == 1:
            raise KeyError("first call fails")
        return exact_kb(query, mode=mode, top_k=top_k)

    report = evaluate_toy(
        lint=False, benchmark=toy_benchmark(6), kb=kb, retry_on=KeyError, retries=1, backoff_s=0
    )  # distinct queries
    assert all(r.error is None for r in report.case_results)
    assert {r.metadata["heta_nb"]["attempts"] for r in report.case_results} == {2}


def test_start_refuses_bad_evaluators_before_it_returns() -> None:
    for evaluators, error in (
        (["answer_contains", "answer_contains"], "must be unique"),
        (["no_such_metric@3"], "no_such_metric"),
    ):
        with pytest.raises((RunError, ValueError, KeyError), match=error):
            heta_nb.start(toy_benchmark(), kb=exact_kb, query_modes=MODES, evaluators=evaluators, progress=False)
    report = evaluate_toy(lint=False, kb=exact_kb, evaluators="answer_contains")  # one name alone is one evaluator
    assert [s.name for s in report.case_results[0].scores] == ["answer_contains"]


# -- evaluate(): kb= and recipe= ------------------------------------------------------------


def test_neither_kb_nor_recipe_says_what_is_missing() -> None:
    with pytest.raises(RunError, match=r"^no knowledge base to evaluate: pass exactly one of kb= .* or recipe="):
        heta_nb.evaluate(toy_benchmark(), progress=False, store=None)


def test_both_kb_and_recipe_says_not_both() -> None:
    with pytest.raises(RunError, match=r"^got both kb= and recipe=: pass exactly one of kb= .* or recipe="):
        heta_nb.evaluate(toy_benchmark(), kb=exact_kb, recipe=object(), progress=False, store=None)


def test_misspelled_evaluator_in_evaluate_is_refused_before_any_query() -> None:
    calls: list[str] = []

    def kb(query: str, *, mode: str, top_k: int) -> Any:
        calls.append(query)
        return exact_kb(query, mode=mode, top_k=top_k)

    with pytest.raises(ValueError, match="did you mean 'ndcg@5'"):
        heta_nb.evaluate(toy_benchmark(), kb=kb, evaluators=["ndgc@5"], progress=False, store=None)
    assert calls == []


# -- store= a file ------------------------------------------------------------------------------


def test_store_that_is_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("not a store")
    calls: list[str] = []

    def kb(query: str, *, mode: str, top_k: int) -> Any:
        calls.append(query)
        return exact_kb(query, mode=mode, top_k=top_k)

    with pytest.raises(
        StoreError, match=r"not a folder \(a report store is a folder"
    ) as info:  # NotADirectoryError too
        heta_nb.start(toy_benchmark(), kb=kb, query_modes=["good"], store=str(target), progress=False)
    assert str(target) in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, NotADirectoryError)
    with pytest.raises(StoreError, match="part of the path is a file"):
        heta_nb.start(toy_benchmark(), kb=kb, query_modes=["good"], store=target / "sub", progress=False)
    assert calls == [] and target.read_text() == "not a store"


def test_store_folder_that_does_not_exist_yet_is_fine(tmp_path: Path) -> None:
    report = heta_nb.evaluate(
        toy_benchmark(), kb=exact_kb, query_modes=["good"], store=tmp_path / "new" / "store", progress=False
    )
    assert report.report_key is not None and (tmp_path / "new" / "store" / report.report_key).exists()
