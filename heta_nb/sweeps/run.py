"""``heta_nb.sweep``: every (recipe, benchmark) pair evaluated, saved, reused on a re-run, on a leaderboard."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heta_nb.sweeps.execute import Driver, choose_executor, initial_state, run_pairs
from heta_nb.sweeps.leaderboard import Leaderboard
from heta_nb.sweeps.plan import PairSpec, SweepError, plan_pairs
from heta_nb.sweeps.progress import SweepProgress, sweep_view

__all__ = ["SweepWarning", "sweep"]

_FOLDER = re.compile(r"[^A-Za-z0-9_.-]+")


class SweepWarning(UserWarning):
    """Something about a sweep the user should know: pairs that failed, an interrupted sweep."""


def sweep(
    benchmarks: Any,
    recipes: Mapping[str, Any] | None = None,
    *,
    store: Any,
    kbs: Mapping[str, Any] | None = None,
    name: str = "sweep",
    rerun: bool = False,
    executor: Any = "auto",
    max_workers: int | None = None,
    workdir: str | os.PathLike[str] | None = None,
    baseline: str | Mapping[str, str] | None = None,
    progress: SweepProgress = True,
    **settings: Any,
) -> Leaderboard:
    """Evaluate every recipe (and KB) on every benchmark, in parallel, and return the :class:`Leaderboard`.

    Each pair is one :func:`heta_nb.evaluate` call with ``settings``; its report is saved in
    ``store`` under the recipe's name (as the knowledge-base name) and the report id
    ``{name}--{benchmark}``, with ``metadata.sweep = {name, recipe, benchmark}``. Running
    the same sweep again reuses every finished report as it is, resumes every interrupted
    one from its checkpoint, and runs only what is missing; a stored report made with
    other settings is refused before any work (``rerun=True`` replaces them all).

    Example::

        from functools import partial
        from heta_nb.demo.heta_recipes import demo_recipe

        board = heta_nb.sweep(
            {"single-hop": single, "multi-hop": multi},
            {"small": partial(demo_recipe, chunk_size=160, overlap=20),
             "large": partial(demo_recipe, chunk_size=700, overlap=60)},
            store="sweep-store", query_modes=["extractive_answer"],
            query_engines=demo.demo_query_engines(), evaluators=["recall@5", "answer_f1"],
        )
        board            # the leaderboard; board.frame(), board.plot(), board.to_html("board.html")

    **Recipes and benchmarks.** A Heta recipe carries its stores: one recipe object used on
    two benchmarks would mix their corpora (Heta's ``ParseDocuments`` reads all of
    ``raw/``), so give a *factory* ``f(folder) -> recipe``, called once per pair with the
    pair's own folder under ``workdir``; a recipe object is accepted for one benchmark.

    **Where pairs run.** Heta's full-text KBs score in Python, so a pair is CPU-bound:
    threads take turns on one interpreter lock (no faster than one after another), while
    processes and Dask workers run pairs side by side (each worker pays its start-up and a
    pickled copy of the pair). ``"auto"`` uses a process pool sized to the machine when
    there are several pairs. On Dask, the store and ``workdir`` must be paths every worker
    can reach (a shared folder or an fsspec URL).

    Args:
        benchmarks: a benchmark (heta_nb ``Benchmark``, folder, or Heta benchmark object), a
            list of them (named after their manifests), or a dict name -> benchmark.
        recipes: dict name -> Heta ``KnowledgeRecipe`` or factory ``f(folder) -> recipe``.
            Names are Heta KB names (letters, digits, spaces, ``_`` and ``-``).
        store: where reports go: a folder, fsspec URL or ``ReportStore`` (None: memory
            only, nothing reused).
        kbs: dict name -> knowledge base (anything ``evaluate(kb=...)`` takes).
        name: the sweep's name, the report ids' prefix (two sweeps with other settings
            can share a store under two names).
        rerun: replace stored reports instead of reusing or resuming them.
        executor: ``"auto"``, ``"serial"``, ``"threads"``, ``"processes"``, ``"dask"`` (a
            ``LocalCluster`` sized to the machine, closed at the end; needs ``[dask]``) or a
            ``dask.distributed.Client`` (an existing cluster).
        max_workers: pairs at once (default: the usable CPUs, or the Dask workers).
        workdir: where factories build each pair's recipe (default: a temporary folder,
            removed at the end).
        baseline: the leaderboard's baseline recipe (default: the first), or
            ``{benchmark: recipe}``.
        progress: True (a live table in a notebook, lines in a terminal), False,
            ``"widget"``, ``"console"``, or a callable receiving each
            :class:`~heta_nb.sweeps.status.SweepState`.
        **settings: every other setting of :func:`heta_nb.evaluate` (``query_modes``,
            ``evaluators``, ``top_k``, ``query_engines``, ``metadata``...), the same for
            every pair.

    Returns:
        The :class:`Leaderboard` of every pair that finished (``board.failures`` lists the
        others, also issued as :class:`SweepWarning`). Ctrl-C (or the kernel's stop button)
        stops the sweep: finished pairs are kept, running ones keep their checkpoints, and
        the leaderboard of what finished is returned.

    Raises:
        SweepError: a bad setting or name, a recipe object shared by benchmarks, a stored
            report with other settings (all before any work), or every pair failed.
    """
    made_workdir = workdir is None
    root = Path(workdir) if workdir is not None else None

    def folder_of(recipe: str, benchmark: str) -> str:
        nonlocal root
        if root is None:
            root = Path(tempfile.mkdtemp(prefix="heta_nb-sweep-"))
        return str(root / (_FOLDER.sub("_", recipe) or "recipe") / (_FOLDER.sub("_", benchmark) or "benchmark"))

    try:
        specs = plan_pairs(
            benchmarks, recipes, kbs, name=name, store=store, rerun=rerun, settings=settings, folder_of=folder_of
        )
        benchmark_objects = {spec.benchmark: spec.bench for spec in specs}
        reports, failures, interrupted = _run(
            specs, store=store, executor=executor, max_workers=max_workers, progress=progress
        )
    finally:
        if made_workdir and root is not None:
            shutil.rmtree(root, ignore_errors=True)
    for failure in failures:
        warnings.warn(
            f"{failure['recipe']} × {failure['benchmark']}: {failure['phase']}"
            + (f": {failure['error']}" if failure.get("error") else ""),
            SweepWarning,
            stacklevel=2,
        )
    if interrupted:
        warnings.warn(
            f"the sweep was interrupted: {len(failures)} pair(s) not finished; run it again to finish them "
            "(finished reports are reused, interrupted runs resume from their checkpoints)",
            SweepWarning,
            stacklevel=2,
        )
    if not reports and interrupted:
        raise KeyboardInterrupt("the sweep was interrupted before any pair finished")
    if not reports:
        raise SweepError(
            "no pair finished: "
            + "; ".join(f"{f['recipe']} × {f['benchmark']}: {f.get('error') or f['phase']}" for f in failures)
        )
    leaderboard = Leaderboard.from_reports(
        reports, baseline=baseline, store=store, failures=failures, benchmark_objects=benchmark_objects
    )
    leaderboard.arguments["sweep"] = name
    return leaderboard


def _run(
    specs: list[PairSpec], *, store: Any, executor: Any, max_workers: int | None, progress: SweepProgress
) -> tuple[list[Any], list[dict[str, Any]], bool]:
    """Run the pairs; return the finished reports (in pair order), the failures, and whether interrupted."""
    from heta_nb.model.io import load_report

    to_run = [s for s in specs if s.start != "reuse"]
    if not to_run and (executor is None or isinstance(executor, str)):
        executor = "serial"  # nothing to run: no pool or cluster to start
    placement = choose_executor(executor, max_workers, len(to_run))
    try:
        driver = Driver(initial_state(specs, placement), sweep_view(progress))
        reports: dict[int, Any] = {}
        report_store = None
        for spec in specs:
            if spec.start == "reuse":
                if report_store is None:
                    from heta_nb.store import ReportStore

                    report_store = store if isinstance(store, ReportStore) else ReportStore(store)
                report = report_store.load(spec.recipe, spec.report_id)
                reports[spec.index] = report
                info = report.metadata.get("heta_nb")
                counts = info if isinstance(info, Mapping) else {}
                driver.post(
                    {
                        "pair": spec.index,
                        "phase": "reused",
                        "done": int(counts.get("done", report.case_count)),
                        "total": int(counts.get("total", report.case_count)),
                        "errors": report.error_count,
                        "message": "finished report reused",
                        "report_key": report.report_key,
                    }
                )
        finished = run_pairs(to_run, placement, driver)
        driver.tick()
    finally:
        placement.close()
    failures = []
    for spec in to_run:
        outcome = driver.outcomes.get(spec.index)
        if outcome is not None and outcome["phase"] == "done" and outcome.get("report") is not None:
            report = outcome["report"]
            reports[spec.index] = load_report(report) if isinstance(report, (bytes, bytearray)) else report
            continue
        status = driver.state.pairs[spec.index]
        failures.append(
            {
                "recipe": spec.recipe,
                "benchmark": spec.benchmark,
                "phase": status.phase,
                "error": (outcome or {}).get("error") or status.message,
            }
        )
    return [reports[i] for i in sorted(reports)], failures, not finished
