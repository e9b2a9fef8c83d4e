"""A check as GitHub-flavoured markdown for a CI job summary: verdict, a table with arrows, cases collapsed.

Every piece of report text (ids, modes, metrics, queries, errors) goes through :func:`md`,
which escapes HTML and markdown: a job summary renders HTML, and a query may hold anything.
It also breaks GitHub's extended autolinks (:func:`heta_nb._util.text.unlinked`): a URL, ``www.`` name or
e-mail address in a case id or a query stays text, never a live link in the summary.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb._util.text import one_line, shorten, unlinked
from heta_nb.gate.numbers import ARROWS, num, p_shown, signed

__all__ = ["CASES_SHOWN", "md", "to_markdown"]

CASES_SHOWN = 50
"""Changed cases listed per section (the JSON format has them all)."""
QUERY_CHARS = 120
ICONS = {
    "regression": "❌",
    "unverified drop": "❌",
    "evaluator errors": "⚠️",
    "not comparable": "⚠️",
    "improvement": "✅",
    "within tolerance": "✅",
    "underpowered": "🔍",
    "no detectable change": "✅",
    "n/a": "✅",
}
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md(value: Any, limit: int | None = None) -> str:
    """Text safe in markdown and in a table cell: one line, HTML and markdown characters escaped.

    ``@`` is written as ``&#64;`` so a name never mentions a GitHub user, and URLs,
    ``www.`` names and e-mail addresses are no links (:func:`heta_nb._util.text.unlinked`).

    Args:
        value: Any text (None reads as empty).
        limit: Shorten to this many characters first.

    Returns:
        The escaped text.
    """
    text = one_line("" if value is None else value)
    if limit is not None:
        text = shorten(text, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return unlinked(_SPECIAL.sub(r"\\\1", text).replace("@", "&#64;"))


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if value is None:
        return "—"
    if isinstance(value, (int, float)):
        return num(float(value))
    return md(value, 60)


def _diff(row: Mapping[str, Any]) -> str:
    text = signed(row["diff"])
    return f"**{text}**" if row["verdict"] in ("regression", "improvement") else text


def _rows(rows: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> list[str]:
    p_name = "p (Holm)" if settings["correction"] == "holm" else "p (uncorrected)"
    lines = [
        f"| mode | metric | n | baseline | new | Δ | {settings['confidence'] * 100:g}% CI | p | {p_name} | detects ≥ "
        "| verdict |",
        "|---|---|--:|--:|--:|--:|:-:|--:|--:|--:|---|",
    ]
    for r in rows:
        ci = f"[{signed(r['ci_low'])}, {signed(r['ci_high'])}]" if math.isfinite(r["ci_low"]) else "n/a"
        floor = f" (floor {r['floor']:g})" if r["floor"] is not None else ""
        errors = r.get("new_evaluator_errors") or 0
        new = num(r["new_mean"]) + (f" ⚠️ {errors:,} evaluator error{'s' if errors != 1 else ''}" if errors else "")
        lines.append(
            f"| {md(r['mode'])} | {md(r['metric'])}{floor} | {r['n']:,} | {num(r['baseline_mean'])} | "
            f"{new} | {_diff(r)} | {ci} | {p_shown(r['p_value'], settings['alpha'])} | "
            f"{p_shown(r['p_adjusted'], settings['alpha'])} | {num(r.get('min_detectable_difference'))} | "
            f"{ARROWS[r['verdict']]} **{r['verdict']}**: {md(r['reason'])} |"
        )
    return lines


def _cases(title: str, changes: Sequence[Mapping[str, Any]], *, metric: bool) -> list[str]:
    if not changes:
        return []
    lines = [
        f"<details><summary>{title}</summary>",
        "",
        "| | mode | " + ("metric | " if metric else "") + "case | query | baseline | new |",
        "|---|---|" + ("---|" if metric else "") + "---|---|--:|--:|",
    ]
    for c in changes[:CASES_SHOWN]:
        mark = "🔻" if c["kind"] in ("broke", "new error") else "🔺"
        lines.append(
            f"| {mark} {md(c['kind'])} | {md(c['mode'])} | "
            + (f"{md(c['metric'])} | " if metric else "")
            + f"{md(c['case_id'], 60)} | {md(c['query'], QUERY_CHARS)} | {_value(c['baseline'])} | {_value(c['new'])} |"
        )
    if len(changes) > CASES_SHOWN:
        lines.append("")
        lines.append(f"… and {len(changes) - CASES_SHOWN:,} more (`--format json` lists them all).")
    lines.extend(["", "</details>", ""])
    return lines


def _side(side: Mapping[str, Any]) -> str:
    return f"**{md(side['report_id'], 80)}** ({md(side['knowledge_base_name'], 80)}, {side['cases']:,} case results)"


def to_markdown(data: Mapping[str, Any], headline: str, settings: str) -> str:
    """The check as markdown: a heading with the verdict, both reports, the table, then details.

    Args:
        data: ``CheckResult.to_dict()``.
        headline: The check's headline.
        settings: The settings in one line.

    Returns:
        The markdown text.
    """
    verdict = data["verdict"]
    benchmarks = sorted({data["new"]["benchmark"], data["baseline"]["benchmark"]})
    lines = [
        f"### {ICONS[verdict]} heta-nb check: {verdict}",
        "",
        md(headline),
        "",
        f"new {_side(data['new'])} vs baseline {_side(data['baseline'])} · benchmark "
        + " / ".join(md(b, 80) for b in benchmarks),
        "",
    ]
    if data["reasons"]:
        lines.append("**Not comparable:**")
        lines.extend(f"- {md(reason)}" for reason in data["reasons"])
        lines.append("")
    if data["rows"]:
        lines.extend(_rows(data["rows"], data["settings"]))
        lines.append("")
    gated = [e for e in data["errors"] if e["introduced"] or e["fixed"] or e["failed"]]
    if gated:
        lines.append("| mode | errors (baseline → new) | new | fixed | verdict |")
        lines.append("|---|--:|--:|--:|---|")
        for e in gated:
            verdict_text = (
                f"↓ **regression**: more than {e['allowed']} new"
                if e["failed"]
                else ("listed" if e["allowed"] is None else "ok")
            )
            lines.append(
                f"| {md(e['mode'])} | {e['baseline_errors']:,} → {e['new_errors']:,} | {e['introduced']:,} | "
                f"{e['fixed']:,} | {verdict_text} |"
            )
        lines.append("")
    flips = data["flips"]
    broke = [c for c in flips if c["kind"] == "broke"]
    fixed = [c for c in flips if c["kind"] == "fixed"]
    if flips:
        lines.extend(
            _cases(
                f"Flipped cases: {len(broke):,} broke (passed → failed), {len(fixed):,} fixed",
                [*broke, *fixed],
                metric=True,
            )
        )
    changes = data["error_changes"]
    if changes:
        started = sum(1 for c in changes if c["kind"] == "new error")
        lines.extend(_cases(f"Errors: {started:,} new, {len(changes) - started:,} fixed", changes, metric=False))
    if data["warnings"]:
        lines.append(f"<details><summary>⚠️ {len(data['warnings'])} warning(s)</summary>")
        lines.append("")
        lines.extend(f"- {md(w)}" for w in data["warnings"])
        lines.extend(["", "</details>", ""])
    why = data.get("why") or {}
    if any(why.get(key) for key in ("stages", "recipes", "slices")):
        lines.append("**Why it changed**")
        lines.append("")
        lines.extend(f"- {md(line)}" for line in why.get("stages", []))
        if why.get("recipes"):
            lines.append("- what differs between the recipes:")
            lines.extend(f"  - {md(line)}" for line in why["recipes"])
        if why.get("slices"):
            lines.append("- slices:")
            lines.extend(f"  - {md(line)}" for line in why["slices"])
        lines.append("")
    for note in data["notes"]:
        lines.append(f"> {md(note)}")
        lines.append("")
    lines.append(f"<sub>{md(settings)}</sub>")
    return "\n".join(lines) + "\n"
