"""One minimum detectable difference and one "underpowered" verdict everywhere.

A noisy pair (cases moved both ways, the means unchanged) is underpowered on every metric: the
comparison's rows, its repr, its page, ``heta-nb check`` (rows, text, JSON, Markdown), the
leaderboard (frame and hover) and ``heta_nb.plan`` must give the same minimum detectable
difference and call the same rows underpowered. A test that made one output say "no detectable
difference" for a row the comparison calls underpowered fails here.
"""

from __future__ import annotations

import html
import json
import math
import re
import warnings
from typing import Any

import gate_pairs as gp
import lxml.html
import pytest

import heta_nb
from heta_nb.comparison.planning import plan


def _mdd(value: float | None) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


@pytest.fixture(scope="module")
def noisy_pair() -> tuple[Any, Any]:
    base = gp.base_dict()
    noisy = gp.jittered(base)
    noisy["knowledge_base_name"] = "noisy kb"  # another recipe on the leaderboard
    return gp.as_report(base), gp.as_report(noisy)


@pytest.fixture(scope="module")
def comparison(noisy_pair: tuple[Any, Any]) -> Any:
    base, new = noisy_pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.compare(base, new, names=["baseline", "new"])


@pytest.fixture(scope="module")
def want(comparison: Any) -> dict[tuple[str, str], tuple[str, bool]]:
    """``{(mode, metric): (mdd text, underpowered)}`` from the comparison's summary rows."""
    found = {}
    for row in comparison.summary_rows():
        if row["verdict"].startswith("n/a"):
            continue
        found[(row["mode"], row["metric"])] = (
            _mdd(row["min_detectable_difference"]),
            row["verdict"].startswith("underpowered"),
        )
    assert found and all(under for _, under in found.values())  # noise: every tested row is underpowered
    return found


def test_the_rows_say_why_they_are_underpowered(comparison: Any) -> None:
    for row in comparison.summary_rows():
        if row["verdict"].startswith("underpowered"):
            mdd = row["min_detectable_difference"]
            assert mdd > abs(row["mean_diff"]) and not row["significant"]
            assert f"differences under {mdd:.3g} cannot be told apart with {row['n']} cases" in row["verdict"]
            assert comparison.sensitivity(row["system"], row["metric"]).mdd == mdd


def test_repr_and_page(comparison: Any, want: Any) -> None:
    text = repr(comparison)
    found = {}
    for line in text.splitlines():
        m = re.match(r"^new/(\S+)\s+(\S+)\s+\d+\s+.*?\]\s+\S+\s+\S+\s+(\S+)\s+(.+)$", line)
        if m:
            found[(m[1], m[2])] = (m[3], m[4].startswith("underpowered"))
    assert {k: v for k, v in found.items() if k in want} == want
    doc = lxml.html.fromstring(comparison._repr_html_())
    [table] = doc.xpath('//table[@data-testid="heta-comparison-table"]')
    header = [" ".join(th.text_content().split()) for th in table.xpath(".//thead//th")]
    page = {}
    for tr in table.xpath(".//tbody/tr"):
        cells = tr.xpath("./th|./td")
        mode = cells[0].text_content().strip().split("/")[1]
        metric = cells[1].text_content().strip()
        page[(mode, metric)] = (
            cells[header.index("detects ≥")].text_content().strip(),
            cells[2].text_content().strip().startswith("underpowered"),
        )
    assert {k: v for k, v in page.items() if k in want} == want


def test_the_gate_in_every_format(noisy_pair: tuple[Any, Any], want: Any) -> None:
    base, new = noisy_pair
    result = heta_nb.check(new, base)
    rows = {(r.mode, r.metric): (_mdd(r.min_detectable_difference), r.verdict == "underpowered") for r in result.rows}
    assert {k: v for k, v in rows.items() if k in want} == want
    data = json.loads(result.format("json"))
    got = {
        (r["mode"], r["metric"]): (_mdd(r["min_detectable_difference"]), r["verdict"] == "underpowered")
        for r in data["rows"]
    }
    assert {k: v for k, v in got.items() if k in want} == want
    markdown = {}
    for line in result.to_markdown().splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) == 11 and cells[0] not in ("mode",) and not cells[0].startswith("---"):
            metric = cells[1].replace("\\", "").replace("&#64;", "@")
            markdown[(cells[0].replace("\\", ""), metric)] = (
                cells[9],
                "**underpowered**" in cells[10],
            )
    assert {k: v for k, v in markdown.items() if k in want} == want
    text = result.to_text()
    assert "underpowered (too few cases to see the tolerated drop)" in text.splitlines()[0]


def test_the_leaderboard(noisy_pair: tuple[Any, Any], want: Any) -> None:
    base, new = noisy_pair
    board = heta_nb.Leaderboard.from_reports([base, new], baseline=base.knowledge_base_name)
    frame = board.frame()
    rows = frame[~frame["is_baseline"] & frame["verdict"].ne("")]
    got = {
        (r["mode"], r["metric"]): (_mdd(r["min_detectable_difference"]), r["verdict"].startswith("underpowered"))
        for r in rows.to_dict("records")
        if not r["verdict"].startswith("n/a")
    }
    assert {k: v for k, v in got.items() if k in want} == want
    page = board._repr_html_()
    assert "underpowered" in page  # the hover titles carry the comparison's verdict
    comparison = board.comparison(board.benchmarks[0], new.knowledge_base_name, "extractive_answer")
    lines = comparison.why()["stages"]["lines"]
    assert lines  # the noise moved cases both ways
    for line in lines:  # why it changed: the pair's own lines
        assert html.escape(line) in page and line in repr(board)


def test_plan_reads_the_same_spread(comparison: Any, want: Any) -> None:
    (mode, metric), (mdd, _) = next(iter(want.items()))
    system = f"new/{mode}"
    found = plan(comparison, metric, 0.01, system=system)
    assert f"{found.detectable_now:.3f}" == mdd  # plan's "detects now" is the comparison's MDD
    bigger = plan(comparison, metric, found.detectable_now * 1.01, system=system)
    assert bigger.cases <= found.cases_now  # a difference above the MDD needs no more cases


def _scored(seed: int, shift: float, report_id: str) -> Any:
    """200 cases × 4 numeric metrics drawn at random (as benchmarks/compare.py's reports)."""
    import numpy as np
    from helpers import report_dict

    rng = np.random.default_rng(seed)
    values = np.clip(rng.random((200, 4)) + shift, 0.0, 1.0).round(4)
    results = [
        {
            "case_id": f"q{i:03d}",
            "query": f"query {i}?",
            "query_mode": "search",
            "scores": [
                {"name": f"m{j}", "value": float(values[i, j]), "passed": None, "metadata": {}} for j in range(4)
            ],
            "response": {"mode": "search", "results": [], "answer": None, "citations": [], "trace": [], "metadata": {}},
            "latency_ms": 1.0,
            "error": None,
            "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": "kb"},
        }
        for i in range(200)
    ]
    return heta_nb.load_report(report_dict(results, report_id=report_id, modes=["search"], benchmark="b"))


def test_an_inconclusive_row_is_inconclusive_in_the_gate_too() -> None:
    """compare calls a row whose unadjusted CI excludes 0 "inconclusive"; the gate must not call
    the same row underpowered (it says no detectable change, and why)."""
    base, new = _scored(0, 0.0, "a"), _scored(1, 0.04, "b")
    comparison = heta_nb.compare(base, new, resamples=2000)
    verdicts = {r["metric"]: r["verdict"] for r in comparison.summary_rows()}
    inconclusive = [m for m, v in verdicts.items() if v.startswith("inconclusive")]
    assert inconclusive, verdicts  # the pair has one
    result = heta_nb.check(new, base, resamples=2000)
    rows = {r.metric: r for r in result.rows}
    for metric, verdict in verdicts.items():
        if metric in inconclusive:
            assert rows[metric].verdict == "no detectable change" and rows[metric].reason.startswith("inconclusive")
        else:  # the gate asks more of a drop: one it cannot test fails as unverified
            expected = "unverified drop" if rows[metric].diff < 0 else "underpowered"
            assert verdict.startswith("underpowered") and rows[metric].verdict == expected
