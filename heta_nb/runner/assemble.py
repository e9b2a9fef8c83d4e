"""The final report: Heta's fields, the run's settings in ``metadata.heta_nb``, and its save.

The save reuses each result's checkpoint JSON rather than encoding the report again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from heta_nb._version import __version__
from heta_nb.llm_judges import judges_record
from heta_nb.model.json import dumps_bytes_exact, to_json_value
from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.model.summary import heta_score_summary
from heta_nb.runner.checkpoint import CheckpointWriter
from heta_nb.runner.config import RunConfig
from heta_nb.runner.encode import encode_case
from heta_nb.runner.events import RunStatus
from heta_nb.runner.plan import RunPlan, RunTarget
from heta_nb.runner.recipe_parameters import RECIPE_PARAMETERS, recipe_parameters

__all__ = ["RunTally", "build_report", "report_chunks", "save_report", "utc_now"]


def utc_now() -> str:
    """The time now, as Heta writes it (ISO 8601, UTC)."""
    return datetime.now(timezone.utc).isoformat()


@dataclass(frozen=True)
class RunTally:
    """How a run went, as its report records it."""

    status: RunStatus
    failure: str | None
    """Why a failed run failed."""
    errors: int
    """Results that are errors."""
    warnings: list[str]
    document_keys: list[str]
    """The benchmark documents' raw keys, as written to a recipe's object store."""
    started_at: str
    elapsed_s: float
    executor: dict[str, Any] | None = None
    """Where the cases ran, when not in this process: ``{"kind": "dask", "workers": n, "threads": t}``."""


def build_report(
    config: RunConfig,
    target: RunTarget,
    plan: RunPlan | None,
    results: list[EvaluationCaseResult],
    tally: RunTally,
) -> EvaluationReport:
    """The report of a run (``plan`` is None when it stopped before its benchmark was loaded).

    Args:
        config: the run's settings.
        target: the run's KB, names and store.
        plan: what the run was to do.
        results: the finished results, in Heta's order (unit, case, mode).
        tally: how the run went.

    Returns:
        The report, without its ``report_key`` (set when it is saved).
    """
    finished_at = utc_now()
    kb_manifest, recipe_manifest = _manifests(config, target, plan)
    total = plan.total if plan is not None else 0
    heta_nb_meta: dict[str, Any] = {
        "version": __version__,
        "status": tally.status,
        "total": total,
        "done": len(results),
        "remaining": max(0, total - len(results)),
        "resumed": len(plan.resumed) if plan is not None else 0,
        "errors": tally.errors,
        "shard": {"index": config.shard[0], "count": config.shard[1], "base_report_id": target.base_report_id}
        if config.shard
        else None,
        "evaluators": [e.name for e in plan.evaluators] if plan is not None else [],
        "top_k": config.top_k,
        "query_options": config.recorded_options,
        "trace": config.trace,
        "concurrency": config.concurrency,
        "timeout_s": config.timeout_s,
        "evaluator_timeout_s": config.evaluator_timeout,
        "retries": config.retries,
        "elapsed_s": tally.elapsed_s,
        "warnings": list(tally.warnings),
    }
    parameters = recipe_parameters(_recipe(config, plan)) if recipe_manifest else None
    if parameters is not None:  # Heta's recipe manifest has no step settings (chunk_size...)
        heta_nb_meta[RECIPE_PARAMETERS] = parameters
    judges = judges_record(plan.evaluators) if plan is not None else {}
    if judges:
        heta_nb_meta["judges"] = judges
        heta_nb_meta["judge_settings"] = {
            "limits": config.judges.limits.record(),
            "max_cost": config.judges.max_cost,
            "repeats": config.judges.repeats,
        }
    notes = plan.builder.build_notes if plan is not None and plan.builder is not None else []
    if notes:  # what a build did instead of the usual (tiktoken offline): said, not a warning
        heta_nb_meta["build_notes"] = list(notes)
    if tally.executor is not None:
        heta_nb_meta["executor"] = dict(tally.executor)
    if tally.failure:
        heta_nb_meta["failure"] = tally.failure
    metadata = {
        **config.metadata_json,
        "benchmark_document_keys": list(dict.fromkeys(tally.document_keys)),
        "run_units": [u.to_dict() for u in plan.units] if plan is not None else [],
        "heta_nb": heta_nb_meta,
    }
    return EvaluationReport.from_raw(
        {
            "schema_version": "1",
            "report_id": target.report_id,
            "report_key": None,
            "benchmark": dict(plan.manifest.raw) if plan is not None else {},
            "knowledge_base_name": target.knowledge_base_name,
            "knowledge_base_manifest": to_json_value(kb_manifest, "knowledge_base_manifest"),
            "recipe_manifest": to_json_value(recipe_manifest, "recipe_manifest"),
            "query_modes": list(config.modes),
            "score_summary": heta_score_summary(results),
            "case_results": [r.raw for r in results],
            "started_at": tally.started_at,
            "finished_at": finished_at,
            "metadata": metadata,
        }
    )


def _manifests(config: RunConfig, target: RunTarget, plan: RunPlan | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report's ``knowledge_base_manifest`` and ``recipe_manifest``."""
    builder = plan.builder if plan is not None else None
    if builder is not None and builder.knowledge_bases:
        return builder.knowledge_base_manifest(), builder.recipe_manifest()
    if builder is not None:
        return {}, builder.recipe_manifest()
    if target.kb_adapter is None:  # a recipe's run stopped before its benchmark was loaded
        return {}, {}
    kb_manifest = target.kb_adapter.manifest()
    if not kb_manifest.get("name"):
        kb_manifest["name"] = target.knowledge_base_name
    try:
        recipe = getattr(config.kb, "recipe", None)
        recipe_manifest = dict(recipe.manifest().to_dict()) if recipe is not None else {}
    except (Exception, SystemExit, GeneratorExit):  # noqa: BLE001 - a foreign recipe object
        recipe_manifest = {}
    return kb_manifest, recipe_manifest


def _recipe(config: RunConfig, plan: RunPlan | None) -> Any:
    """The run's Heta recipe: ``recipe=``'s, or a Heta KB's (None for other KBs)."""
    builder = plan.builder if plan is not None else None
    if builder is not None:
        return builder.recipe
    try:
        return config.recipe if config.recipe is not None else getattr(config.kb, "recipe", None)
    except (Exception, SystemExit, GeneratorExit):  # noqa: BLE001 - a foreign KB object
        return None


async def save_report(
    report: EvaluationReport,
    target: RunTarget,
    checkpoint: CheckpointWriter | None,
    case_json: list[bytes | None],
) -> tuple[EvaluationReport, str | None]:
    """Save the report in the target's store; a complete run's checkpoint is then deleted.

    Args:
        report: the report to save.
        target: the run's KB, names and store (not None).
        checkpoint: the run's checkpoint, closed here (its lock is kept until the report is saved).
        case_json: each result's checkpoint line, in report order (None: encoded here).

    Returns:
        The saved report and its key; or, when it could not be saved (a full disk, say),
        the report marked ``failed`` (``metadata.heta_nb.failure`` says why) and None.
    """
    store = target.store
    assert store is not None
    try:
        if checkpoint is not None:  # every line written; the lock is kept until the report is saved
            checkpoint.flush()
        key = store.key_for(target.knowledge_base_name, target.report_id)
        saved = report.replace(report_key=key)
        encoded = report_chunks(saved, case_json)
        await asyncio.to_thread(store.save, saved, overwrite=True, encoded=encoded)
    except Exception as exc:  # a full disk, say: the caller still gets every result
        metadata = report.raw["metadata"]
        heta_nb_meta = metadata["heta_nb"]
        failure = heta_nb_meta.get("failure")
        problem = f"the report could not be saved to {store.location}: {type(exc).__name__}: {exc}"
        failure = f"{failure}; {problem}" if failure else problem
        heta_nb_meta = {**heta_nb_meta, "status": "failed", "failure": failure}
        return report.replace(metadata={**metadata, "heta_nb": heta_nb_meta}), None
    else:
        if report.raw["metadata"]["heta_nb"]["status"] == "complete" and checkpoint is not None:
            checkpoint.delete()
        return saved, key
    finally:
        if checkpoint is not None:
            checkpoint.close()


def report_chunks(report: EvaluationReport, case_json: list[bytes | None]) -> list[bytes]:
    """``encode_report(report)`` as chunks, reusing the case results' checkpoint JSON."""
    chunks: list[bytes] = []
    for name, value in report.raw.items():
        chunks.append(b"," if chunks else b"{")
        if name == "case_results":
            chunks.append(b'"case_results":[')
            for index, (text, item) in enumerate(zip(case_json, value)):
                if index:
                    chunks.append(b",")
                chunks.append(text if text is not None else encode_case(item))
            chunks.append(b"]")
        else:
            chunks.append(dumps_bytes_exact(name) + b":" + dumps_bytes_exact(value))
    chunks.append(b"}")
    return chunks
