"""One case × mode: the query (timeout, retries, backoff), then its scores, as a result's JSON object.

The runner's hot path: with a fast KB this is most of its cost per case.
"""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.evaluators import KEYWORDS, NATIVE, PreparedEvaluator, score_data
from heta_nb.runner.config import RunConfig
from heta_nb.runner.deadlines import SUPPORTED, Deadlines
from heta_nb.runner.kb import InvalidResponseError, normalize_response_data

__all__ = ["CaseRunner", "error_data", "error_score"]

_STRAY_CANCEL = "the {} raised CancelledError, but nothing cancelled this run ({})"


class CaseRunner:
    """Queries and scores one case × mode at a time with one run's settings.

    Args:
        config: the run's settings (timeout, retries, backoff, retry classes).
        evaluators: the run's evaluators, called directly (see :class:`PreparedEvaluator`).
        cancelled: whether the run was cancelled (a ``CancelledError`` is then the run's).
    """

    def __init__(
        self, config: RunConfig, evaluators: Sequence[PreparedEvaluator], cancelled: Callable[[], bool]
    ) -> None:
        self.config = config
        self.evaluators = list(evaluators)
        self._cancelled = cancelled
        self.deadlines: Deadlines | None = None
        """The watchdog that keeps every query's timeout (Python 3.11+); the engine starts it."""
        self._wait_for: float | None = None
        """The timeout through ``asyncio.wait_for`` instead (Python 3.10)."""
        timeout = config.timeout_s
        if timeout is not None:
            if SUPPORTED:
                self.deadlines = Deadlines(float(timeout))
            else:  # pragma: no cover - Python 3.10
                self._wait_for = float(timeout)

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
        if deadlines is not None:
            due, late, timeout_s = deadlines.due, deadlines.late, deadlines.timeout_s
        started = perf_counter()
        attempts = 0
        raw: Any = None
        response: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        while True:
            attempts += 1
            retryable = False
            if deadlines is not None:
                due[task] = perf_counter() + timeout_s
            try:
                if self._wait_for is not None:  # Python 3.10
                    raw = await asyncio.wait_for(query(case.query), self._wait_for)
                else:
                    raw = await query(case.query)
                response = normalize_response_data(raw, mode, safe=False)
                break
            except asyncio.CancelledError as exc:
                if deadlines is not None and deadlines.expired(task):
                    retryable = True
                    error = _timeout_error(c.timeout_s, attempts)
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
            except asyncio.TimeoutError:  # from wait_for, or raised by the KB itself
                retryable = True
                error = _timeout_error(c.timeout_s, attempts)
            except InvalidResponseError as exc:
                error = error_data(type(exc).__name__, describe_error(exc), False, attempts, exc)
            except Exception as exc:  # noqa: BLE001 - any KB failure is this case's error
                retryable = getattr(exc, "retryable", False) is True or isinstance(exc, c.retry_types)
                error = error_data(
                    type(exc).__name__, describe_error(exc) or type(exc).__name__, retryable, attempts, exc
                )
            finally:
                if deadlines is not None:  # Deadlines.disarm, inline
                    due.pop(task, None)
                    if late:
                        deadlines.settle(task)
            if retryable and attempts <= c.retries:
                await asyncio.sleep(c.backoff_s * (2 ** (attempts - 1)))
                continue
            break
        query_ms = _elapsed_ms(started)
        scores: list[dict[str, Any]] = []
        failed_evaluators: list[str] | None = None
        if response is not None:
            error = None
            for evaluator in self.evaluators:
                try:
                    convention = evaluator.convention
                    if convention is NATIVE:  # a built-in: its score's JSON object, as it is
                        scores.append(evaluator.fn(case, response))
                        continue
                    if convention is KEYWORDS:
                        outcome = evaluator.fn(case=case, response=raw)
                    else:
                        outcome = evaluator.fn(case, raw)
                    if evaluator.is_async or inspect.isawaitable(outcome):
                        outcome = await outcome
                    data = score_data(outcome, evaluator.name)
                    if data["name"] != evaluator.name and self._collides(data["name"], scores):
                        raise ValueError(
                            f"it returned a score named {data['name']!r}, a name another evaluator's scores have"
                        )
                    scores.append(data)
                except asyncio.CancelledError as exc:
                    if self._cancelled() or _cancel_requested(task):
                        raise
                    if failed_evaluators is None:
                        failed_evaluators = []
                    failed_evaluators.append(evaluator.name)
                    message = _STRAY_CANCEL.format("evaluator", describe_error(exc))
                    scores.append(error_score(evaluator.name, "CancelledError", message))
                except Exception as exc:  # noqa: BLE001 - recorded in the score, response kept
                    if failed_evaluators is None:
                        failed_evaluators = []
                    failed_evaluators.append(evaluator.name)
                    scores.append(error_score(evaluator.name, type(exc).__name__, describe_error(exc)))
        latency_ms = _elapsed_ms(started)
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


def _cancel_requested(task: Any) -> bool:
    """Whether someone asked ``task`` to stop (always assumed on Python 3.10, which cannot tell)."""
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


def _elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (a ``perf_counter`` reading), rounded as Heta rounds a latency."""
    return round((perf_counter() - started) * 1000, 3)


def _timeout_error(timeout_s: float | None, attempts: int) -> dict[str, Any]:
    return error_data("TimeoutError", f"query did not finish within {timeout_s:g} s", True, attempts)


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
