"""The render context of a run's static snapshot: progress, rate, ETA, errors, running means."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heta_nb._util.text import clip, clip_label, plural, shorten
from heta_nb.render.context.formatting import format_duration, percent
from heta_nb.render.env import format_count, format_number
from heta_nb.render.limits import DEFAULT_LIMITS, RenderLimits

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.runner.state import RunState

__all__ = ["run_context"]


_RUN_STATUSES = ("pending", "running", "complete", "cancelled", "failed")


def run_context(state: RunState, limits: RenderLimits | None = None) -> dict[str, Any]:
    """A static snapshot of a run's progress: counts, rate, ETA, errors, running means.

    Args:
        state: the run's state.
        limits: what to show at most.

    Returns:
        Plain data for ``run.html.j2``.
    """
    limits = limits or DEFAULT_LIMITS
    status = state.status if state.status in _RUN_STATUSES else "unknown"
    total, done = state.total, state.done
    rate = state.rate
    eta = state.eta_s
    modes = list(state.modes)[: limits.max_modes]
    metrics = list(state.metrics)[: limits.max_metrics]
    rows = []
    for mode in modes:
        progress = state.per_mode.get(mode)
        rows.append(
            {
                "mode": clip_label(mode, limits.max_name_chars),
                "done": format_count(progress.done if progress else 0),
                "errors": format_count(progress.errors if progress else 0),
                "has_errors": bool(progress and progress.errors),
                "means": [format_number(progress.mean(m) if progress else None) for m in metrics],
            }
        )
    by_type = sorted(state.errors_by_type.items(), key=lambda item: (-item[1], item[0]))
    benchmark = state.benchmark
    name = " ".join(
        shorten(benchmark.get(k), 40) for k in ("name", "version", "split") if isinstance(benchmark.get(k), str)
    )
    return {
        "status": status,
        "problem": status in ("cancelled", "failed"),
        "report_id": clip_label(state.report_id, limits.max_name_chars),
        "knowledge_base_name": clip_label(state.knowledge_base_name, limits.max_name_chars),
        "benchmark": clip_label(name, limits.max_name_chars * 2),
        "done": format_count(done),
        "total": format_count(total),
        "value": done,
        "max": max(total, 1),
        "percent": percent(done, total) if total else ("100.0%" if state.finished else "0.0%"),
        "resumed": format_count(state.resumed) if state.resumed else None,
        "rate": f"{rate:,.1f} results/s" if rate else "—",
        "eta": format_duration(eta) if eta is not None and not state.finished else None,
        "elapsed": format_duration(state.elapsed_s),
        "errors": plural(state.errors, "error"),
        "has_errors": state.errors > 0,
        "errors_by_type": [
            {"type": clip_label(t, limits.max_name_chars), "count": format_count(n)} for t, n in by_type[:10]
        ],
        "last_errors": [
            {
                "mode": clip_label(mode, limits.max_name_chars),
                "case_id": clip_label(case_id, limits.max_name_chars),
                "type": clip_label(error_type, limits.max_name_chars),
                "message": clip(message, limits.max_text_chars),
            }
            for mode, case_id, error_type, message in state.last_errors[-5:]
        ],
        "metrics": [{"name": clip_label(m, limits.max_name_chars)} for m in metrics],
        "rows": rows,
        "build_steps": [
            {"name": clip_label(step, limits.max_name_chars), "status": shorten(step_status, 20)}
            for step, step_status in state.build_steps[: limits.max_list_items]
        ],
        "build_status": shorten(state.build_status, 20) if state.build_status else None,
        "unit": (
            f"unit {state.unit_index + 1:,} of {state.units:,}" if state.units > 1 and state.unit_index >= 0 else None
        ),
        "warnings": [clip(w, limits.max_text_chars) for w in state.warnings[:10]],
        "error": clip(state.error, limits.max_text_chars) if state.error else None,
        "report_key": clip_label(state.report_key, limits.max_name_chars + 80) if state.report_key else None,
    }
