"""Reading numbers back out of every output, each the way a person or a program would:
HTML by its DOM, text by its lines, files by their own readers."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import lxml.html

from heta_nb.model.summary import MetricSummary

Shown = dict[str, str]
"""What one output says of one (mode, metric): ``value`` ("0.786" or a status such as
"n/a"), and where the output has them ``ci`` ("[0.601, 0.890]"), ``n`` and ``errors``."""


def expected(s: MetricSummary) -> Shown:
    """What every output must say of ``s`` (three decimals)."""
    if not s.scored:
        return {"value": s.status, "errors": str(s.evaluator_errors)}
    low, high = s.shown_ci
    ci = f"[{low:.3f}, {high:.3f}]" if math.isfinite(low) and math.isfinite(high) else ""
    return {"value": f"{s.shown:.3f}", "ci": ci, "n": str(s.shown_n), "errors": str(s.evaluator_errors)}


def _text(node: Any) -> str:
    return " ".join(node.text_content().split())


def _errors(node: Any) -> str:
    found = node.xpath('.//*[@data-testid="heta-evaluator-errors"]')
    if not found:
        return "0"
    match = re.search(r"(\d[\d,]*) evaluator error", _text(found[0]))
    assert match, _text(found[0])
    return match.group(1).replace(",", "")


def report_summary_table(page: str) -> dict[tuple[str, str], Shown]:
    """The report view's score summary (``_repr_html_`` and the standalone page), by its DOM."""
    doc = lxml.html.fromstring(page)
    [section] = doc.xpath('//*[@data-testid="heta-summary"]')
    [table] = section.xpath(".//table")
    metrics = [_text(th) for th in table.xpath(".//thead//th")[1:]]
    found = {}
    for row in table.xpath(".//tbody/tr"):
        mode = _text(row.xpath('.//*[contains(@class, "heta-mode-name")]')[0])
        for metric, cell in zip(metrics, row.xpath("./td")):
            means = cell.xpath('.//*[contains(@class, "heta-mean")]')
            if not means:  # no number: the cell says the status (before its footnote and errors)
                value = (cell.text or "").strip()
                found[(mode, metric)] = {"value": value, "errors": _errors(cell)}
                continue
            ci_box = cell.xpath('.//*[contains(@class, "heta-ci")]')[0]
            ci = " ".join((ci_box.text or "").split())
            n = re.fullmatch(r"n=([\d,]+)", ci_box.xpath('.//*[contains(@class, "heta-ci-n")]')[0].text.strip())[1]
            found[(mode, metric)] = {
                "value": _text(means[0]).replace("★", "").strip(),
                "ci": "" if ci == "[—]" else ci,
                "n": n.replace(",", ""),
                "errors": _errors(cell),
            }
    return found


def widget_means(page: str) -> dict[tuple[str, str], Shown]:
    """The live widget's means table (its HTML part), by its DOM."""
    doc = lxml.html.fromstring(page)
    [table] = doc.xpath('//table[contains(@class, "heta-w-means")]')
    metrics = [_text(th) for th in table.xpath(".//thead//th")[3:]]
    found = {}
    for row in table.xpath(".//tbody/tr"):
        cells = row.xpath("./td")
        mode = _text(cells[0])
        for metric, cell in zip(metrics, cells[3:]):
            found[(mode, metric)] = {"value": (cell.text or "").strip(), "errors": _errors(cell)}
    return found


def frame_rows(frame: Any) -> dict[tuple[str, str], Shown]:
    """Rows of a frame with ``query_mode``/``mode``, ``metric``, ``status``, ``mean``, ``n``,
    ``ci_low``, ``ci_high`` and ``evaluator_errors`` columns (a summary or a leaderboard)."""
    mode_column = "query_mode" if "query_mode" in frame.columns else "mode"
    found = {}
    for row in frame.to_dict("records"):
        key = (str(row[mode_column]), str(row["metric"]))
        if row["status"] != "scored":
            assert row["mean"] is None or math.isnan(row["mean"]), row
            found[key] = {"value": str(row["status"]), "errors": str(int(row["evaluator_errors"]))}
            continue
        low, high = row["ci_low"], row["ci_high"]
        ci = f"[{low:.3f}, {high:.3f}]" if low is not None and math.isfinite(low) else ""
        found[key] = {
            "value": f"{row['mean']:.3f}",
            "ci": ci,
            "n": str(int(row["n"])),
            "errors": str(int(row["evaluator_errors"])),
        }
    return found


def show_table(text: str) -> dict[tuple[str, str], Shown]:
    """``heta-nb show``'s table, read by its columns (pandas right-aligns each under its header)."""
    lines = text.splitlines()
    at = next(i for i, row in enumerate(lines) if row.split()[:3] == ["query_mode", "metric", "mean"])
    header = lines[at]
    names = ["query_mode", "metric", "mean", "95% CI", "n", "evaluator errors", "skipped", "errors", "heta_mean"]
    ends: list[int] = []
    for name in names:  # each header after the one before it ("n" is also in "mean")
        start = header.index(name, ends[-1] if ends else 0)
        ends.append(start + len(name))
    found = {}
    for row in lines[at + 1 :]:
        if not row.strip():
            break
        cells = {name: row[(ends[i - 1] if i else 0) : ends[i]].strip() for i, name in enumerate(names)}
        key = (cells["query_mode"], cells["metric"])
        value = cells["mean"]
        shown = {"value": value, "errors": cells["evaluator errors"].replace(",", "") or "0"}
        if value[:1].isdigit():
            shown.update(ci=cells["95% CI"], n=cells["n"].replace(",", ""))
        found[key] = shown
    return found


def summary_markdown(text: str) -> dict[tuple[str, str], Shown]:
    """The exported notebook's score lines: ``- metric: best in mode (0.786, 95 % CI a–b, n=28); n/a
    in mode (why)`` or ``- metric: 0.786 in mode (n=28); ...``."""
    found: dict[tuple[str, str], Shown] = {}
    for line in text.splitlines():
        match = re.match(r"^- (\S+): (.*)$", line)
        if not match:
            continue
        metric = match[1].replace("\\", "")
        for part in match[2].split("; "):
            part = part.replace("\\", "")
            if m := re.match(r"best in (\S+) \((\d\.\d{3})(?:, 95 % CI (\d\.\d{3})–(\d\.\d{3}))?, n=([\d,]+)\)", part):
                ci = f"[{m[3]}, {m[4]}]" if m[3] else ""
                found[(m[1], metric)] = {"value": m[2], "ci": ci, "n": m[5].replace(",", "")}
            elif m := re.match(r"(\d\.\d{3}) in (\S+) \(n=([\d,]+)\)", part):
                found[(m[2], metric)] = {"value": m[1], "n": m[3].replace(",", "")}
            elif m := re.match(r"(n/a|errored|skipped|labels) in (\S+) \(", part):
                found[(m[2], metric)] = {"value": m[1]}
            elif m := re.match(r"([\d,]+) evaluator errors? in (\S+)$", part):
                found.setdefault((m[2], metric), {})["errors"] = m[1].replace(",", "")
    return found


def agree(name: str, got: Mapping[tuple[str, str], Shown], want: Mapping[tuple[str, str], Shown]) -> None:
    """Every (mode, metric) of ``want`` is in ``got`` and says the same in every field ``got`` has."""
    missing = sorted(set(want) - set(got))
    assert not missing, f"{name}: no {missing}"
    for key, shown in got.items():
        if key not in want:
            continue
        for field, value in shown.items():
            assert value == want[key].get(field, value), f"{name} {key} {field}: {value!r} != {want[key].get(field)!r}"
