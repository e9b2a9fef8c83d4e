"""``heta_nb.rescore``: new or changed scores on an existing report, without querying the KB again.

The KB's recorded responses are replayed through the runner (so a rescore has the
live widget, the checkpoint, ``resume=``, the judges' cache, limits and budget), and
the new report is the source with its scores added or replaced: the same responses,
errors and latencies, its own ``report_id``, and ``metadata.heta_nb.rescored_from``
naming the source. The source report is never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pandas as pd

from heta_nb.api.blocking import evaluate
from heta_nb.benchmark import Benchmark
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import heta_score_summary
from heta_nb.runner.case import CURRENT_CASE

__all__ = ["ReplayedError", "ReplayKnowledgeBase", "rescore"]


class ReplayedError(RuntimeError):
    """The source report recorded an error for this case (its error record is kept as it was)."""


class ReplayKnowledgeBase:
    """A KB that answers each case with the response a report recorded for it (an async KB)."""

    def __init__(self, report: EvaluationReport) -> None:
        self.name = report.knowledge_base_name
        self._recorded: dict[tuple[str, str], dict[str, Any]] = {}
        for result in report.raw["case_results"]:
            self._recorded[(result["case_id"], result["query_mode"])] = result

    async def query(self, query: str, *, mode: str) -> Any:
        """The recorded response of the running case in ``mode``."""
        case_id = CURRENT_CASE.get()
        result = self._recorded.get((str(case_id), mode))
        if result is None:
            raise ReplayedError(f"the source report has no result for case {case_id!r} in mode {mode!r}")
        if result["response"] is None:
            raise ReplayedError(str((result.get("error") or {}).get("message") or "the source case errored"))
        return result["response"]


def _benchmark_of(report: EvaluationReport) -> Benchmark:
    """The report's cases as a benchmark without gold data (``report.json`` keeps none)."""
    rows = list(
        {(r["case_id"]): {"case_id": r["case_id"], "query": r["query"]} for r in report.raw["case_results"]}.values()
    )
    manifest = {k: report.raw["benchmark"].get(k) for k in ("name", "version", "split", "task_type")}
    manifest = {k: v for k, v in manifest.items() if v} | {"name": manifest.get("name") or "rescored"}
    manifest.setdefault("version", "1")
    return Benchmark.from_frame(pd.DataFrame(rows), manifest=manifest, answers=None, evidence=None)


def _merged(source: EvaluationReport, run: EvaluationReport, names: list[str]) -> EvaluationReport:
    """The source with the run's scores added or replaced (see the module docstring)."""
    new_scores = {(r["case_id"], r["query_mode"]): r for r in run.raw["case_results"]}
    results = []
    for old in source.raw["case_results"]:
        fresh = new_scores.get((old["case_id"], old["query_mode"]))
        if fresh is None:
            continue
        scores = [s for s in old["scores"] if s["name"] not in names] if old["response"] is not None else []
        if old["response"] is not None:
            scores.extend(fresh["scores"])
        metadata = dict(old["metadata"])
        mine = dict(metadata.get("heta_nb") or {})
        mine["rescored"] = True
        errors = (fresh["metadata"].get("heta_nb") or {}).get("evaluator_errors")
        if errors and old["response"] is not None:
            mine["evaluator_errors"] = sorted(set(mine.get("evaluator_errors") or ()) | set(errors))
        metadata["heta_nb"] = mine
        results.append({**old, "scores": scores, "metadata": metadata})
    raw = run.raw
    info = dict(raw["metadata"]["heta_nb"])
    source_info = source.raw["metadata"].get("heta_nb") or {}
    judges = {k: v for k, v in (source_info.get("judges") or {}).items() if k not in names}
    judges.update(info.get("judges") or {})
    if judges:
        info["judges"] = judges
    info["evaluators"] = list(
        dict.fromkeys([*(n for n in source_info.get("evaluators") or () if n not in names), *names])
    )
    info["rescored_from"] = {
        "report_id": source.report_id,
        "report_key": source.raw.get("report_key"),
        "knowledge_base_name": source.knowledge_base_name,
        "evaluators": names,
    }
    info["errors"] = sum(1 for r in results if r["error"] is not None)
    info["done"] = len(results)
    metadata = {**source.raw["metadata"], "heta_nb": info}
    return EvaluationReport.from_raw(
        {
            **source.raw,
            "report_id": run.report_id,
            "report_key": None,
            "score_summary": heta_score_summary([SimpleNamespace(raw=r) for r in results]),
            "case_results": results,
            "started_at": raw["started_at"],
            "finished_at": raw["finished_at"],
            "metadata": metadata,
        }
    )


def _store(store: Any) -> Any:
    from heta_nb.store import ReportStore

    return store if isinstance(store, ReportStore) else ReportStore(store)


def _finished(store: Any, kb_name: str, report_id: str, source_id: str) -> EvaluationReport | None:
    """The stored, finished rescore ``report_id`` of the source ``source_id`` (None: none yet)."""
    try:
        stored = _store(store).load(kb_name, report_id)
    except (FileNotFoundError, KeyError, LookupError):
        return None
    info = stored.raw["metadata"].get("heta_nb") or {}
    origin = info.get("rescored_from") or {}
    return stored if origin.get("report_id") == source_id and info.get("status") == "complete" else None


def rescore(
    report: EvaluationReport | str,
    evaluators: Sequence[Any],
    *,
    benchmark: Any = None,
    store: Any = None,
    report_id: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    **settings: Any,
) -> EvaluationReport:
    """Score an existing report again with ``evaluators``, without querying its KB.

    Args:
        report: the source report (or a path or ``STORE:KB/ID`` that ``load_report`` reads).
        evaluators: the evaluators to add; a score of the same name replaces the source's.
        benchmark: the benchmark the source ran, for evaluators that need gold data
            (expected answers, evidence); default the report's own cases (no gold data).
        store: where the new report is saved (default None: kept in memory); it is saved
            under the source's knowledge base, with its own ``report_id``.
        report_id: the new report's id (default a new one; give one to ``resume``).
        resume: finish an interrupted rescore of ``report_id`` from its checkpoint.
        overwrite: replace a stored report of that id.
        **settings: the run's other settings (``judge_model``, ``judge_cache``,
            ``judge_limits``, ``max_cost``, ``repeats``, ``concurrency``, ``progress``...).

    Returns:
        The new report: the source's responses, errors and latencies, every source score
        not replaced, the new scores, and ``metadata.heta_nb.rescored_from``.

    Example::

        judged = heta_nb.rescore(report, [heta_nb.llm_judges.Faithfulness()], judge_model=model)
    """
    if isinstance(report, str):
        from heta_nb.store.locate import load_report

        report = load_report(report)
    if not isinstance(report, EvaluationReport):
        raise TypeError(f"rescore() needs an EvaluationReport, not {type(report).__name__}")
    for key in ("kb", "recipe", "query_modes", "evaluators"):
        if key in settings:
            raise TypeError(f"rescore() replays the report's own responses: {key}= cannot be given")
    if resume and store is not None and report_id is not None:
        finished = _finished(store, report.knowledge_base_name, report_id, report.report_id)
        if finished is not None:
            return finished
    run = evaluate(
        benchmark if benchmark is not None else _benchmark_of(report),
        kb=ReplayKnowledgeBase(report),
        knowledge_base_name=report.knowledge_base_name,
        query_modes=list(report.modes),
        evaluators=list(evaluators),
        store=store,
        report_id=report_id,
        resume=resume,
        overwrite=overwrite,
        lint=settings.pop("lint", False),
        retries=settings.pop("retries", 0),
        **settings,
    )
    names = list(run.raw["metadata"]["heta_nb"]["evaluators"])
    merged = _merged(report, run, names)
    complete = run.raw["metadata"]["heta_nb"]["status"] == "complete"
    if run.raw.get("report_key") and store is not None and complete:  # (a partial run's own report stays, to resume)
        key = _store(store).save(merged, overwrite=True)
        if merged.raw.get("report_key") != key:
            merged = merged.replace(report_key=key)
    return merged
