"""Issue 35, items 4 and 5: no escape route from the runner for what user code raises or refuses to do.

The class under test, crossed with every place the runner calls user code (a KB's sync or
async query, a sync or async evaluator, an LLM judge's model, a KB's properties and
``manifest()``):

* any ``BaseException`` that is not an ``Exception`` (here gevent's ``Timeout``, trio's
  ``Cancelled`` and pytest's ``Exit``, by look-alikes) is that case's (or score's) error,
  named by its class, never the end of the run;
* a call that swallows its cancellation and returns anyway is a timeout (a result that
  arrives after its deadline is never a success);
* a call that swallows every cancellation and never ends is a timeout after a short grace,
  and abandoned: the run (and its event loop) still ends;
* a sync KB that sleeps past its deadline is a timeout that says its thread was left running;
* a ``KeyboardInterrupt`` or ``SystemExit`` raised in a task the KB (or a judge's call limiter)
  made, which asyncio re-raises out of the event loop, is that case's (score's) error too;
* a recipe step's ``BaseException`` fails the run with its partial report, as any error outside a case.

Every run is bounded (:func:`bounded`): a hang fails the test instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, call_in_thread, heta_recipe, requires_heta
from hostile_exits import RAISED, GeventTimeout, HostileAttributeKB
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.llm_judges.standin import standin_answer
from heta_nb.runner.errors import RunError, RunFailedError

pytestmark = [
    pytest.mark.hostile,
    # A coroutine that swallows even the GeneratorExit of close() cannot be closed: Python says so when it is collected.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <coroutine object _swallow_everything:pytest.PytestUnraisableExceptionWarning"
    ),
]

BOUND_S = 40.0
"""Wall-clock bound of one run (each takes a few seconds; a hang was forever)."""
TIMEOUT_S = 0.3
MODES = ["good", "poor"]
FAILING = ("c001", "c004")
LIGHTHOUSE = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}
"""The cases whose query (or score) misbehaves, of a 6-case toy benchmark."""


def bounded(call: Callable[[], Any], limit: float = BOUND_S) -> Any:
    """``call()`` on a thread of its own, failing the test when it is not back within ``limit`` seconds."""
    thread, outcome = call_in_thread(call, limit)
    if thread.is_alive():
        pytest.fail(f"the run did not end within {limit:g} s (it hangs)")
    error = outcome.get("error")
    if isinstance(error, Exception):
        raise error
    if error is not None:  # (re-raised as it is, a KeyboardInterrupt would stop the whole session)
        raise AssertionError(f"the run raised {type(error).__name__}: {error}") from error
    return outcome["value"]


def _failing_query(query: str) -> bool:
    return query.endswith(("1?", "4?"))  # cases c001 and c004


# -- what misbehaving code does --------------------------------------------------------------


async def _swallow_then_return(value: Any) -> Any:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        pass  # swallowed
    return value


async def _swallow_forever() -> Any:
    while True:
        try:
            await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            pass  # swallowed, every time


async def _swallow_everything_forever() -> Any:
    while True:
        try:
            await asyncio.sleep(0.02)
        except BaseException:  # noqa: BLE001, S110 - even the GeneratorExit of close()
            pass


def _kb(site: str, behaviour: str) -> Any:
    if site == "sync":

        def kb(query: str, *, mode: str, top_k: int) -> Any:
            if _failing_query(query):
                if behaviour in RAISED:
                    raise RAISED[behaviour]()
                time.sleep(TIMEOUT_S * 4)  # "sleep past the deadline"
            return exact_kb(query, mode=mode, top_k=top_k)

        return kb

    async def async_kb(query: str, *, mode: str, top_k: int) -> Any:
        await asyncio.sleep(0)
        answer = exact_kb(query, mode=mode, top_k=top_k)
        if _failing_query(query):
            if behaviour in RAISED:
                raise RAISED[behaviour]()
            if behaviour == "swallow then return":
                return await _swallow_then_return(answer)
            if behaviour == "swallow forever":
                return await _swallow_forever()
            return await _swallow_everything_forever()
        return answer

    return async_kb


def _evaluator(site: str, behaviour: str) -> Any:
    if site == "sync":

        def hostile(case: Any, response: Any) -> float:
            if case.case_id in FAILING:
                raise RAISED[behaviour]()
            return 1.0

        return hostile

    async def hostile_async(case: Any, response: Any) -> float:
        await asyncio.sleep(0)
        if case.case_id in FAILING:
            if behaviour in RAISED:
                raise RAISED[behaviour]()
            if behaviour == "swallow then return":
                return float(await _swallow_then_return(1.0))
            return float(await _swallow_forever())
        return 1.0

    return hostile_async


def _run(**settings: Any) -> Any:
    settings.setdefault("kb", exact_kb)
    return heta_nb.evaluate(
        toy_benchmark(6),
        query_modes=MODES,
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        concurrency=3,
        timeout_s=TIMEOUT_S,
        retries=0,
        **settings,
    )


def _complete(report: Any, modes: list[str] = MODES) -> None:
    """The run completed, with every case × mode, in Heta's order."""
    assert report.metadata["heta_nb"]["status"] == "complete"
    assert [(r.case_id, r.query_mode) for r in report.case_results] == [
        (f"c{i:03d}", m) for i in range(6) for m in modes
    ]


def _no_loop_complaints(caplog: pytest.LogCaptureFixture) -> None:
    """asyncio logged nothing: no "Task exception was never retrieved", no "Task was destroyed but it is pending"."""
    complaints = [r.getMessage() for r in caplog.records if r.name == "asyncio" and r.levelname == "ERROR"]
    assert not complaints, complaints


def _expected_error(behaviour: str) -> tuple[str, str]:
    """The error type and a part of its message for ``behaviour``."""
    if behaviour in RAISED:
        return behaviour, str(RAISED[behaviour]())
    if behaviour == "sleep past the deadline":
        return "TimeoutError", "thread could not be stopped"
    if behaviour == "swallow then return":
        return "TimeoutError", "swallowed its cancellation"
    return "TimeoutError", "abandoned"


# -- 1. the KB's query -----------------------------------------------------------------------

KB_CASES = [("sync", b) for b in [*RAISED, "sleep past the deadline"]] + [
    ("async", b) for b in [*RAISED, "swallow then return", "swallow forever", "swallow everything forever"]
]


@pytest.mark.parametrize(("site", "behaviour"), KB_CASES, ids=[f"{s} KB-{b}" for s, b in KB_CASES])
def test_a_kb_query_that_raises_a_base_exception_or_will_not_stop_is_that_cases_error(
    site: str, behaviour: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: a BaseException subclass ended the run; a swallowed cancellation was a success at
    9.8 s with ``timeout_s=1``; a KB that never stopped hung the run."""
    report = bounded(lambda: _run(kb=_kb(site, behaviour), evaluators=["recall@3"]))
    _no_loop_complaints(caplog)
    _complete(report)
    error_type, message = _expected_error(behaviour)
    for result in report.case_results:
        if result.case_id in FAILING:
            assert result.error is not None and result.response is None and result.scores == ()
            assert result.error.error_type == error_type and message in result.error.message, result.error
        else:
            assert result.error is None and result.scores[0].value != "error"
            assert result.metadata["heta_nb"]["query_ms"] <= TIMEOUT_S * 1000  # no success after its deadline


# -- 2. the evaluators -----------------------------------------------------------------------

EVALUATOR_CASES = [("sync", b) for b in RAISED] + [
    ("async", b) for b in [*RAISED, "swallow then return", "swallow forever"]
]


@pytest.mark.parametrize(("site", "behaviour"), EVALUATOR_CASES, ids=[f"{s} evaluator-{b}" for s, b in EVALUATOR_CASES])
def test_an_evaluator_that_raises_a_base_exception_or_will_not_stop_is_that_scores_error(
    site: str, behaviour: str, caplog: pytest.LogCaptureFixture
) -> None:
    report = bounded(lambda: _run(evaluators=["recall@3", _evaluator(site, behaviour)]))
    _no_loop_complaints(caplog)
    _complete(report)
    assert report.error_count == 0  # the responses are kept
    error_type, message = _expected_error(behaviour)
    for result in report.case_results:
        recall, hostile = result.scores
        assert recall.value != "error" and result.response is not None
        if result.case_id in FAILING:
            assert hostile.value == "error" and hostile.metadata["error"]["type"] == error_type, hostile
            assert message in hostile.metadata["error"]["message"]
            assert list(result.metadata["heta_nb"]["evaluator_errors"]) == [hostile.name]
        else:
            assert hostile.value == 1.0


# -- 3. an LLM judge's model -----------------------------------------------------------------


def _model(site: str, behaviour: str) -> Any:
    def judge_model(prompt: str, *, system: str) -> str:
        if "question 1?" in prompt or "question 4?" in prompt:
            raise RAISED[behaviour]()
        return standin_answer(system, prompt)

    async def async_judge_model(prompt: str, *, system: str) -> str:
        await asyncio.sleep(0)
        return judge_model(prompt, system=system)

    return judge_model if site == "sync" else async_judge_model


JUDGE_CASES = [(s, b) for s in ("sync", "async") for b in RAISED]


@pytest.mark.parametrize(("site", "behaviour"), JUDGE_CASES, ids=[f"{s} judge model-{b}" for s, b in JUDGE_CASES])
def test_a_judge_model_that_raises_a_base_exception_is_that_scores_error(site: str, behaviour: str) -> None:
    report = bounded(
        lambda: heta_nb.evaluate(
            toy_benchmark(6),
            kb=exact_kb,
            evaluators=["answer_relevance"],
            judge_model=_model(site, behaviour),
            judge_cache=None,
            query_modes=["good"],
            knowledge_base_name="toy kb",
            store=None,
            progress=False,
            timeout_s=5,
        )
    )
    _complete(report, ["good"])
    assert report.error_count == 0
    for result in report.case_results:
        (judged,) = result.scores
        if result.case_id in FAILING:
            assert judged.value == "error" and judged.metadata["error"]["type"] == behaviour, judged
            assert str(RAISED[behaviour]()) in judged.metadata["error"]["message"]
        else:
            assert judged.value != "error"


# -- 4. the KB's properties and manifest() ---------------------------------------------------


PROPERTY_CASES = [(a, b) for a in ("name", "available_queries") for b in RAISED]


@pytest.mark.parametrize(("attribute", "behaviour"), PROPERTY_CASES, ids=[f"{a}-{b}" for a, b in PROPERTY_CASES])
def test_a_kb_property_that_raises_a_base_exception_is_named_before_the_run(attribute: str, behaviour: str) -> None:
    """Before: it escaped raw from ``evaluate()``. A property is read before any case: a ``RunError``."""
    with pytest.raises(RunError) as info:
        bounded(
            lambda: heta_nb.evaluate(
                toy_benchmark(2), kb=HostileAttributeKB(attribute, RAISED[behaviour]), store=None, progress=False
            )
        )
    message = str(info.value)
    assert f"reading its attribute {attribute!r} raised {behaviour}: {RAISED[behaviour]()}" in message


def test_a_keyboard_interrupt_from_the_kbs_name_is_the_kbs_off_the_main_thread_and_the_users_on_it() -> None:
    """The runner's choice (see :func:`heta_nb.runner.interrupts.users_interrupt`).

    ``name`` is read when the run is set up, before it watches for the user's Ctrl-C. Off the
    main thread a ``KeyboardInterrupt`` cannot be the user's (Python delivers SIGINT on the
    main thread): it is a ``RunError`` naming it. On the main thread the runner cannot tell it
    from the user's Ctrl-C, so it propagates as it is, as a Ctrl-C pressed then would: the run
    has not started, no report is being built.
    """
    kb = HostileAttributeKB("name", lambda: KeyboardInterrupt("raised by the KB's name"))
    with pytest.raises(RunError, match="reading its attribute 'name' raised KeyboardInterrupt"):
        bounded(lambda: heta_nb.evaluate(toy_benchmark(2), kb=kb, store=None, progress=False))
    assert threading.current_thread() is threading.main_thread()
    with pytest.raises(KeyboardInterrupt, match="raised by the KB's name"):
        heta_nb.evaluate(toy_benchmark(2), kb=kb, store=None, progress=False)


@pytest.mark.parametrize("behaviour", [*RAISED, "KeyboardInterrupt"])
def test_a_manifest_that_raises_anything_gives_a_stub_and_the_run_its_report(behaviour: str) -> None:
    """``manifest()`` is read while the report is built (on the run's thread: never the user's Ctrl-C)."""
    raised = RAISED.get(behaviour) or (lambda: KeyboardInterrupt("from manifest()"))
    report = bounded(lambda: _run(kb=HostileAttributeKB("manifest", raised), evaluators=["recall@3"]))
    _complete(report)
    assert dict(report.knowledge_base_manifest) == {"name": "hostile kb", "kind": "HostileAttributeKB"}  # (its stub)
    assert report.error_count == 0


# -- 5. evaluate_async on the caller's loop: the loop still ends ------------------------------


@pytest.mark.parametrize("behaviour", ["swallow forever", "swallow everything forever"])
def test_an_abandoned_call_does_not_hold_up_the_end_of_asyncio_run(behaviour: str) -> None:
    """``asyncio.run`` cancels and awaits every task left at its end: an abandoned call that
    swallows every cancellation would hold it forever."""

    async def main() -> Any:
        return await heta_nb.evaluate_async(
            toy_benchmark(6),
            kb=_kb("async", behaviour),
            query_modes=["good"],
            knowledge_base_name="toy kb",
            store=None,
            progress=False,
            timeout_s=TIMEOUT_S,
            retries=0,
        )

    report = bounded(lambda: asyncio.run(main()))
    _complete(report, ["good"])
    assert {r.case_id: r.error.error_type for r in report.case_results if r.error} == dict.fromkeys(
        FAILING, "TimeoutError"
    )


def test_the_grace_is_short() -> None:
    """The time a cancelled call has before it is abandoned is added to each such case."""
    from heta_nb.runner.user_calls import GRACE_S

    assert 0 < GRACE_S <= 1


# -- 6. a recipe step: the run fails with its report, the exception named ----------------------


@requires_heta
def test_a_recipe_step_that_raises_a_base_exception_fails_the_run_with_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Heta's builder records a step's ``Exception`` as a failed build; a ``BaseException`` passes
    through it. Before, it escaped raw from ``evaluate()``; now the run fails as on any error outside
    a case: ``RunFailedError``, the partial report (status ``failed``) naming it."""
    from heta_framework.kb import SplitDocuments

    async def step(self: Any, context: Any) -> None:
        raise GeventTimeout("in a recipe step")

    monkeypatch.setattr(SplitDocuments, "run", step)
    with pytest.raises(RunFailedError) as info:
        bounded(
            lambda: heta_nb.evaluate(
                heta_nb.load_benchmark(FIXTURES, manifest=LIGHTHOUSE),
                recipe=heta_recipe(tmp_path),
                knowledge_base_name="kb",
                evaluators=["evidence_recall@3"],
                store=None,
                progress=False,
                lint=False,
            )
        )
    assert "GeventTimeout: in a recipe step" in str(info.value)
    info_ = info.value.report.metadata["heta_nb"]
    assert info_["status"] == "failed" and "GeventTimeout: in a recipe step" in info_["failure"]


# -- 7. in a task the user code made: KeyboardInterrupt and SystemExit stop asyncio's loop itself --

EXITS_IN_TASKS: dict[str, Callable[[], BaseException]] = {
    **RAISED,
    "KeyboardInterrupt": lambda: KeyboardInterrupt("raised in the KB's own task"),
    "SystemExit": lambda: SystemExit("sys.exit() in the KB's own task"),
}


def _kb_with_tasks(behaviour: str, how: str) -> Any:
    async def part(query: str) -> None:
        await asyncio.sleep(0)
        if _failing_query(query):
            raise EXITS_IN_TASKS[behaviour]()

    async def kb(query: str, *, mode: str, top_k: int) -> Any:
        if how == "gather":
            await asyncio.gather(part(query), asyncio.sleep(0.001))
        elif how == "wait_for":  # (a task of its own on Python 3.11)
            await asyncio.wait_for(part(query), 5)
        else:
            await asyncio.create_task(part(query))
        return exact_kb(query, mode=mode, top_k=top_k)

    return kb


TASK_CASES = [(b, h) for b in EXITS_IN_TASKS for h in ("gather", "wait_for", "create_task")]


@pytest.mark.parametrize(("behaviour", "how"), TASK_CASES, ids=[f"{b}-{h}" for b, h in TASK_CASES])
def test_an_exit_raised_in_a_task_of_the_kbs_own_is_that_cases_error(behaviour: str, how: str) -> None:
    """asyncio re-raises a ``KeyboardInterrupt`` or ``SystemExit`` from a task's step, out of the event
    loop: raised in a task the KB made, it ended the run (the others reach the KB's ``await`` as they are)."""
    report = bounded(lambda: _run(kb=_kb_with_tasks(behaviour, how), evaluators=["recall@3"]))
    _complete(report)
    for result in report.case_results:
        if result.case_id in FAILING:
            assert result.error is not None and result.error.error_type == behaviour, result.error
            assert str(EXITS_IN_TASKS[behaviour]()) in result.error.message
        else:
            assert result.error is None


@pytest.mark.parametrize("site", ["sync", "async"])
@pytest.mark.parametrize("behaviour", ["KeyboardInterrupt", "SystemExit"])
def test_a_judge_model_that_raises_an_exit_is_that_scores_error(site: str, behaviour: str) -> None:
    """The judge's call limiter awaits the model through ``asyncio.wait_for``: a task of its own (3.11)."""
    raised = EXITS_IN_TASKS[behaviour]

    def model(prompt: str, *, system: str) -> str:
        if "question 1?" in prompt or "question 4?" in prompt:
            raise raised()
        return standin_answer(system, prompt)

    async def async_model(prompt: str, *, system: str) -> str:
        await asyncio.sleep(0)
        return model(prompt, system=system)

    report = bounded(
        lambda: heta_nb.evaluate(
            toy_benchmark(6),
            kb=exact_kb,
            evaluators=["answer_relevance"],
            judge_model=model if site == "sync" else async_model,
            judge_cache=None,
            query_modes=["good"],
            knowledge_base_name="toy kb",
            store=None,
            progress=False,
        )
    )
    _complete(report, ["good"])
    for result in report.case_results:
        (judged,) = result.scores
        failed = judged.value == "error" and judged.metadata["error"]["type"] == behaviour
        assert failed == (result.case_id in FAILING), judged


# -- a judge's model call that ignores its own time limit -------------------------------------------


@pytest.mark.hostile
@pytest.mark.parametrize("how", ["returns", "forever"])
def test_a_judge_model_call_that_swallows_its_cancellation_times_out(how: str) -> None:
    """The judges' CallLimiter bounds a model call by judge_limits.timeout_s even when the call
    swallows its cancellation (asyncio.wait_for waited for it: forever, or for its late answer)."""
    from heta_nb.llm_judges.limits import CallLimiter, JudgeLimits
    from heta_nb.llm_judges.models import ModelCallError

    async def stubborn() -> str:
        while True:
            try:
                await asyncio.sleep(0.6)
                return "late answer"
            except asyncio.CancelledError:
                if how == "returns":
                    await asyncio.sleep(0.05)
                    return "late answer"

    async def scenario() -> BaseException | str:
        limiter = CallLimiter(JudgeLimits(timeout_s=0.2, retries=2, backoff_s=0.0))
        try:
            return await limiter.call(stubborn, prompt_chars=10)
        except ModelCallError as exc:
            return exc

    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(asyncio.run(scenario())), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the judge's model call held the run past its time limit"
    (outcome,) = box
    assert isinstance(outcome, ModelCallError), outcome
    assert "timed out after 0.2 s" in str(outcome)
    expected = "swallowed its cancellation" if how == "returns" else "abandoned"
    assert expected in str(outcome) and "tries" not in str(outcome)  # not retried: it would pile up
    assert time.monotonic() - started < 3
