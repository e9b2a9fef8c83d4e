"""The render context of a sweep's progress: one row per (recipe, benchmark) pair, and the overall figures."""

from __future__ import annotations

from typing import Any

from heta_nb._util.text import compact_duration, shorten

__all__ = ["PHASE_CLASSES", "sweep_context"]

NAME_CHARS = 60
MESSAGE_CHARS = 300
PHASE_CLASSES = {
    "queued": "heta-muted",
    "building": "heta-sw-active",
    "running": "heta-sw-active",
    "done": "heta-true",
    "reused": "heta-true",
    "failed": "heta-bad",
    "cancelled": "heta-bad",
}
"""A pair's phase -> the CSS class of its status cell."""


def _status(pair: Any) -> str:
    if pair.phase == "building":
        return f"building {pair.step}" if pair.step else "building"
    if pair.phase == "running":
        return f"running {pair.done:,}/{pair.total:,}" if pair.total else "running"
    return str(pair.phase)


def sweep_context(state: Any) -> dict[str, Any]:
    """Plain data for ``sweep.html.j2`` from a :class:`~heta_nb.sweeps.status.SweepState`.

    Args:
        state: the sweep's state (duck-typed: ``pairs``, ``executor``, ``eta_s``...).

    Returns:
        The rows (recipe, benchmark, status, progress, errors, elapsed, message), the
        counts per phase, the overall ETA and the Dask dashboard link (http(s) only).
    """
    now = state.now
    rows = []
    for pair in state.pairs:
        fraction = pair.done / pair.total if pair.total else (1.0 if pair.phase in ("done", "reused") else 0.0)
        rows.append(
            {
                "recipe": shorten(pair.recipe, NAME_CHARS),
                "benchmark": shorten(pair.benchmark, NAME_CHARS),
                "phase": pair.phase,
                "status": shorten(_status(pair), NAME_CHARS),
                "css": PHASE_CLASSES.get(pair.phase, ""),
                "value": min(pair.done, pair.total) if pair.total else (1 if fraction else 0),
                "max": pair.total or 1,
                "percent": f"{100 * fraction:.0f} %",
                "errors": pair.errors,
                "elapsed": compact_duration(pair.elapsed(now)) if pair.started is not None else "",
                "message": shorten(pair.message, MESSAGE_CHARS) if pair.message else "",
            }
        )
    total = len(state.pairs)
    finished = sum(1 for p in state.pairs if p.is_finished)
    counts = [
        {"phase": phase, "count": n, "css": PHASE_CLASSES[phase]}
        for phase in ("queued", "building", "running", "done", "reused", "failed", "cancelled")
        if (n := sum(1 for p in state.pairs if p.phase == phase))
    ]
    dashboard = state.dashboard if isinstance(state.dashboard, str) else None
    if dashboard and not dashboard.lower().startswith(("http://", "https://")):
        dashboard = None
    failed = sum(1 for p in state.pairs if p.phase in ("failed", "cancelled"))
    return {
        "title": f"Sweep of {total} pair{'s' if total != 1 else ''}",
        "executor": shorten(state.executor, NAME_CHARS),
        "finished": finished,
        "total": total,
        "all_done": state.finished,
        "badge": ("heta-badge-bad" if failed else "heta-badge-ok") if state.finished else "heta-badge-warn",
        "badge_text": ("finished with problems" if failed else "finished") if state.finished else "running",
        "counts": counts,
        "eta": "" if state.finished else compact_duration(state.eta_s),
        "elapsed": compact_duration(state.elapsed_s),
        "dashboard": dashboard,
        "rows": rows,
    }
