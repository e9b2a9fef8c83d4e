"""The render context of a :class:`~heta_nb.gate.CheckResult`: the verdict first, then rows, reasons, cases."""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any

from heta_nb._util.text import one_line, shorten
from heta_nb._util.times import minute_utc
from heta_nb.stats.format import p_text

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.gate import CheckResult

__all__ = ["CASES_SHOWN", "check_context"]

CASES_SHOWN = 20
"""Changed cases listed per kind (the full lists are on the result)."""
NAME_CHARS = 80
QUERY_CHARS = 140
NOTE_CHARS = 400
_CLASSES = {
    "regression": "heta-worse",
    "unverified drop": "heta-worse",
    "evaluator errors": "heta-warn",
    "not comparable": "heta-warn",
    "improvement": "heta-better",
    "within tolerance": "",
    "underpowered": "heta-muted",
    "no detectable change": "",
    "n/a": "heta-muted",
}
_BADGES = {
    "regression": "heta-badge-bad",
    "unverified drop": "heta-badge-bad",
    "evaluator errors": "heta-badge-warn",
    "not comparable": "heta-badge-warn",
}


def _signed(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:+.3f}"


def _value(value: Any) -> Any:
    """A score value as the template's ``num`` filter shows it; text shortened."""
    return value if value is None or isinstance(value, (bool, int, float)) else shorten(one_line(value), 60)


def _changes(changes: list[Any]) -> dict[str, Any]:
    return {
        "total": len(changes),
        "rows": [
            {
                "kind": c.kind,
                "mode": shorten(c.mode, NAME_CHARS),
                "metric": shorten(c.metric, NAME_CHARS) if c.metric else "",
                "case_id": shorten(c.case_id, NAME_CHARS),
                "query": shorten(one_line(c.query), QUERY_CHARS),
                "baseline": _value(c.baseline),
                "new": _value(c.new),
                "bad": c.kind in ("broke", "new error"),
            }
            for c in changes[:CASES_SHOWN]
        ],
        "more": max(0, len(changes) - CASES_SHOWN),
    }


def _side(side: dict[str, Any]) -> dict[str, Any]:
    return {
        "report_id": shorten(side["report_id"], NAME_CHARS),
        "knowledge_base_name": shorten(side["knowledge_base_name"], NAME_CHARS),
        "benchmark": shorten(side["benchmark"], NAME_CHARS),
        "cases": side["cases"],
        "started_at": minute_utc(side["started_at"]) or shorten(side["started_at"], 40),
        "source": shorten(side["source"], 200) if side.get("source") else "",
    }


def check_context(result: CheckResult) -> dict[str, Any]:
    """Plain data for ``check.html.j2``.

    Args:
        result: the check.

    Returns:
        The verdict and headline, both reports, one formatted row per mode × metric, the
        reasons, error counts, changed cases (at most :data:`CASES_SHOWN` per kind),
        warnings, notes and settings.
    """
    from heta_nb.gate.formats import family_text, settings_text

    alpha = result.settings["alpha"]
    rows = []
    for row in result.rows:
        finite = math.isfinite(row.ci_low) and math.isfinite(row.ci_high)
        rows.append(
            {
                "mode": shorten(row.mode, NAME_CHARS),
                "metric": shorten(row.metric, NAME_CHARS),
                "n": row.n,
                "baseline_mean": row.baseline_mean,
                "new_mean": row.new_mean,
                "diff": _signed(row.diff),
                "ci": f"[{_signed(row.ci_low)}, {_signed(row.ci_high)}]" if finite else "—",
                "p": "—" if math.isnan(row.p_adjusted) else p_text(row.p_adjusted, alpha),
                "p_raw": "—" if math.isnan(row.p_value) else p_text(row.p_value, alpha),
                "family": row.family,
                "evaluator_errors": row.new_evaluator_errors,
                "floor": row.floor,
                "verdict": row.verdict,
                "reason": shorten(row.reason, NOTE_CHARS),
                "cls": _CLASSES.get(row.verdict, ""),
            }
        )
    broke = [c for c in result.flips if c.kind == "broke"]
    fixed = [c for c in result.flips if c.kind == "fixed"]
    key = "|".join([result.new["report_id"], result.baseline["report_id"], result.verdict])
    return {
        "id": "heta-k-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10],
        "verdict": result.verdict,
        "ok": result.ok,
        "badge": _BADGES.get(result.verdict, "heta-badge-ok")
        if not result.ok or result.verdict in _BADGES
        else "heta-badge-ok",
        "headline": shorten(result.headline, NOTE_CHARS),
        "new": _side(result.new),
        "baseline": _side(result.baseline),
        "confidence_pct": f"{100 * result.settings['confidence']:g} %",
        "p_header": "p (Holm)" if result.settings["correction"] == "holm" else "p (uncorrected)",
        "family": family_text(result.settings),
        "rows": rows,
        "reasons": [shorten(r, NOTE_CHARS) for r in result.reasons],
        "errors": [
            {
                "mode": shorten(e.mode, NAME_CHARS),
                "baseline": e.baseline_errors,
                "new": e.new_errors,
                "introduced": e.introduced,
                "fixed": e.fixed,
                "allowed": e.allowed,
                "failed": e.failed,
            }
            for e in result.errors
            if e.introduced or e.fixed or e.failed
        ],
        "broke": _changes(broke),
        "fixed": _changes(fixed),
        "error_changes": _changes(result.error_changes),
        "warnings": [shorten(w, NOTE_CHARS) for w in result.warnings],
        "notes": [shorten(n, NOTE_CHARS) for n in result.notes],
        "settings": settings_text(result.settings),
    }
