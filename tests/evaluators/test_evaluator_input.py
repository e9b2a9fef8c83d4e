"""What a custom evaluator receives: a response with the documented shape, and the KB's raw object on request.

Non-built-in evaluators (functions, objects with ``evaluate``/``score``, Heta's evaluators) get
Heta's own ``QueryResponse`` when the KB returned one, and heta_nb's ``QueryResponse`` of the
normalised response otherwise; one that names a parameter ``raw`` also gets what the KB
returned, the very object. Checked on local runs, on Dask batches and in sweep workers.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import cloudpickle
import pytest
from helpers import FIXTURES, heta_recipe, requires_heta
from runner_support import toy_benchmark

import heta_nb
from heta_nb.evaluators import FunctionEvaluator, PreparedEvaluator, as_evaluator
from heta_nb.evaluators.adapters import RAW_KEYWORD, RAW_POSITIONAL, evaluator_response
from heta_nb.model import QueryResponse

try:  # the Dask tests' LocalCluster (two worker processes), started once for this module too
    from runner.test_dask_executor import client  # noqa: F401 - a fixture
except (ImportError, pytest.skip.Exception):
    client = None

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module

N_CASES = 12
"""Cases of the toy benchmark: question ``i % 6``, whose document is ``d{i % 6}``."""


def _doc_of(query: str) -> int:
    return int(query.rstrip("?").split()[-1])


def _expected_doc(case: Any) -> str:
    return f"d{_doc_of(case.query)}"


def list_kb(query: str, top_k: int = 3) -> list[dict[str, Any]]:
    """A plain-function KB returning a list of result dicts (the right document first)."""
    doc = _doc_of(query)
    return [
        {"id": f"chunk_{d}", "text": f"Document {d}.", "score": 1.0 / (r + 1), "source": {"document_id": f"d{d}"}}
        for r, d in enumerate([doc, (doc + 1) % 6, (doc + 2) % 6][:top_k])
    ]


def mapping_kb(query: str, top_k: int = 3) -> dict[str, Any]:
    """A plain-function KB returning a mapping with results and an answer."""
    return {"results": list_kb(query, top_k), "answer": f"answer{_doc_of(query)}"}


class RecordingKB:
    """A KB object that keeps every object it returned (a fresh list of dicts per query)."""

    def __init__(self) -> None:
        self.returned: list[Any] = []  # (appended from the KB's threads: list.append is atomic)

    def query(self, query: str, *, top_k: int) -> list[dict[str, Any]]:
        results = list_kb(query, top_k)
        self.returned.append(results)
        return results

    def returned_it(self, raw: Any) -> bool:
        return any(raw is obj for obj in list(self.returned))


def _evaluate(kb: Any, evaluators: list[Any], **settings: Any) -> Any:
    settings.setdefault("store", None)
    return heta_nb.evaluate(
        toy_benchmark(N_CASES),
        kb=kb,
        knowledge_base_name="toy kb",
        query_modes=["keywords"],
        evaluators=evaluators,
        progress=False,
        **settings,
    )


def _values(report: Any, name: str) -> list[Any]:
    """Score ``name``'s value in every case (in case order); fails on any evaluator error."""
    assert report.error_count == 0
    values = []
    for result in report.case_results:
        assert "evaluator_errors" not in result.metadata["heta_nb"], result.scores
        score = result.score(name)
        assert score is not None and score.value != "error", score
        values.append(score.value)
    return values


# -- the documented shape, whatever the KB returned -----------------------------------------------


def first_document(case: Any, response: Any) -> str:
    return response.results[0].source["document_id"]


def answer_text(case: Any, response: Any) -> str:
    return repr(response.answer)


@pytest.mark.parametrize(("kb", "answer"), [(list_kb, None), (mapping_kb, "answer{}")], ids=["list", "mapping"])
def test_a_function_evaluator_reads_results_and_answer_of_a_list_of_dicts(kb: Any, answer: str | None) -> None:
    report = _evaluate(kb, ["recall@3", first_document, answer_text])
    cases = report.case_results
    assert _values(report, "first_document") == [_expected_doc(r) for r in cases]
    expected_answers = [repr(None if answer is None else answer.format(_doc_of(r.query))) for r in cases]
    assert _values(report, "answer_text") == expected_answers
    assert report.score_summary["keywords.recall@3"] == 1.0


def test_the_notebooks_distinct_documents_evaluator_gets_a_number_on_every_case() -> None:
    """notebooks/03-your-own-kb.ipynb, "A custom evaluator": it failed on every case before."""

    def distinct_documents(case: Any, response: Any) -> int:
        return len({r.source.get("document_id") for r in response.results})

    report = _evaluate(list_kb, ["recall@3", distinct_documents])
    assert _values(report, "distinct_documents") == [3] * N_CASES
    assert report.score_summary["keywords.distinct_documents"] == 3.0


async def async_first_document(case: Any, response: Any) -> str:
    await asyncio.sleep(0)
    return response.results[0].source["document_id"]


class ObjectEvaluator:
    """An object with Heta's ``evaluate(*, case, response)`` (sync)."""

    name = "object_first_document"

    def evaluate(self, *, case: Any, response: Any) -> str:
        return response.results[0].source["document_id"]


class AsyncObjectEvaluator:
    """An object with Heta's ``async evaluate(*, case, response)``, returning a mapping."""

    name = "async_object"

    async def evaluate(self, *, case: Any, response: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"value": response.results[0].source["document_id"], "metadata": {"mode": response.mode}}


class ScoreEvaluator:
    """An object with a positional ``score(case, response)``."""

    name = "score_first_document"

    def score(self, case: Any, response: Any) -> str:
        return response.results[0].source["document_id"]


def test_async_and_object_evaluators_read_the_results_of_a_list_of_dicts() -> None:
    evaluators = [async_first_document, ObjectEvaluator(), AsyncObjectEvaluator(), ScoreEvaluator()]
    report = _evaluate(list_kb, evaluators, concurrency=4)
    expected = [_expected_doc(r) for r in report.case_results]
    for name in ("async_first_document", "object_first_document", "async_object", "score_first_document"):
        assert _values(report, name) == expected, name
    assert {r.score("async_object").metadata["mode"] for r in report.case_results} == {"keywords"}


def test_every_evaluator_of_a_case_gets_one_response_object_and_no_built_in_makes_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import heta_nb.runner.case as case_module

    made: list[Any] = []

    def counting(raw: Any, response: Any) -> Any:
        made.append(raw)
        return evaluator_response(raw, response)

    monkeypatch.setattr(case_module, "evaluator_response", counting)
    builtins_only = _evaluate(list_kb, ["recall@3", "ndcg@3", "mrr@3"])
    assert builtins_only.error_count == 0 and made == []  # built-ins score the JSON: nothing is made for them

    seen: list[tuple[str, Any, Any]] = []

    def one(case: Any, response: Any) -> float:
        seen.append((case.case_id, "one", response))
        return 1.0

    def two(case: Any, response: Any) -> float:
        seen.append((case.case_id, "two", response))
        return 1.0

    report = _evaluate(list_kb, ["recall@3", one, "ndcg@3", two])
    assert report.error_count == 0 and len(seen) == 2 * N_CASES
    assert len(made) == N_CASES  # once per case, for both evaluators
    by_case: dict[str, list[Any]] = {}
    for case_id, _, response in seen:
        by_case.setdefault(case_id, []).append(response)
    for responses in by_case.values():
        assert type(responses[0]) is QueryResponse and responses[0] is responses[1]
    # what the evaluators read is what the report records
    recorded = {r.case_id: r.response for r in report.case_results}
    assert all(by_case[case_id][0] == recorded[case_id] for case_id in by_case)


def test_evaluator_response_passes_query_responses_through_and_wraps_json() -> None:
    ours = QueryResponse(mode="m", results=[{"id": "a", "text": "t"}])
    assert evaluator_response(ours, ours.raw) is ours
    wrapped = evaluator_response([{"id": "a", "text": "t"}], ours.raw)
    assert type(wrapped) is QueryResponse and wrapped.raw is ours.raw  # not a copy
    assert evaluator_response("an answer", ours) is ours


# -- the KB's raw object, to evaluators that ask for it ---------------------------------------------


class RawIsReturned:
    """An object evaluator taking ``raw`` as a keyword: is it one of the objects the KB returned?"""

    name = "raw_is_returned"

    def __init__(self, kb: RecordingKB) -> None:
        self.kb = kb

    def evaluate(self, *, case: Any, response: Any, raw: Any) -> bool:
        return type(response) is QueryResponse and self.kb.returned_it(raw)


def test_an_evaluator_taking_raw_gets_the_very_object_the_kb_returned() -> None:
    kb = RecordingKB()
    got: list[tuple[str, Any, Any]] = []

    def positional(case: Any, response: Any, raw: Any) -> bool:
        got.append(("positional", response, raw))
        return True

    def positional_names(c: Any, r: Any, raw: Any) -> bool:  # called f(case, response, raw)
        got.append(("positional_names", r, raw))
        return True

    def keyword_only(case: Any, response: Any, *, raw: Any) -> bool:
        got.append(("keyword_only", response, raw))
        return True

    async def keywords(*, case: Any, response: Any, raw: Any) -> bool:
        got.append(("keywords", response, raw))
        return True

    def positional_only(case: Any, response: Any, raw: Any, /) -> bool:
        got.append(("positional_only", response, raw))
        return True

    evaluators = [positional, positional_names, keyword_only, keywords, positional_only, RawIsReturned(kb)]
    report = _evaluate(kb, evaluators)
    assert _values(report, "raw_is_returned") == [True] * N_CASES
    assert len(got) == 5 * N_CASES and len(kb.returned) == N_CASES
    for name, response, raw in got:
        assert type(raw) is list and any(raw is obj for obj in kb.returned), name
        assert (
            type(response) is QueryResponse
            and response.results[0].source["document_id"] == raw[0]["source"]["document_id"]
        )


def test_raw_of_a_string_answer_is_the_string() -> None:
    def answer_kb(query: str) -> str:
        return f"answer{_doc_of(query)}"

    def same(case: Any, response: Any, raw: Any) -> bool:
        return raw == response.answer and response.results == ()

    assert _values(_evaluate(answer_kb, [same]), "same") == [True] * N_CASES


def _positional(c: Any, r: Any, raw: Any) -> None: ...
def _keywords_and_raw(case: Any, response: Any, raw: Any) -> None: ...
def _keyword_only(case: Any, response: Any, *, raw: Any = None) -> None: ...
def _keywords(*, case: Any, response: Any, raw: Any) -> None: ...
def _positional_only(case: Any, response: Any, raw: Any, /) -> None: ...
def _fourth_positional_only(c: Any, r: Any, extra: Any, raw: Any, /) -> None: ...
def _fourth(case: Any, response: Any, extra: Any = None, raw: Any = None) -> None: ...
def _second(case: Any, raw: Any) -> None: ...
def _kwargs(case: Any, response: Any, **kwargs: Any) -> None: ...
def _plain(case: Any, response: Any) -> None: ...


@pytest.mark.parametrize(
    ("func", "expected"),
    [
        (_positional, RAW_POSITIONAL),
        (_keywords_and_raw, RAW_KEYWORD),  # called f(case=..., response=..., raw=...)
        (_keyword_only, RAW_KEYWORD),
        (_keywords, RAW_KEYWORD),
        (_positional_only, RAW_POSITIONAL),
        (_fourth, RAW_KEYWORD),
        (_fourth_positional_only, None),  # it could only be given after `extra`
        (_second, None),  # its second positional parameter is the response, whatever its name
        (_kwargs, None),  # **kwargs is not a request for raw
        (_plain, None),
        (len, None),
    ],
)
def test_raw_is_detected_once_when_the_evaluator_is_prepared(func: Any, expected: str | None) -> None:
    evaluator = FunctionEvaluator(func, name="f")
    assert evaluator.raw_as == expected
    assert PreparedEvaluator(evaluator).raw_as == (None if expected is None else RAW_KEYWORD)


def test_objects_taking_raw_are_prepared_to_get_it() -> None:
    class Positional:
        name = "p"

        def score(self, c: Any, r: Any, raw: Any) -> float:
            return 1.0

    class KeywordsAndRaw:
        name = "kr"

        def score(self, case: Any, response: Any, raw: Any) -> float:
            return 1.0

    class Keywords:
        name = "k"

        async def evaluate(self, *, case: Any, response: Any, raw: Any = None) -> float:
            return 1.0

    class Neither:
        name = "n"

        async def evaluate(self, *, case: Any, response: Any, **extra: Any) -> float:
            return 1.0

    assert PreparedEvaluator(Positional()).raw_as == RAW_POSITIONAL
    assert PreparedEvaluator(KeywordsAndRaw()).raw_as == RAW_KEYWORD
    assert PreparedEvaluator(Keywords()).raw_as == RAW_KEYWORD
    assert PreparedEvaluator(Neither()).raw_as is None
    assert PreparedEvaluator(as_evaluator("ndcg@3")).raw_as is None


def test_prepared_evaluator_run_gives_the_response_object_and_raw() -> None:
    raw = list_kb("What is the answer to question 2?")
    response = QueryResponse(mode="m", results=raw)
    case = toy_benchmark(3).cases[2]

    def both(case: Any, response: Any, raw: Any) -> str:
        return f"{response.results[0].source['document_id']} {type(raw).__name__}"

    for evaluator, expected in ((first_document, "d2"), (both, "d2 list"), ("recall@3", 1.0)):
        prepared = PreparedEvaluator(as_evaluator(evaluator))
        assert asyncio.run(prepared.run(case, raw, response.raw)).value == expected
        assert asyncio.run(prepared.run(case, raw, response)).value == expected


def test_a_function_evaluator_called_by_another_runner_without_raw_gets_the_response_as_raw() -> None:
    def both(case: Any, response: Any, raw: Any) -> bool:
        return raw is response

    assert asyncio.run(FunctionEvaluator(both).evaluate(case=None, response="r")) is True


def test_without_heta_a_function_evaluator_gets_heta_nbs_response_and_heta_is_not_imported(tmp_path: Path) -> None:
    code = """
import sys
sys.modules["heta_framework"] = None  # as if it were not installed: any import of it fails
import heta_nb
from runner_support import toy_benchmark
seen = []
def kb(query):
    return [{"id": "a", "text": "t", "source": {"document_id": "d0"}}]
def first(case, response):
    seen.append(type(response).__module__ + "." + type(response).__name__)
    return response.results[0].source["document_id"]
report = heta_nb.evaluate(toy_benchmark(4), kb=kb, knowledge_base_name="k", query_modes=["m"],
                          evaluators=[first], store=None, progress=False)
print(sorted(set(seen)), [r.score("first").value for r in report.case_results])
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "['heta_nb.model.query.QueryResponse'] ['d0', 'd0', 'd0', 'd0']"


# -- a Heta KnowledgeBase: Heta's own objects, as in Heta's runner ------------------------------------


MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


@requires_heta
def test_with_a_heta_kb_heta_and_function_evaluators_get_hetas_own_query_response(tmp_path: Path) -> None:
    from heta_framework.evaluation import AnswerContains
    from heta_framework.kb import QueryResponse as HetaQueryResponse

    seen: list[tuple[str, Any, Any]] = []

    class RecordingContains(AnswerContains):  # a Heta evaluator object
        async def evaluate(self, *, case: Any, response: Any) -> Any:
            seen.append(("heta", response, None))
            return await super().evaluate(case=case, response=response)

    def function(case: Any, response: Any) -> int:
        seen.append(("function", response, None))
        return len(response.results)

    def with_raw(case: Any, response: Any, raw: Any) -> bool:
        seen.append(("with_raw", response, raw))
        return raw is response

    report = heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        recipe=heta_recipe(tmp_path),
        knowledge_base_name="kb",
        evaluators=["evidence_recall@3", RecordingContains(), function, with_raw],
        progress=False,
        lint=False,
        retries=0,
    )
    assert report.error_count == 0 and report.case_results
    n = len(report.case_results)
    assert [name for name, _, _ in seen].count("heta") == n == [name for name, _, _ in seen].count("function")
    for name, response, _ in seen:
        assert type(response) is HetaQueryResponse, name
    assert _values(report, "with_raw") == [True] * n
    assert _values(report, "function") == [len(r.response.results) for r in report.case_results]
    assert all(isinstance(v, bool) for v in _values(report, "answer_contains"))
    by_case: dict[int, list[Any]] = {}
    for _, response, _ in seen:
        by_case.setdefault(id(response), []).append(response)
    assert all(len(group) == 3 for group in by_case.values())  # one response object per case, shared


# -- Dask batches and sweep workers --------------------------------------------------------------------


@pytest.mark.skipif(client is None, reason="needs the [dask] extra")
def test_on_dask_workers_custom_evaluators_get_the_response_object_and_raw(client: Any) -> None:  # noqa: F811
    def evaluators(kb: RecordingKB) -> list[Any]:
        return ["recall@3", first_document, async_first_document, ObjectEvaluator(), RawIsReturned(kb)]

    local_kb, remote_kb = RecordingKB(), RecordingKB()
    local = _evaluate(local_kb, evaluators(local_kb))
    remote = _evaluate(remote_kb, evaluators(remote_kb), executor=client)  # (the KB and its evaluator travel together)
    assert remote_kb.returned == []  # the workers queried their copies
    assert remote.metadata["heta_nb"]["executor"]["kind"] == "dask"
    expected = [_expected_doc(r) for r in remote.case_results]
    for name in ("first_document", "async_first_document", "object_first_document"):
        assert _values(remote, name) == expected == _values(local, name), name
    assert _values(remote, "raw_is_returned") == [True] * N_CASES == _values(local, "raw_is_returned")
    assert dict(remote.score_summary) == dict(local.score_summary)


def test_in_sweep_worker_processes_custom_evaluators_get_the_response_object_and_raw(tmp_path: Path) -> None:
    def list_type(case: Any, response: Any, raw: Any) -> str:
        return type(raw).__name__

    def pid(case: Any, response: Any) -> int:
        return os.getpid()

    board = heta_nb.sweep(
        {"toy": toy_benchmark(N_CASES)},
        kbs={"plain": list_kb},
        store=tmp_path,
        executor="processes",
        max_workers=1,
        query_modes=["keywords"],
        evaluators=["recall@3", first_document, list_type, pid],
        top_k=3,
        progress=False,
    )
    assert board is not None
    report = heta_nb.ReportStore(tmp_path).load("plain", "sweep--toy")
    assert _values(report, "first_document") == [_expected_doc(r) for r in report.case_results]
    assert _values(report, "list_type") == ["list"] * N_CASES
    assert os.getpid() not in _values(report, "pid")  # (scored in a worker process)
