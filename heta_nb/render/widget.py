"""HTML values of the live runner widget, rendered from a :class:`RunState`."""

from __future__ import annotations

from typing import Any

from heta_nb._util.unicode import valid_text
from heta_nb.progress.console import format_duration
from heta_nb.render.env import environment
from heta_nb.runner.events import RunState

__all__ = ["render_widget_parts", "widget_context"]

_ICONS = {"pending": "·", "running": "⏳", "succeeded": "✓", "failed": "✗", "skipped": "↷"}
_LABELS = {
    "pending": "Starting",
    "running": "Evaluating",
    "complete": "Evaluated",
    "cancelled": "Cancelled",
    "failed": "Failed",
}
MESSAGE_CHARS = 200
NAME_CHARS = 80
MAX_METRICS = 8
MAX_MODES = 12
MAX_ERROR_TYPES = 8
MAX_WARNINGS = 3


def _clip(text: str, limit: int = MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _name(text: str) -> str:
    return _clip(text, NAME_CHARS)


def widget_context(state: RunState) -> dict[str, Any]:
    """Plain data for the widget templates."""
    rate = state.rate
    metrics = list(state.metrics)[:MAX_METRICS]
    rows = []
    for mode in list(state.modes)[:MAX_MODES]:
        progress = state.per_mode.get(mode)
        rows.append(
            {
                "mode": _name(mode),
                "done": progress.done if progress else 0,
                "errors": progress.errors if progress else 0,
                "means": [state.mean(mode, metric) for metric in metrics],
            }
        )
    by_type = sorted(state.errors_by_type.items(), key=lambda item: (-item[1], item[0]))[:MAX_ERROR_TYPES]
    return {
        "status_label": _LABELS.get(state.status, state.status),
        "knowledge_base": _name(state.knowledge_base_name) or "—",
        "benchmark": _name(state.benchmark.get("name", "—")),
        "split": _name(state.benchmark["split"]) if state.benchmark.get("split") else None,
        "modes": [_name(m) for m in list(state.modes)[:MAX_MODES]],
        "report_id": _name(state.report_id),
        "done": state.done,
        "total": state.total,
        "percent": f"{100 * state.fraction:.0f}%",
        "rate": f"{rate:.1f} cases/s" if rate else "– cases/s",
        "eta": format_duration(state.eta_s),
        "elapsed": format_duration(state.elapsed_s),
        "errors": state.errors,
        "resumed": state.resumed,
        "error": _clip(state.error) if state.error else None,
        "warnings": [_clip(w) for w in state.warnings[-MAX_WARNINGS:]],
        "warnings_more": max(0, len(state.warnings) - MAX_WARNINGS),
        "steps": [
            {"name": _name(name), "status": status, "icon": _ICONS.get(status, "·")}
            for name, status in state.build_steps[:40]
        ],
        "build_status": state.build_status,
        "metrics": [_name(m) for m in metrics],
        "metrics_more": max(0, len(state.metrics) - MAX_METRICS),
        "rows": rows if any(r["done"] for r in rows) else [],
        "by_type": [(_name(name), count) for name, count in by_type],
        "last": [
            {"mode": _name(mode), "case_id": _name(case_id), "error_type": _name(error_type), "message": _clip(message)}
            for mode, case_id, error_type, message in reversed(state.last_errors)
        ],
    }


def render_widget_parts(state: RunState) -> dict[str, str]:
    """``{"title", "stats", "build", "means", "errors"}`` HTML strings for the widget."""
    module = environment().get_template("widget.html.j2").module
    context = widget_context(state)
    return {
        name: valid_text(str(getattr(module, name)(context))) for name in ("title", "stats", "build", "means", "errors")
    }
