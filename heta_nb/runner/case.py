"""One case × mode: the query (timeout, retries, backoff), then its scores, as a result's JSON object.

Whatever the KB's or an evaluator's code raises is recorded there, any ``BaseException`` too
(except the user's own Ctrl-C); their awaitables go through :class:`~.user_calls.UserCalls`,
which keeps a call that will not stop from holding the run.

The runner's hot path: with a fast KB this is most of its cost per case.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import traceback
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

from heta_nb._util.text import describe_error, shorten
from heta_nb.evaluators import KEYWORDS, NATIVE, PreparedEvaluator, score_data
from heta_nb.evaluators.adapters import evaluator_response
from heta_nb.runner.config import RunConfig
from heta_nb.runner.deadlines import SUPPORTED, Deadlines
from heta_nb.runner.kb import ExitRaised, InvalidResponseError, normalize_response_data
from heta_nb.runner.stalls import blocked_message, blocked_seconds
from heta_nb.runner.user_calls import CallTimeout, UserCalls

__all__ = ["CURRENT_CASE", "EXITS", "CaseRunner", "error_data", "error_score", "lost_case_result"]

CURRENT_CASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("heta_nb_current_case", default=None)
"""The case id whose query is running (an async KB reads it: :func:`heta_nb.rescore` replays by case)."""

_STRAY_CANCEL = "the {} raised CancelledError, but nothing cancelled this run ({})"
EXITS = (KeyboardInterrupt, SystemExit, GeneratorExit)
"""What may leave :meth:`CaseRunner.run` although KB or evaluator code raised it (see
:meth:`CaseRunner.callee_exit`). Any other ``BaseException`` user code raises (gevent's
``Timeout``, trio's ``Cancelled``...) is recorded there as that case's (or score's) error."""
_KB_FIX = "run blocking code in a thread (asyncio.to_thread) or make `query` a plain function"
_EVALUATOR_FIX = "run blocking code in a thread (asyncio.to_thread) or keep the evaluator's work short"


def lost_case_result(
    error: dict[str, Any], unit_id: str, kb_name: str, case_index: int, case: Any, mode: str
) -> dict[str, Any]:
    """The result of a case whose run ended before any response or score (an exit from user code,
    a worker that died): ``error`` (:func:`error_data`), no latency measured."""
    return {
        "case_id": case.case_id,
        "query": case.query,
        "query_mode": mode,
        "scores": [],
        "response": None,
        "latency_ms": 0.0,
        "error": error,
        "metadata": {
            "benchmark_run_unit": unit_id,
            "knowledge_base_name": kb_name,
            "heta_nb": {"case_index": case_index, "attempts": 1, "latency_unknown": True},
        },
    }


class CaseRunner:
    """Queries and scores one case × mode at a time with one run's settings.

    Args:
        config: the run's settings (timeouts, retries, backoff, retry classes).
        evaluators: the run's evaluators, called directly (see :class:`PreparedEvaluator`).
        cancelled: whether the run was cancelled (a ``CancelledError`` is then the run's).
        interrupted: whether the user pressed Ctrl-C during the run (a ``KeyboardInterrupt``
            is then the user's, not the KB's: see :mod:`heta_nb.runner.interrupts`).
        warn: records a run warning (``code``, ``message``).
    """

    def __init__(
        self,
        config: RunConfig,
        evaluators: Sequence[PreparedEvaluator],
        cancelled: Callable[[], bool],
        *,
        interrupted: Callable[[], bool] = lambda: False,
        warn: Callable[[str, str], None] | None = None,
    ) -> None:
        self.config = config
        self.evaluators = list(evaluators)
        self._cancelled = cancelled
        self._interrupted = interrupted
        self._warn = warn
        self._warned_blocked = False
        timeout, evaluator_timeout = config.timeout_s, config.evaluator_timeout
        self.deadlines = Deadlines(
            timeout,
            evaluator_timeout,
            monitor=True,
            warn=None if warn is None else lambda message: warn("loop_monitor", message),
        )
        """The watchdog that keeps the timeouts (Python 3.11+) and watches the event loop; the engine starts it."""
        self.calls = UserCalls(self.deadlines.stalls)
        """Runs the KB's and the evaluators' awaitables, each in a task of its own (see :mod:`.user_calls`)."""
        self._query_timeout = float(timeout) if timeout is not None and SUPPORTED else None
        self._evaluator_timeout = evaluator_timeout if SUPPORTED else None
        self._wait_for = float(timeout) if timeout is not None and not SUPPORTED else None
        """The query timeout through ``asyncio.wait_for`` instead (Python 3.10)."""
        self._evaluator_wait_for = evaluator_timeout if not SUPPORTED else None
        self.query_slots: asyncio.Semaphore | None = None
        """With LLM judges, the engine runs more workers than ``concurrency`` and this keeps the KB's
        queries to ``concurrency`` at once: a case being judged does not hold up the next queries."""

    async def run(
        self,
        task: Any,
        query: Callable[[str], Any],
        unit_id: str,
        kb_name: str,
        case_index: int,
        case: Any,
        mode: str,
    ) -> tuple[dict[str, Any], Any]:
        """Query, score and describe one case × mode.

        The hot path: it calls evaluators directly, keeps the deadline bookkeeping
        inline and builds each object once.

        Returns:
            The result's JSON object (not yet encoded) and what the KB returned.
        """
        c = self.config
        deadlines = self.deadlines
        if perf_counter() - deadlines.beat > deadlines.tick:  # the watchdog is due: let it beat first
            await deadlines.let_beat()  # (a KB whose queries never suspend would hold the loop case after case)
        CURRENT_CASE.set(case.case_id)
        due, late, stalls = deadlines.due, deadlines.late, deadlines.stalls
        timeout_s = self._query_timeout
        calls = self.calls
        started = perf_counter()
        attempts = 0
        raw: Any = None
        response: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        slots = self.query_slots
        if slots is not None:  # (judges run: a query slot is held for the query only, not the scoring)
            await slots.acquire()
        try:
            while True:
                attempts += 1
                retryable = False
                if timeout_s is not None:
                    due[task] = perf_counter() + timeout_s
                try:
                    raw = await calls.run(query(case.query), task, self._wait_for)
                    response = normalize_response_data(raw, mode, safe=False)
                except asyncio.CancelledError as exc:
                    if deadlines.expired(task):
                        retryable = True
                        error = _timeout_error(c.timeout_s, attempts, note=calls.note(task))
                    elif self._cancelled() or _cancel_requested(task):
                        raise
                    else:  # the KB raised it itself (say, awaiting a task of its own that was cancelled)
                        error = error_data(
                            "CancelledError",
                            _STRAY_CANCEL.format("knowledge base", describe_error(exc)),
                            False,
                            attempts,
                            exc,
                        )
                except asyncio.TimeoutError:  # Python 3.10's timeout (CallTimeout), or raised by the KB itself
                    retryable = True
                    error = _timeout_error(c.timeout_s, attempts, note=calls.note(task))
                except InvalidResponseError as exc:
                    error = error_data(type(exc).__name__, describe_error(exc), False, attempts, exc)
                except Exception as exc:  # noqa: BLE001 - any KB failure is this case's error
                    cause = self._escaped(exc)
                    retryable = getattr(cause, "retryable", False) is True or isinstance(cause, c.retry_types)
                    error = error_data(
                        type(cause).__name__, _described(cause, "knowledge base"), retryable, attempts, cause
                    )
                except BaseException as exc:  # raised by the call itself: sys.exit(), gevent's Timeout...
                    self._reraise_unless_raised_here(exc)
                    error = error_data(type(exc).__name__, _described(exc, "knowledge base"), False, attempts, exc)
                finally:
                    if timeout_s is not None:  # Deadlines.disarm, inline
                        due.pop(task, None)
                        if late and deadlines.settle(task) and response is not None:  # (a swallowed timeout)
                            response, retryable = None, True
                            error = _timeout_error(c.timeout_s, attempts)
                if stalls:
                    record = stalls.pop(task, None)
                    if record is not None:
                        blocked = blocked_seconds(record, perf_counter(), deadlines.monitor_interval)
                        if self._blocked_query(blocked, case, mode):
                            response = None
                            error = _timeout_error(c.timeout_s, attempts, blocked)
                            break
                if response is not None:
                    error = None
                    break
                if retryable and attempts <= c.retries:
                    await asyncio.sleep(c.backoff_s * (2 ** (attempts - 1)))
                    continue
                break
        finally:
            if slots is not None:
                slots.release()
        query_ms = round((perf_counter() - started) * 1000, 3)  # (rounded as Heta rounds a latency)
        scores: list[dict[str, Any]] = []
        failed_evaluators: list[str] | None = None
        if response is not None:
            evaluator_timeout = self._evaluator_timeout
            given: Any = None  # what the other evaluators get: made once, by the first that needs it
            for evaluator in self.evaluators:
                failed = False
                try:
                    convention = evaluator.convention
                    if convention is NATIVE:  # a built-in: its score's JSON object, as it is
                        data = evaluator.fn(case, response)
                    else:
                        if given is None:  # Heta's QueryResponse as returned, else heta_nb's of `response`
                            given = evaluator_response(raw, response)
                        if evaluator.raw_as is not None:  # it also takes what the KB returned
                            outcome = evaluator.invoke(case, given, raw)
                        elif convention is KEYWORDS:
                            outcome = evaluator.fn(case=case, response=given)
                        else:
                            outcome = evaluator.fn(case, given)
                        if evaluator.is_async or inspect.isawaitable(outcome):
                            if evaluator_timeout is not None and not evaluator.own_deadline:
                                due[task] = perf_counter() + evaluator_timeout
                                try:
                                    outcome = await calls.run(outcome, task)
                                finally:
                                    due.pop(task, None)  # (a late cancellation is settled below)
                            else:  # (Python 3.10: its own timeout)
                                wait = None if evaluator.own_deadline else self._evaluator_wait_for
                                outcome = await calls.run(outcome, task, wait)
                        data = score_data(outcome, evaluator.name)
                        if data["name"] != evaluator.name and self._collides(data["name"], scores):
                            raise ValueError(
                                f"it returned a score named {data['name']!r}, a name another evaluator's scores have"
                            )
                except asyncio.CancelledError as exc:
                    failed = True
                    if deadlines.expired(task):
                        data = error_score(evaluator.name, "TimeoutError", self._evaluator_timeout_text(note=task))
                    elif self._cancelled() or _cancel_requested(task):
                        raise
                    else:
                        message = _STRAY_CANCEL.format("evaluator", describe_error(exc))
                        data = error_score(evaluator.name, "CancelledError", message)
                except CallTimeout:  # Python 3.10
                    failed = True
                    data = error_score(evaluator.name, "TimeoutError", self._evaluator_timeout_text(note=task))
                except Exception as exc:  # noqa: BLE001 - recorded in the score, response kept
                    failed = True
                    cause = self._escaped(exc)
                    data = error_score(evaluator.name, type(cause).__name__, _described(cause, "evaluator", ""))
                    judged = getattr(cause, "score_metadata", None)  # (an LLM judge's raw answers, model, usage)
                    if type(judged) is dict:
                        data["metadata"].update({k: v for k, v in judged.items() if k != "error"})
                except BaseException as exc:  # sys.exit() or gevent's Timeout in evaluator code, say
                    failed = True
                    self._reraise_unless_raised_here(exc)
                    data = error_score(evaluator.name, type(exc).__name__, _described(exc, "evaluator"))
                if late and deadlines.settle(task) and not failed:  # a timeout's cancellation, swallowed
                    failed = True
                    data = error_score(evaluator.name, "TimeoutError", self._evaluator_timeout_text())
                if stalls:
                    record = stalls.pop(task, None)
                    if record is not None:
                        blocked = blocked_seconds(record, perf_counter(), deadlines.monitor_interval)
                        if self._blocked_evaluator(evaluator.name, blocked, case, mode):
                            failed = True
                            data = error_score(evaluator.name, "TimeoutError", self._evaluator_timeout_text(blocked))
                if failed:
                    if failed_evaluators is None:
                        failed_evaluators = []
                    failed_evaluators.append(evaluator.name)
                scores.append(data)
        latency_ms = round((perf_counter() - started) * 1000, 3)
        extra: dict[str, Any] = {"case_index": case_index, "query_ms": query_ms, "attempts": attempts}
        if failed_evaluators:
            extra["evaluator_errors"] = failed_evaluators
        return {
            "case_id": case.case_id,
            "query": case.query,
            "query_mode": mode,
            "scores": scores,
            "response": response,
            "latency_ms": latency_ms,
            "error": error,
            "metadata": {"benchmark_run_unit": unit_id, "knowledge_base_name": kb_name, "heta_nb": extra},
        }, raw

    def _collides(self, name: str, scores: list[dict[str, Any]]) -> bool:
        """Whether a score named ``name`` (not its evaluator's name) would be a second one of that name.

        Two scores of one name in a case would be averaged together by the summary.
        """
        return any(e.name == name for e in self.evaluators) or any(s["name"] == name for s in scores)

    def _reraise_unless_raised_here(self, exc: BaseException) -> None:
        """Re-raise a ``KeyboardInterrupt``, ``SystemExit`` or ``GeneratorExit`` this frame must not record.

        Two are not the callee's to record here: the user's Ctrl-C (the engine's SIGINT
        handler counted it, see :mod:`heta_nb.runner.interrupts`), and a ``GeneratorExit``
        that ``close()`` threw into this very coroutine (its traceback starts here; one
        the KB raised has the KB's frames after this one). That close is either the
        garbage collector's, or asyncio delivering a ``GeneratorExit`` that a future the
        KB awaited failed with (``coro.throw`` closes the awaiting coroutines first): the
        engine's worker, which receives the original next, tells them apart
        (:meth:`callee_exit`) and records the case.
        """
        if isinstance(exc, KeyboardInterrupt) and self._interrupted():
            raise exc
        if isinstance(exc, GeneratorExit) and (exc.__traceback__ is None or exc.__traceback__.tb_next is None):
            raise exc

    def callee_exit(self, exc: BaseException, task: Any) -> bool:
        """Whether an exit that left :meth:`run` in worker ``task`` came from KB or evaluator code.

        False for the user's Ctrl-C, and for a ``GeneratorExit`` closing ``task``'s
        coroutine from outside its step (the garbage collector): both must propagate.
        """
        if isinstance(exc, KeyboardInterrupt) and self._interrupted():
            return False
        if isinstance(exc, GeneratorExit):  # asyncio threw it in (a future failed with it), or a close
            return _current_task() is task
        return True

    def exit_result(
        self, exc: BaseException, unit_id: str, kb_name: str, case_index: int, case: Any, mode: str
    ) -> dict[str, Any]:
        """The result of a case whose :meth:`run` ended with ``exc`` from KB or evaluator code."""
        error = error_data(type(exc).__name__, describe_error(exc) or type(exc).__name__, False, 1, exc)
        return lost_case_result(error, unit_id, kb_name, case_index, case, mode)

    def _escaped(self, exc: Exception) -> BaseException:
        """The exit an :class:`ExitRaised` carries (a pool thread's, or a Python 3.10 guard's), else ``exc``.

        A ``KeyboardInterrupt`` from a pool thread is the KB's even after the user's Ctrl-C
        (whose handler runs on the main thread); one a guard caught on the main thread may be the user's.
        """
        if isinstance(exc, ExitRaised):
            if isinstance(exc.original, KeyboardInterrupt) and not exc.in_thread and self._interrupted():
                raise exc.original
            return exc.original
        return exc

    def _warn_blocked(self, message: str) -> None:
        """Warn about a blocked event loop, once per run."""
        if not self._warned_blocked and self._warn is not None:
            self._warned_blocked = True
            self._warn("blocked_event_loop", message)

    def _blocked_query(self, blocked: float, case: Any, mode: str) -> bool:
        """The KB's query blocked the loop for ``blocked`` seconds: warn, and say whether that is a timeout.

        A record shorter than :attr:`Deadlines.stall_s` is not a block of this call: the monitor
        saw this task run just after the one that blocked, before the loop's next heartbeat.
        """
        if blocked < self.deadlines.stall_s:
            return False
        self._warn_blocked(
            blocked_message("the KB", blocked, _KB_FIX)
            + f" (case {shorten(case.case_id, 60)!r}, mode {mode!r}; no other query, timeout or progress update"
            " ran meanwhile; a query that blocks longer than its timeout is recorded as a timeout)"
        )
        timeout = self.config.timeout_s
        return timeout is not None and blocked > timeout

    def _blocked_evaluator(self, name: str, blocked: float, case: Any, mode: str) -> bool:
        """Evaluator ``name`` blocked the loop for ``blocked`` seconds: warn, and say whether that is a timeout."""
        if blocked < self.deadlines.stall_s:  # (see _blocked_query)
            return False
        self._warn_blocked(
            blocked_message(f"evaluator {name!r}", blocked, _EVALUATOR_FIX)
            + f" (case {shorten(case.case_id, 60)!r}, mode {mode!r})"
        )
        limit = self.config.evaluator_timeout
        return limit is not None and blocked > limit

    def _evaluator_timeout_text(self, blocked: float | None = None, *, note: Any = None) -> str:
        """An evaluator's timeout; ``note``: its worker, whose call's fate is added (:meth:`UserCalls.note`)."""
        text = f"evaluator did not finish within {self.config.evaluator_timeout:g} s (evaluator_timeout_s)"
        if blocked is not None:
            text += ": " + blocked_message("it", blocked, _EVALUATOR_FIX)
        if note is not None:
            text += self.calls.note(note)
        return text


def _current_task() -> Any:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None


def _described(exc: BaseException, callee: str, empty: str | None = None) -> str:
    """An error's message: a ``CancelledError`` the callee raised unasked says so; an empty one is
    its class name (``empty``: ``""`` instead, for a score)."""
    if isinstance(exc, asyncio.CancelledError):
        return _STRAY_CANCEL.format(callee, describe_error(exc))
    return describe_error(exc) or (type(exc).__name__ if empty is None else empty)


def _cancel_requested(task: Any) -> bool:
    """Whether someone asked ``task`` to stop (always assumed on Python 3.10, which cannot tell)."""
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


def _timeout_error(
    timeout_s: float | None, attempts: int, blocked: float | None = None, *, note: str = ""
) -> dict[str, Any]:
    """A query's timeout; one whose KB blocked the event loop (for ``blocked`` seconds) says so, and is not retried.

    ``note``: what became of the call (:meth:`UserCalls.note`), appended.
    """
    message = f"query did not finish within {timeout_s:g} s{note}"
    if blocked is None:
        return error_data("TimeoutError", message, True, attempts)
    error = error_data("TimeoutError", f"{message}: {blocked_message('the KB', blocked, _KB_FIX)}", False, attempts)
    error["metadata"]["blocked_loop_s"] = round(blocked, 3)
    return error


def error_score(name: Any, error_type: str, message: str) -> dict[str, Any]:
    """The score of an evaluator that failed: value ``"error"``, the cause in ``metadata.error``."""
    return {
        "name": name,
        "value": "error",
        "passed": None,
        "metadata": {"error": {"type": error_type, "message": message[:2000]}},
    }


def error_data(
    error_type: str, message: str, retryable: bool, attempts: int, exc: BaseException | None = None
) -> dict[str, Any]:
    """A result's ``error`` object (Heta's fields; attempts and the traceback's end in ``metadata``)."""
    metadata: dict[str, Any] = {"attempts": attempts}
    if exc is not None and exc.__traceback__ is not None:
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        metadata["traceback"] = "".join(lines[-12:])[-4000:]
    return {"message": message, "error_type": error_type, "retryable": retryable, "metadata": metadata}
