"""Escape routes from the runner (issue 35, items 4 and 5): what user code raises, and calls that
will not stop. Loaded by ``attack_rerun.py`` (``family_attacks``).

1. Every ``BaseException`` that is not an ``Exception`` (look-alikes of gevent's ``Timeout``,
   trio's ``Cancelled`` and pytest's ``Exit``; in the full run also ``KeyboardInterrupt``,
   ``SystemExit``, ``GeneratorExit`` and a ``CancelledError`` no one asked for), raised at every
   place the runner calls user code: a sync or async KB (and a task of the KB's own), a sync or
   async evaluator, a sync or
   async judge model, the KB's ``name`` and ``available_queries``, its ``manifest()``. A case's
   call must give that case's (or score's) error naming the class, the other cases their
   results; a property read before the run must give a ``RunError`` naming it.
2. Calls that swallow their cancellation (then return, or never stop, or swallow even the
   ``GeneratorExit`` of ``close()``) and a sync KB that sleeps past its deadline, under a few
   timeouts and concurrencies, through ``evaluate`` and through ``evaluate_async`` under
   ``asyncio.run``: the run must end, each such case be a ``TimeoutError``, and no result
   that arrived after its deadline be a success.

Each setup runs on a thread of its own joined with a timeout: a hang is a problem, not a hung script.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from hostile_exits import RAISED, HostileAttributeKB  # noqa: E402
from runner_support import exact_kb, toy_benchmark  # noqa: E402

import heta_nb  # noqa: E402
from heta_nb.llm_judges.standin import standin_answer  # noqa: E402
from heta_nb.runner.errors import RunError  # noqa: E402

Attack = tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]

BOUND_S = 30.0
"""One setup's wall-clock bound (each takes one to three seconds)."""
FAILING = ("c001", "c004")


def _raised(quick: bool) -> dict[str, Callable[[], BaseException]]:
    kinds = dict(RAISED)
    if not quick:
        kinds.update(
            {
                "KeyboardInterrupt": lambda: KeyboardInterrupt("raised by user code"),
                "SystemExit": lambda: SystemExit(3),
                "GeneratorExit": lambda: GeneratorExit("raised by hand"),
                "CancelledError": lambda: asyncio.CancelledError("no one asked"),
            }
        )
    return kinds


def _bounded(call: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", value)``, ``("raised", exception)`` or ``("hung", None)`` after :data:`BOUND_S`."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["ok"] = call()
        except BaseException as exc:  # noqa: BLE001 - what escaped is the finding
            outcome["raised"] = exc

    thread = threading.Thread(target=target, name="families-runner", daemon=True)
    thread.start()
    thread.join(BOUND_S)
    if thread.is_alive():
        return "hung", None
    return ("ok", outcome["ok"]) if "ok" in outcome else ("raised", outcome["raised"])


def _failing(query: str) -> bool:
    return query.endswith(("1?", "4?"))


def _settings(**extra: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "query_modes": ["good", "poor"],
        "knowledge_base_name": "toy kb",
        "store": None,
        "progress": False,
        "retries": 0,
        "timeout_s": 0.3,
        "concurrency": 3,
    }
    settings.update(extra)
    return settings


def _complete(report: Any, modes: list[str]) -> str | None:
    """Why ``report`` is not a complete run over the 6 toy cases × ``modes`` (None: it is)."""
    status = report.metadata["heta_nb"]["status"]
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    if status != "complete":
        return f"status {status}"
    if keys != [(f"c{i:03d}", m) for i in range(6) for m in modes]:
        return f"case x mode results {keys}"
    return None


# -- 1. BaseException subclasses x user-call sites --------------------------------------------


def _kb(sync: bool, raised: Callable[[], BaseException]) -> Any:
    def kb(query: str, *, mode: str, top_k: int) -> Any:
        if _failing(query):
            raise raised()
        return exact_kb(query, mode=mode, top_k=top_k)

    async def async_kb(query: str, *, mode: str, top_k: int) -> Any:
        await asyncio.sleep(0)
        return kb(query, mode=mode, top_k=top_k)

    return kb if sync else async_kb


def _kb_with_task(raised: Callable[[], BaseException]) -> Any:
    """An async KB that raises in a task of its own (``asyncio.gather``)."""

    async def part(query: str) -> None:
        await asyncio.sleep(0)
        if _failing(query):
            raise raised()

    async def kb(query: str, *, mode: str, top_k: int) -> Any:
        await asyncio.gather(part(query), asyncio.sleep(0.001))
        return exact_kb(query, mode=mode, top_k=top_k)

    return kb


def _evaluator(sync: bool, raised: Callable[[], BaseException]) -> Any:
    def hostile(case: Any, response: Any) -> float:
        if case.case_id in FAILING:
            raise raised()
        return 1.0

    async def hostile_async(case: Any, response: Any) -> float:
        await asyncio.sleep(0)
        return hostile(case, response)

    return hostile if sync else hostile_async


def _model(sync: bool, raised: Callable[[], BaseException]) -> Any:
    def model(prompt: str, *, system: str) -> str:
        if "question 1?" in prompt or "question 4?" in prompt:
            raise raised()
        return standin_answer(system, prompt)

    async def async_model(prompt: str, *, system: str) -> str:
        await asyncio.sleep(0)
        return model(prompt, system=system)

    return model if sync else async_model


def _check_case_errors(report: Any, kind: str) -> list[str]:
    problems = []
    for r in report.case_results:
        if r.case_id in FAILING and (r.error is None or r.error.error_type != kind):
            problems.append(f"{r.case_id}/{r.query_mode}: error {r.error}")
        elif r.case_id not in FAILING and r.error is not None:
            problems.append(f"{r.case_id}/{r.query_mode}: unexpected error {r.error}")
    return problems


def _check_score_errors(report: Any, kind: str) -> list[str]:
    problems = []
    for r in report.case_results:
        hostile = r.scores[-1] if r.scores else None
        failed = hostile is not None and hostile.value == "error"
        if r.case_id in FAILING and (not failed or hostile.metadata["error"]["type"] != kind):
            problems.append(f"{r.case_id}/{r.query_mode}: score {hostile}")
        elif r.case_id not in FAILING and (failed or r.error is not None):
            problems.append(f"{r.case_id}/{r.query_mode}: unexpected {hostile} / {r.error}")
    return problems


Setup = tuple[Callable[[], Any], Callable[[Any], list[str]]]


def _site_setups(raised: Callable[[], BaseException]) -> dict[str, Setup]:
    """site -> (the run, its check of the report)."""
    kind = type(raised()).__name__
    modes = ["good", "poor"]

    def run(**settings: Any) -> Callable[[], Any]:
        return lambda: heta_nb.evaluate(toy_benchmark(6), **_settings(**settings))

    def judged(sync: bool) -> Callable[[], Any]:
        return run(
            kb=exact_kb,
            evaluators=["answer_relevance"],
            judge_model=_model(sync, raised),
            judge_cache=None,
            query_modes=["good"],
            timeout_s=5,
        )

    def cases(report: Any) -> list[str]:
        return _check_case_errors(report, kind)

    def scores(report: Any) -> list[str]:
        return _check_score_errors(report, kind)

    def judge_scores(report: Any) -> list[str]:
        return _check_score_errors(report, kind)

    def stub(report: Any) -> list[str]:
        return [] if report.knowledge_base_manifest["kind"] == "HostileAttributeKB" else ["no stub manifest"]

    setups: dict[str, Setup] = {
        "sync KB": (run(kb=_kb(True, raised), evaluators=["recall@3"]), cases),
        "async KB": (run(kb=_kb(False, raised), evaluators=["recall@3"]), cases),
        "async KB's own task": (run(kb=_kb_with_task(raised), evaluators=["recall@3"]), cases),
        "sync evaluator": (run(kb=exact_kb, evaluators=["recall@3", _evaluator(True, raised)]), scores),
        "async evaluator": (run(kb=exact_kb, evaluators=["recall@3", _evaluator(False, raised)]), scores),
        "sync judge model": (judged(True), judge_scores),
        "async judge model": (judged(False), judge_scores),
        "KB manifest()": (run(kb=HostileAttributeKB("manifest", raised), evaluators=["recall@3"]), stub),
    }
    for attribute in ("name", "available_queries"):
        setups[f"KB {attribute}"] = (run(kb=HostileAttributeKB(attribute, raised)), lambda report: ["no RunError"])
    del modes
    return setups


def attack_base_exceptions(quick: bool) -> dict[str, Any]:
    problems: list[str] = []
    setups = recorded = refused = 0
    kinds = _raised(quick)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind, raised in kinds.items():
            for site, (run, check) in _site_setups(raised).items():
                if site == "KB manifest()" and kind == "GeneratorExit":
                    continue  # (getattr of a property: a GeneratorExit there is the property's own business)
                setups += 1
                what, value = _bounded(run)
                where = f"{kind} from the {site}"
                if what == "hung":
                    problems.append(f"{where}: the run hung")
                elif site in ("KB name", "KB available_queries"):
                    expected = f"reading its attribute {site[3:]!r} raised {kind}"
                    if isinstance(value, RunError) and expected in str(value):
                        refused += 1
                    else:
                        problems.append(f"{where}: {what} {type(value).__name__}: {value}")
                elif what == "raised":
                    problems.append(f"{where}: escaped as {type(value).__name__}: {value}")
                else:
                    modes = ["good"] if "judge" in site else ["good", "poor"]
                    found = [f"{where}: {p}" for p in ([_complete(value, modes)] if _complete(value, modes) else [])]
                    found += [f"{where}: {p}" for p in check(value)]
                    problems += found
                    recorded += not found
    return {"problems": problems, "setups": setups, "kinds": len(kinds), "recorded": recorded, "refused": refused}


# -- 2. swallowed cancellation x deadlines ------------------------------------------------------


async def _swallow_then_return(value: Any) -> Any:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        pass
    return value


async def _swallow_forever() -> Any:
    while True:
        try:
            await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            pass


async def _swallow_everything() -> Any:
    while True:
        try:
            await asyncio.sleep(0.02)
        except BaseException:  # noqa: BLE001, S110 - even close()'s GeneratorExit
            pass


@contextmanager
def _quiet_unclosable() -> Iterator[None]:
    """Drop Python's "Exception ignored in: <coroutine _swallow_everything>" when such a coroutine,
    which cannot be closed, is collected (it is what that attack expects); anything else is shown."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if "_swallow_everything" not in repr(unraisable.object):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


BEHAVIOURS: dict[str, Callable[[Any], Any]] = {
    "swallow then return": _swallow_then_return,
    "swallow forever": lambda value: _swallow_forever(),
    "swallow even GeneratorExit": lambda value: _swallow_everything(),
}


def _stubborn_kb(behaviour: str, timeout: float) -> Any:
    if behaviour == "sync sleep past the deadline":

        def kb(query: str, *, mode: str, top_k: int) -> Any:
            if _failing(query):
                time.sleep(timeout * 4)
            return exact_kb(query, mode=mode, top_k=top_k)

        return kb

    async def async_kb(query: str, *, mode: str, top_k: int) -> Any:
        await asyncio.sleep(0)
        answer = exact_kb(query, mode=mode, top_k=top_k)
        return await BEHAVIOURS[behaviour](answer) if _failing(query) else answer

    return async_kb


def _stubborn_evaluator(behaviour: str) -> Any:
    async def stubborn(case: Any, response: Any) -> float:
        await asyncio.sleep(0)
        return float(await BEHAVIOURS[behaviour](1.0)) if case.case_id in FAILING else 1.0

    return stubborn


def _late_successes(report: Any, timeout: float) -> list[str]:
    """Results recorded as successes although their query took longer than ``timeout``."""
    return [
        f"{r.case_id}/{r.query_mode} succeeded after {r.metadata['heta_nb']['query_ms']:.0f} ms"
        for r in report.case_results
        if r.error is None and r.metadata["heta_nb"]["query_ms"] > timeout * 1000
    ]


def attack_swallowed_cancellation(quick: bool) -> dict[str, Any]:
    problems: list[str] = []
    setups = timeouts = 0
    timeouts_s = (0.3,) if quick else (0.2, 0.5)
    concurrencies = (3,) if quick else (1, 3)
    plans: list[tuple[str, str, float, int, str]] = []
    for timeout in timeouts_s:
        for concurrency in concurrencies:
            for behaviour in [*BEHAVIOURS, "sync sleep past the deadline"]:
                plans.append(("KB", behaviour, timeout, concurrency, "evaluate"))
            for behaviour in BEHAVIOURS:
                plans.append(("evaluator", behaviour, timeout, concurrency, "evaluate"))
    for behaviour in list(BEHAVIOURS)[1:]:
        plans.append(("KB", behaviour, 0.3, 3, "asyncio.run(evaluate_async)"))
    with warnings.catch_warnings(), _quiet_unclosable():
        warnings.simplefilter("ignore")
        for site, behaviour, timeout, concurrency, how in plans:
            setups += 1
            settings = _settings(timeout_s=timeout, concurrency=concurrency)
            if site == "KB":
                settings.update(kb=_stubborn_kb(behaviour, timeout), evaluators=["recall@3"])
            else:
                settings.update(kb=exact_kb, evaluators=["recall@3", _stubborn_evaluator(behaviour)])
            if how == "evaluate":
                run: Callable[[], Any] = lambda s=settings: heta_nb.evaluate(toy_benchmark(6), **s)  # noqa: E731
            else:

                async def main(s: dict[str, Any] = settings) -> Any:
                    return await heta_nb.evaluate_async(toy_benchmark(6), **s)

                run = lambda m=main: asyncio.run(m())  # noqa: E731
            where = f"{site} that does '{behaviour}', timeout {timeout} s, concurrency {concurrency}, {how}"
            what, value = _bounded(run)
            if what != "ok":
                problems.append(f"{where}: {what} {type(value).__name__ if value is not None else ''} {value or ''}")
                continue
            found = [p for p in [_complete(value, ["good", "poor"])] if p]
            found += _late_successes(value, timeout)
            if site == "KB":
                found += _check_case_errors(value, "TimeoutError")
            else:
                found += _check_score_errors(value, "TimeoutError")
            problems += [f"{where}: {p}" for p in found]
            timeouts += 0 if found else 2 * len(FAILING)
    return {"problems": problems, "setups": setups, "timeouts": timeouts}


def attacks(quick: bool) -> list[Attack]:
    return [
        (
            "BaseException subclasses x user-call sites",
            lambda: attack_base_exceptions(quick),
            lambda r: (
                f"{r['setups']} setups ({r['kinds']} kinds x sites): {r['recorded']} runs recorded them per case,"
                f" {r['refused']} properties refused before the run"
            ),
        ),
        (
            "swallowed cancellation x deadlines",
            lambda: attack_swallowed_cancellation(quick),
            lambda r: f"{r['setups']} setups: {r['timeouts']} timeouts recorded, every run ended",
        ),
    ]


if __name__ == "__main__":  # (one family alone: python tests/audit/families_runner.py [--quick])
    QUICK = "--quick" in sys.argv
    for title, attack, describe in attacks(QUICK):
        started = time.perf_counter()
        result = attack()
        seconds = time.perf_counter() - started
        print(f"{title}: {describe(result)}; {len(result['problems'])} got through ({seconds:.0f} s)")
        for problem in result["problems"][:15]:
            print("  ", problem)
