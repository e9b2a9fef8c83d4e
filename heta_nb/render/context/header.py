"""The report view's header: identity, benchmark, knowledge bases, recipe, run settings,
counts and the banner of an unfinished run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb._util.text import clip, clip_label, shorten
from heta_nb.model import EvaluationReport
from heta_nb.render.context.formatting import (
    as_mapping,
    describe,
    format_duration,
    format_time,
    mapping_entries,
    percent,
    safe_url,
)
from heta_nb.render.env import format_count
from heta_nb.render.limits import RenderLimits

__all__ = ["header_context"]


def _manifests(manifest: Any) -> list[Mapping[str, Any]]:
    """The KB manifest(s) in either of Heta's shapes (as ``EvaluationReport.knowledge_base_manifests``)."""
    if not isinstance(manifest, Mapping) or not manifest:
        return []
    nested = manifest.get("knowledge_bases")
    if len(manifest) == 1 and isinstance(nested, (list, tuple)):
        return [item for item in nested if isinstance(item, Mapping)]
    return [manifest]


def header_context(
    report: EvaluationReport,
    modes: Sequence[str],
    counts: dict[str, int],
    limits: RenderLimits,
) -> dict[str, Any]:
    """The header of the report view.

    Args:
        report: the report.
        modes: every query mode, in report order.
        counts: ``cases`` (unique case ids), ``results`` and ``errors``.
        limits: what to show at most.

    Returns:
        Plain data: names and counts as formatted text, settings, manifests, recipe steps.
    """
    data = report.raw
    benchmark = as_mapping(data.get("benchmark"))
    name_chars = limits.max_name_chars
    # The raw JSON, not the frozen attribute views: a KB manifest lists every raw,
    # parsed and chunk key of the corpus, and freezing it would cost more than the view.
    metadata = as_mapping(data.get("metadata"))
    run = as_mapping(metadata.get("heta_nb"))
    status = run.get("status") if isinstance(run.get("status"), str) else None
    done, total = run.get("done"), run.get("total")
    banner = None
    if status is not None and status != "complete":
        if isinstance(done, int) and isinstance(total, int) and not isinstance(done, bool):
            progress = f"{done:,} of {total:,} results recorded ({percent(done, total)})"
        else:
            progress = "progress unknown"
        banner = {
            "status": shorten(status, 40),
            "problem": status in ("cancelled", "failed"),
            "progress": progress,
            "failure": clip(run.get("failure"), limits.max_text_chars) if run.get("failure") else None,
        }
    raw_warnings = run.get("warnings")
    warnings: Sequence[Any] = raw_warnings if isinstance(raw_warnings, (list, tuple)) else ()
    manifests = []
    all_manifests = _manifests(data.get("knowledge_base_manifest"))
    for manifest in all_manifests[: limits.max_list_items]:
        record = as_mapping(manifest.get("run_record"))
        raw_records = record.get("step_records")
        records: Sequence[Any] = raw_records if isinstance(raw_records, (list, tuple)) else ()
        failed = [s for s in records if isinstance(s, Mapping) and s.get("status") == "failed"]
        manifests.append(
            {
                "name": clip_label(manifest.get("name"), name_chars),
                "status": shorten(record.get("status"), 40) if record.get("status") else "",
                "created_at": shorten(manifest.get("created_at"), 40) if manifest.get("created_at") else "",
                "failed_steps": ", ".join(shorten(s.get("step_name"), 40) for s in failed[:5]),
            }
        )
    steps = []
    raw_steps = as_mapping(data.get("recipe_manifest")).get("steps")
    recipe_steps = [step for step in raw_steps if isinstance(step, Mapping)] if isinstance(raw_steps, list) else []
    for position, step in enumerate(recipe_steps[: limits.max_list_items]):
        steps.append(
            {
                "index": str(position + 1),  # numbered from 1 (Heta's own index is 0-based)
                "name": clip_label(step.get("name"), name_chars),
                "type": clip_label(step.get("type"), name_chars),
            }
        )
    settings = []
    for key, label in (
        ("top_k", "top_k"),
        ("concurrency", "concurrency"),
        ("timeout_s", "timeout"),
        ("retries", "retries"),
        ("resumed", "resumed"),
        ("version", "heta_nb"),
    ):
        value = run.get(key)
        if key == "timeout_s" and isinstance(value, (int, float)) and not isinstance(value, bool):
            settings.append({"key": label, "value": f"{value:g} s"})  # 60 s, not 60.0000
        elif value is not None and not isinstance(value, (Mapping, list, tuple)):
            settings.append({"key": label, "value": shorten(describe(value, 40), 40)})
    options = run.get("query_options")
    if isinstance(options, Mapping) and options:
        settings.append({"key": "query_options", "value": shorten(describe(options, 80), 80)})
    shard = run.get("shard")
    if isinstance(shard, Mapping):
        settings.append(
            {"key": "shard", "value": f"{describe(shard.get('index'), 12)} of {describe(shard.get('count'), 12)}"}
        )
    raw_units = metadata.get("run_units")
    units: Sequence[Any] = raw_units if isinstance(raw_units, (list, tuple)) else ()
    documents = metadata.get("benchmark_document_keys")
    run_meta = mapping_entries(metadata, limits, skip=("heta_nb", "run_units", "benchmark_document_keys"))
    homepage = benchmark.get("homepage")
    results_total = counts["results"]
    return {
        "report_id": clip_label(data.get("report_id"), name_chars),
        "report_key": clip_label(data.get("report_key"), name_chars + 80) if data.get("report_key") else None,
        "schema_version": shorten(data.get("schema_version"), 20),
        "benchmark": {
            "name": clip_label(benchmark.get("name"), name_chars),
            "version": clip_label(benchmark.get("version"), 40),
            "split": clip_label(benchmark.get("split"), 40),
            "task_type": clip_label(benchmark.get("task_type"), name_chars),
            "build_scope": shorten(benchmark.get("build_scope"), 20),
            "homepage": clip_label(homepage, name_chars + 40) if homepage else None,
            "homepage_url": safe_url(homepage),
            "license": clip_label(benchmark.get("license"), name_chars) if benchmark.get("license") else None,
            "citation": clip(benchmark.get("citation"), limits.max_text_chars) if benchmark.get("citation") else None,
        },
        "knowledge_base_name": clip_label(data.get("knowledge_base_name"), name_chars),
        "manifests": manifests,
        "manifests_more": max(0, len(all_manifests) - len(manifests)),
        "steps": steps,
        "steps_more": max(0, len(recipe_steps) - len(steps)),
        "modes": [clip_label(mode, name_chars) for mode in modes[: limits.max_list_items]],
        "modes_more": max(0, len(modes) - limits.max_list_items),
        "started_at": format_time(data.get("started_at")),
        "finished_at": format_time(data.get("finished_at")),
        "duration": format_duration(report.duration_s),
        "cases": format_count(counts["cases"]),
        "results": format_count(results_total),
        "errors": format_count(counts["errors"]),
        "errors_pct": percent(counts["errors"], results_total),
        "has_errors": counts["errors"] > 0,
        "status": shorten(status, 40) if status else None,
        "banner": banner,
        "warnings": [clip(describe(w, limits.max_text_chars), limits.max_text_chars) for w in warnings[:10]],
        "warnings_more": max(0, len(warnings) - 10),
        "settings": settings,
        "units": format_count(len(units)) if units else None,
        "unit_ids": ", ".join(shorten(as_mapping(u).get("unit_id"), 40) for u in units[:10])
        + (f", … +{len(units) - 10:,}" if len(units) > 10 else ""),
        "documents": format_count(len(documents)) if isinstance(documents, (list, tuple)) else None,
        "run_meta": run_meta,
    }
