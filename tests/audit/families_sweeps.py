"""Attack families for sweeps and Dask runs (issue 35, items 1 and 9), run by ``attack_rerun.py``.

1. Slug-colliding sweep names: pairs of names the store's slug maps to one folder, in every
   name field of ``heta_nb.sweep`` (KB names, recipe names, benchmark names, a second
   sweep's name): each must be refused before any KB is queried, with nothing written.
2. Cases that kill their Dask worker: evaluations on a real ``LocalCluster`` whose KB exits
   the worker process for chosen questions: every other case scored, each killer recorded
   once as ``WorkerDied``, nothing lost or duplicated, and ``resume=True`` sends no killer again.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from runner_support import exact_kb, toy_benchmark  # noqa: E402

PAIRS = [("Run 1", "run_1"), ("a b", "a_b"), ("A", "a"), ("Évaluation", "évaluation"), ("run  1", "Run_1")]
SETTINGS: dict[str, Any] = {"query_modes": ["good"], "evaluators": ["recall@1"], "top_k": 3}


class _Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        self.calls += 1
        return exact_kb(query, mode=mode, top_k=top_k)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _fields(one: str, two: str) -> list[tuple[str, Callable[[_Counting, _Counting], dict[str, Any]]]]:
    """Each name field of ``sweep()``, given the names ``one`` (already stored) and ``two``."""

    def kbs(a: _Counting, b: _Counting) -> dict[str, Any]:
        return {"benchmarks": {"t": toy_benchmark(2)}, "kbs": {one: a, two: b}}

    def benchmarks(a: _Counting, b: _Counting) -> dict[str, Any]:
        return {"benchmarks": {one: toy_benchmark(2), two: toy_benchmark(3)}, "kbs": {"k": a}}

    def recipe_and_kb(a: _Counting, b: _Counting) -> dict[str, Any]:
        return {"benchmarks": {"t": toy_benchmark(2)}, "recipes": {one: lambda folder: None}, "kbs": {two: a}}

    def sweep_name(a: _Counting, b: _Counting) -> dict[str, Any]:
        return {"benchmarks": {"toy": toy_benchmark(2)}, "kbs": {one: a}, "name": two}

    def stored_kb(a: _Counting, b: _Counting) -> dict[str, Any]:
        return {"benchmarks": {"toy": toy_benchmark(2)}, "kbs": {two: a}, "name": one}

    return [
        ("kbs", kbs),
        ("benchmarks", benchmarks),
        ("recipe and kb", recipe_and_kb),
        ("second sweep name", sweep_name),
        ("second sweep kb", stored_kb),
    ]


def attack_slug_names(quick: bool) -> dict[str, Any]:
    """Every pair in every name field: refused before work, nothing written; a control sweep still runs."""
    import heta_nb
    from heta_nb.sweeps import SweepError

    pairs = PAIRS[:2] if quick else PAIRS
    problems: list[str] = []
    tried = refused = 0
    with tempfile.TemporaryDirectory() as folder:
        for index, (one, two) in enumerate(pairs):
            root = Path(folder) / f"s{index}"
            first = _Counting()
            heta_nb.sweep({"toy": toy_benchmark(2)}, kbs={one: first}, name=one, store=root, executor="serial",
                          progress=False, **SETTINGS)  # fmt: skip
            fields = _fields(one, two)
            for field, arguments in fields:
                if field == "recipe and kb" and not (one + two).isascii():
                    continue  # (recipe names are Heta KB names: ASCII only)
                tried += 1
                a, b = _Counting(), _Counting()
                before = _files(root)
                try:
                    heta_nb.sweep(store=root, executor="serial", progress=False, **arguments(a, b), **SETTINGS)
                except SweepError as exc:
                    refused += 1
                    if "\n" in str(exc) or repr(two) not in str(exc):
                        problems.append(f"{field} {one!r}/{two!r}: unclear refusal: {exc}")
                else:
                    problems.append(f"{field} {one!r}/{two!r}: not refused")
                if a.calls or b.calls:
                    problems.append(f"{field} {one!r}/{two!r}: a KB was queried {a.calls + b.calls} time(s)")
                if _files(root) != before:
                    problems.append(f"{field} {one!r}/{two!r}: the store changed")
        control = _Counting()
        heta_nb.sweep({"x.y": toy_benchmark(2), "x_y": toy_benchmark(2)}, kbs={"Run 1": control},
                      store=Path(folder) / "control", executor="serial", progress=False, **SETTINGS)  # fmt: skip
        if control.calls != 4:
            problems.append(f"a sweep of names that do not collide queried {control.calls} times, not 4")
    return {"pairs": len(pairs), "tried": tried, "refused": refused, "problems": problems}


class _KillerKB:
    def __init__(self, log: str, killers: set[int]) -> None:
        self.log = log
        self.killers = killers

    def query(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        question = int(query.rstrip("?").split()[-1])
        with open(self.log, "a", encoding="utf-8") as log:
            log.write(f"{question}\n")
        if question in self.killers:
            os._exit(1)
        return exact_kb(query, mode=mode, top_k=top_k)


def attack_dask_killers(quick: bool) -> dict[str, Any]:
    """Runs with 1, 2 (and 3) killer questions on a fresh 2-worker cluster each; then a resume."""
    import cloudpickle
    import dask
    import distributed

    import heta_nb

    if __name__ in sys.modules:  # (loaded by attack_rerun.py it is not: cloudpickle sends it by value anyway)
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    problems: list[str] = []
    kills = runs = recovered = 0
    seconds: list[float] = []
    layouts = [{5}, {1, 6}] if quick else [{5}, {1, 6}, {0, 13, 29}]
    for killers in layouts:
        n = 30
        with tempfile.TemporaryDirectory() as folder:
            log = os.path.join(folder, "log")
            with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
                cluster = distributed.LocalCluster(
                    n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                    silence_logs=logging.CRITICAL,
                )  # fmt: skip
            try:
                with distributed.Client(cluster) as client:
                    for resume in (False, True):
                        started = time.monotonic()
                        sent = Path(log).read_text().split() if os.path.exists(log) else []
                        run = heta_nb.start(
                            toy_benchmark(n, n_docs=n), kb=_KillerKB(log, killers), query_modes=["good", "poor"],
                            knowledge_base_name="toy kb", store=os.path.join(folder, "store"), report_id="k",
                            concurrency=1, executor=client, progress=False, resume=resume,
                        )  # fmt: skip
                        try:
                            report = run.result(timeout=120)
                        except Exception as exc:  # noqa: BLE001 - counted
                            run.cancel()
                            problems.append(f"killers {sorted(killers)}: {type(exc).__name__}: {exc}"[:300])
                            break
                        runs += 1
                        seconds.append(time.monotonic() - started)
                        now = Path(log).read_text().split()
                        if resume and now != sent:
                            problems.append(f"killers {sorted(killers)}: resume sent {len(now) - len(sent)} queries")
                        if not resume:
                            kills += sum(1 for q in now if int(q) in killers)
                        keys = [(r.case_id, r.query_mode) for r in report.case_results]
                        expected = sorted((f"c{i:03d}", m) for i in range(n) for m in ("good", "poor"))
                        if keys != expected:
                            problems.append(f"killers {sorted(killers)}: {len(keys)} results, {len(set(keys))} "
                                            f"distinct, {len(expected)} expected (lost or duplicated)")  # fmt: skip
                        died = {r.case_id for r in report.case_results if r.error is not None}
                        if died != {f"c{i:03d}" for i in killers}:
                            problems.append(f"killers {sorted(killers)}: errors on {sorted(died)}")
                        if any(r.error and r.error.error_type != "WorkerDied" for r in report.case_results):
                            problems.append(f"killers {sorted(killers)}: an error other than WorkerDied")
                        recovered += sum(1 for r in report.case_results if r.error is None) if not resume else 0
            finally:
                cluster.close(timeout=30)
    return {
        "runs": runs,
        "kills": kills,
        "recovered": recovered,
        "max_s": max(seconds, default=0.0),
        "problems": problems,
    }


def attacks(quick: bool) -> list[tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]]:
    """This family's attacks, for ``attack_rerun.py``'s table."""
    return [
        (
            "slug-colliding sweep names",
            lambda: attack_slug_names(quick),
            lambda r: f"{r['pairs']} pairs, {r['tried']} sweeps, {r['refused']} refused before work",
        ),
        (
            "cases that kill their Dask worker",
            lambda: attack_dask_killers(quick),
            lambda r: (
                f"{r['runs']} runs, {r['kills']} worker kills, {r['recovered']} other results kept, "
                f"slowest {r['max_s']:.0f} s"
            ),
        ),
    ]
