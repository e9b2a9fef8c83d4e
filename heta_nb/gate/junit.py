"""A check as JUnit XML: one test case per mode × metric (and per mode whose errors are gated).

A regression or an unverified drop is a ``<failure>`` (an unverified drop that
``allow_unverified`` lets pass is not), a pair that cannot be compared or a metric whose
evaluator failed an ``<error>``, an n/a metric (not tested) ``<skipped>``; the cases that
broke go in the test case's ``<system-out>``. The suite carries the check's ``timestamp``
and ``time`` (seconds), each test case the time of its mode's comparison shared among
its rows. Text is made valid XML 1.0 first; the output validates against Jenkins'
``junit-10.xsd``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb._util.text import one_line, shorten
from heta_nb.gate.numbers import num, p_shown, signed

__all__ = ["to_junit", "xml_text"]

_INVALID_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
CASES_SHOWN = 50


def xml_text(value: Any) -> str:
    """Text XML 1.0 can hold: control characters and lone surrogates become U+FFFD."""
    return _INVALID_XML.sub("\ufffd", "" if value is None else str(value))


def _element(parent: ET.Element, tag: str, **attributes: Any) -> ET.Element:
    return ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attributes.items()})


def _seconds(value: float) -> str:
    """A JUnit time: seconds with three decimals (``0.042``), never negative."""
    return f"{max(0.0, float(value)):.3f}"


def _details(row: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    lines = [
        f"{row['verdict']}: {row['reason']}",
        f"family: {row['family'] or 'not tested'}",
        f"n = {row['n']:,} paired cases; baseline {num(row['baseline_mean'])}, new {num(row['new_mean'])}, "
        f"difference {signed(row['diff'])}, {settings['confidence'] * 100:g}% CI "
        f"[{signed(row['ci_low'])}, {signed(row['ci_high'])}], p {p_shown(row['p_value'], settings['alpha'])}, "
        f"adjusted {p_shown(row['p_adjusted'], settings['alpha'])}; "
        f"{row['wins']:,} better, {row['ties']:,} tied, {row['losses']:,} worse",
    ]
    if row["floor"] is not None:
        lines.append(f"floor {row['floor']:g}: the new report's mean is {num(row['floor_mean'])}")
    return "\n".join(lines)


def _flip_lines(changes: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        f"{c['kind']}: {c['case_id']} {shorten(one_line(c['query']), 120)!r}: {c['baseline']!r} -> {c['new']!r}"
        for c in changes[:CASES_SHOWN]
    ]
    if len(changes) > CASES_SHOWN:
        lines.append(f"... and {len(changes) - CASES_SHOWN:,} more")
    return "\n".join(lines)


def to_junit(data: Mapping[str, Any], headline: str) -> str:
    """The check as a JUnit XML document (``<testsuites>`` with one ``<testsuite>``).

    Args:
        data: ``CheckResult.to_dict()``.
        headline: The check's headline (the suite's ``<system-out>``).

    Returns:
        The XML text, UTF-8 declared.
    """
    rows = data["rows"]
    settings = data["settings"]
    allowed = bool(settings.get("allow_unverified"))
    gated = [e for e in data["errors"] if e["allowed"] is not None]
    structural = bool(data["reasons"]) and not rows
    tests = len(rows) + len(gated) + (1 if structural else 0)
    failing = {"regression"} | (set() if allowed else {"unverified drop"})
    failures = sum(1 for r in rows if r["verdict"] in failing) + sum(1 for e in gated if e["failed"])
    errors = sum(1 for r in rows if r["verdict"] in ("not comparable", "evaluator errors")) + (1 if structural else 0)
    skipped = sum(1 for r in rows if r["verdict"] == "n/a")
    name = f"heta-nb check: {data['new']['report_id']} vs {data['baseline']['report_id']}"
    total = data.get("duration_s") or 0.0
    times = data.get("mode_seconds") or {}
    per_mode = {mode: sum(1 for r in rows if r["mode"] == mode) for mode in times}
    root = ET.Element("testsuites", {"name": "heta-nb check"})
    for key, value in (("tests", tests), ("failures", failures), ("errors", errors), ("time", _seconds(total))):
        root.set(key, str(value))
    suite = _element(
        root,
        "testsuite",
        name=name,
        tests=tests,
        failures=failures,
        errors=errors,
        skipped=skipped,
        time=_seconds(total),
        timestamp=(data.get("checked_at") or "").removesuffix("Z"),  # Ant's form: ISO 8601, no zone (UTC)
    )
    properties = _element(suite, "properties")
    for key, value in (
        ("verdict", data["verdict"]),
        ("new", data["new"]["report_id"]),
        ("baseline", data["baseline"]["report_id"]),
        ("benchmark", data["new"]["benchmark"]),
        ("alpha", settings["alpha"]),
        ("correction", settings["correction"]),
        ("max_drop", settings["thresholds"]["max_drop"]),
    ):
        _element(properties, "property", name=key, value=value)
    flips: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for change in data["flips"]:
        flips.setdefault((change["mode"], change["metric"]), []).append(change)
    if structural:
        case = _element(suite, "testcase", classname="heta_nb.check", name="comparable", time=_seconds(0.0))
        _element(case, "error", type="not comparable", message=one_line("; ".join(data["reasons"]))).text = xml_text(
            "\n".join(data["reasons"])
        )
    for row in rows:
        share = times.get(row["mode"], 0.0) / per_mode[row["mode"]] if per_mode.get(row["mode"]) else 0.0
        case = _element(
            suite, "testcase", classname=f"heta_nb.check.{row['mode']}", name=row["metric"], time=_seconds(share)
        )
        details = _details(row, settings)
        verdict = row["verdict"]
        if verdict in failing:
            _element(case, "failure", type=verdict, message=one_line(row["reason"])).text = xml_text(details)
        elif verdict in ("not comparable", "evaluator errors"):
            _element(case, "error", type=verdict, message=one_line(row["reason"])).text = xml_text(details)
        elif verdict == "n/a":
            _element(case, "skipped", type="n/a", message=one_line(row["reason"])).text = xml_text(details)
        changed = flips.get((row["mode"], row["metric"]))
        out = details if not changed else details + "\n" + _flip_lines(changed)
        _element(case, "system-out").text = xml_text(out)
    for e in gated:
        case = _element(suite, "testcase", classname=f"heta_nb.check.{e['mode']}", name="errors", time=_seconds(0.0))
        summary = (
            f"{e['introduced']:,} case(s) started erroring (at most {e['allowed']} allowed); "
            f"errors {e['baseline_errors']:,} -> {e['new_errors']:,}, {e['fixed']:,} fixed"
        )
        if e["failed"]:
            _element(case, "failure", type="regression", message=summary).text = xml_text(
                _flip_lines([c for c in data["error_changes"] if c["mode"] == e["mode"] and c["kind"] == "new error"])
            )
        _element(case, "system-out").text = xml_text(summary)
    _element(suite, "system-out").text = xml_text(headline)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
