"""A check's plain data (``CheckResult.to_dict()``) as text, JSON, markdown or JUnit XML; the headline.

Every formatter reads the plain dict only, so a check saved as JSON formats the same.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb._util.text import listing, one_line, plural, shorten
from heta_nb._util.times import minute_utc
from heta_nb._util.unicode import valid_text
from heta_nb.gate import junit, markdown
from heta_nb.gate.numbers import ARROWS, num, p_shown, signed

__all__ = ["CASES_SHOWN", "FORMATS", "family_text", "headline", "render", "settings_text", "to_json", "to_text"]

FORMATS = ("text", "markdown", "json", "junit")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters (a terminal escape, NUL) in report text: shown as U+FFFD in text and markdown."""
CASES_SHOWN = 10
"""Changed cases listed per kind in the text format (the JSON format has them all)."""
QUERY_CHARS = 80


def headline(data: Mapping[str, Any]) -> str:
    """One line that says it all: ``"FAILED: regression in 1 of 12 checks (ndcg@5/full_text_search)"``.

    Args:
        data: ``CheckResult.to_dict()``.

    Returns:
        The line.
    """
    rows = data["rows"]
    verdict = data["verdict"]
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in ARROWS}
    checks = plural(len(rows), "check")
    allowed = bool(data["settings"].get("allow_unverified"))
    if verdict in ("regression", "unverified drop"):
        named = [f"{r['metric']}/{r['mode']}" for r in rows if r["verdict"] == "regression"]
        named += [f"errors/{e['mode']}" for e in data["errors"] if e["failed"]]
        unverified = [f"{r['metric']}/{r['mode']}" for r in rows if r["verdict"] == "unverified drop"]
        parts = [f"regression in {len(named)} of {checks} ({listing(named, 3)})"] if named else []
        if unverified and not allowed:
            parts.append(f"unverified drop in {len(unverified)} ({listing(unverified, 3)})")
        return "FAILED: " + "; ".join(parts)
    if verdict in ("not comparable", "evaluator errors"):
        why = list(data["reasons"]) + [
            f"{r['metric']}/{r['mode']}: {r['reason']}" for r in rows if r["verdict"] == "evaluator errors"
        ]
        why = why or [f"{r['metric']}/{r['mode']}: {r['reason']}" for r in rows if r["verdict"] == verdict]
        label = "not comparable" if verdict == "not comparable" else "evaluator errors"
        return f"ERROR: {label}: {one_line(why[0]) if why else 'no check could be made'}" + (
            f" (and {len(why) - 1} more)" if len(why) > 1 else ""
        )
    parts = [
        f"{counts[v]} {label}"
        for v, label in (
            ("improvement", "improved"),
            ("within tolerance", "dropped within tolerance"),
            ("unverified drop", "unverified drop(s) allowed"),
            ("underpowered", "underpowered (too few cases to see the tolerated drop)"),
            ("no detectable change", "no detectable change"),
            ("n/a", "n/a (not tested)"),
        )
        if counts[v]
    ]
    return f"PASSED: no regression in {checks} ({', '.join(parts)})"


def _identity(side: Mapping[str, Any]) -> str:
    text = f"{side['report_id']} ({side['knowledge_base_name']}; {side['benchmark']}; {side['cases']} case results"
    if side.get("status") and side["status"] != "complete":
        text += f"; {side['status']}"
    text += f"; started {minute_utc(side['started_at']) or side['started_at']})"
    return text + (f" from {side['source']}" if side.get("source") else "")


def _table(rows: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> list[str]:
    confidence, alpha = settings["confidence"], settings["alpha"]
    p_name = "p_adj" if settings["correction"] == "holm" else "p_unc"
    header = (
        "mode",
        "metric",
        "n",
        "baseline",
        "new",
        "diff",
        f"{confidence * 100:g}% CI",
        "p",
        p_name,
        "mdd",
        "verdict",
    )
    table = [header]
    for r in rows:
        table.append(
            (
                r["mode"],
                r["metric"],
                f"{r['n']:,}",
                num(r["baseline_mean"]),
                num(r["new_mean"])
                + (f" ({r['new_evaluator_errors']:,} evaluator errors)" if r.get("new_evaluator_errors") else ""),
                signed(r["diff"]),
                f"[{signed(r['ci_low'])}, {signed(r['ci_high'])}]" if math.isfinite(r["ci_low"]) else "n/a",
                p_shown(r["p_value"], alpha),
                p_shown(r["p_adjusted"], alpha),
                num(r.get("min_detectable_difference")),
                f"{ARROWS[r['verdict']]} {r['verdict']}: {r['reason']}",
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    right = {2, 3, 4, 5, 7, 8, 9}
    lines = []
    for line in table:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))]
        lines.append("  ".join([*cells, line[-1]]).rstrip())
    return lines


def _value(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower() if isinstance(value, bool) else "—"
    if isinstance(value, (int, float)):
        return num(float(value))
    return shorten(one_line(value), 60)


def _changes(title: str, changes: Sequence[Mapping[str, Any]]) -> list[str]:
    if not changes:
        return []
    lines = [f"{title}:"]
    for c in changes[:CASES_SHOWN]:
        where = c["mode"] + (f" {c['metric']}" if c["metric"] else "")
        query = shorten(one_line(c["query"]), QUERY_CHARS)
        lines.append(
            f"  {c['kind']:<11} {where}  {c['case_id']}  {query!r}: {_value(c['baseline'])} -> {_value(c['new'])}"
        )
    if len(changes) > CASES_SHOWN:
        lines.append(f"  ... and {len(changes) - CASES_SHOWN:,} more (--format json lists them all)")
    return lines


def family_text(settings: Mapping[str, Any]) -> str:
    """The multiplicity convention of a check in words: ``"Holm over the 6 metrics of
    extractive_answer (new vs baseline)"``, or per mode when there are several."""
    families = settings.get("families") or {}
    how = "Holm" if settings["correction"] == "holm" else "no correction"
    if not families:
        return f"{how} per mode over its metrics"
    if len(families) == 1:
        return str(next(iter(families.values())))
    sizes = settings.get("family_sizes") or {}
    each = ", ".join(f"{sizes.get(mode, '?')} in {mode}" for mode in families)
    return f"{how} over each mode's metrics ({each})"


def settings_text(settings: Mapping[str, Any]) -> str:
    """``"alpha 0.05, Holm over the 6 metrics of extractive_answer (new vs baseline), 10,000
    resamples, seed 0, max_drop 0"``.

    Args:
        settings: ``CheckResult.settings``.

    Returns:
        The settings in one line.
    """
    parts = [
        f"alpha {settings['alpha']:g}",
        family_text(settings),
        f"{settings['resamples']:,} resamples",
        f"seed {settings['seed']}",
        f"max_drop {settings['thresholds']['max_drop']}",
    ]
    thresholds = settings["thresholds"]
    if thresholds["max_drop_by_metric"]:
        parts.append("max_drop " + ", ".join(f"{k} {v}" for k, v in thresholds["max_drop_by_metric"].items()))
    if thresholds["floors"]:
        parts.append("floors " + ", ".join(f"{k} {v:g}" for k, v in thresholds["floors"].items()))
    if settings.get("max_new_errors") is not None:
        parts.append(f"max_new_errors {settings['max_new_errors']}")
    if settings.get("allow_unverified"):
        parts.append("unverified drops allowed")
    if settings.get("strict_floors"):
        parts.append("strict floors")
    return ", ".join(parts)


def to_text(data: Mapping[str, Any]) -> str:
    """The check as plain text: headline, both reports, the table, reasons, errors, changed cases.

    Args:
        data: ``CheckResult.to_dict()``.

    Returns:
        The text.
    """
    lines = [
        f"heta-nb check: {headline(data)}",
        f"new:      {_identity(data['new'])}",
        f"baseline: {_identity(data['baseline'])}",
    ]
    for reason in data["reasons"]:
        lines.append(f"not comparable: {reason}")
    if data["rows"]:
        lines.extend(_table(data["rows"], data["settings"]))
    for e in data["errors"]:
        if e["introduced"] or e["fixed"] or e["failed"]:
            gate = f" (at most {e['allowed']} allowed: FAILED)" if e["failed"] else ""
            lines.append(
                f"errors in {e['mode']}: {e['new_errors']} (baseline {e['baseline_errors']}), "
                f"{e['introduced']} new, {e['fixed']} fixed{gate}"
            )
    flips = data["flips"]
    if flips:
        broke = [c for c in flips if c["kind"] == "broke"]
        fixed = [c for c in flips if c["kind"] == "fixed"]
        lines.extend(_changes(f"cases that broke (passed -> failed): {len(broke):,}", broke))
        lines.extend(_changes(f"cases fixed (failed -> passed): {len(fixed):,}", fixed))
    lines.extend(_changes("error changes", data["error_changes"]))
    if data["warnings"]:
        lines.append(f"{len(data['warnings'])} warning(s):")
        lines.extend(f"  - {w}" for w in data["warnings"])
    why = data.get("why") or {}
    if any(why.get(key) for key in ("stages", "recipes", "slices")):
        lines.append("why it changed:")
        lines.extend(f"  - {line}" for line in why.get("stages", []))
        lines.extend(f"  - recipe: {line}" if not line.startswith(("recipe", "knowledge", "bench")) else f"  - {line}"
                     for line in why.get("recipes", []))  # fmt: skip
        lines.extend(f"  - slice: {line}" for line in why.get("slices", []))
    if data["notes"]:
        lines.append("notes:")
        lines.extend(f"  - {n}" for n in data["notes"])
    lines.append(f"settings: {settings_text(data['settings'])}")
    return "\n".join(lines)


def _plain(value: Any) -> Any:
    """JSON-ready: NaN and infinities become None (strict JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def to_json(data: Mapping[str, Any]) -> str:
    """The check as strict JSON (NaN as null), keys in a stable order, indented.

    Args:
        data: ``CheckResult.to_dict()``.

    Returns:
        The JSON text.
    """
    return json.dumps(_plain({"headline": headline(data), **data}), ensure_ascii=False, indent=2, allow_nan=False)


def render(data: Mapping[str, Any], kind: str) -> str:
    """The check in one of :data:`FORMATS`.

    Args:
        data: ``CheckResult.to_dict()``.
        kind: ``"text"``, ``"markdown"``, ``"json"`` or ``"junit"``.

    Returns:
        The text (lone surrogates replaced, so it can be written as UTF-8).

    Raises:
        ValueError: An unknown format.
    """
    if kind == "text":
        text = _CONTROL.sub("\ufffd", to_text(data))
    elif kind == "markdown":
        text = _CONTROL.sub("\ufffd", markdown.to_markdown(data, headline(data), settings_text(data["settings"])))
    elif kind == "json":
        text = to_json(data)
    elif kind == "junit":
        text = junit.to_junit(data, headline(data))
    else:
        raise ValueError(f"unknown format {kind!r}; use one of {', '.join(FORMATS)}")
    return valid_text(text)
