"""One pair of reports, every output: the same p-values, verdicts and family for each mode × metric.

``compare`` (its repr, page, notebook and ``heta-nb compare``), ``check`` (text, markdown,
JSON, JUnit) and the leaderboard (frame, CSV) all test the new recipe's mode against the
baseline's same mode with one set of numbers, Holm over that pair's metrics: a reviewer
reads the same p-value and the same family wherever they look.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import lxml.html
import nbformat
import pytest

import heta_nb
from heta_nb.cli import main
from heta_nb.comparison import HetaComparisonWarning
from heta_nb.stats.format import p_text

pytestmark = pytest.mark.slow
ALPHA = 0.05
Tested = dict[str, str]
"""What an output says of one (mode, metric): ``p``, ``p_adj`` (as every view prints them),
``verdict`` (better / worse / same / n/a) and ``family`` ("5 metrics of answer")."""


def _p(value: Any) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else p_text(float(value), ALPHA)


def _family(text: str) -> str:
    """``"Holm over the 5 metrics of answer (worse vs truth); ..."`` -> ``"5 metrics of answer"``."""
    match = re.search(r"Holm over the (\d+ metrics? of \S+)", text or "")
    return match[1] if match else ""


def _kind(verdict: str) -> str:
    """A verdict in the words of any output, as one of better / worse / underpowered / same / n/a."""
    verdict = verdict.strip().lower()
    if verdict.startswith("n/a"):
        return "n/a"
    if verdict.startswith(("better", "improvement")):
        return "better"
    if verdict.startswith(("worse", "regression")):
        return "worse"
    if verdict.startswith("underpowered"):
        return "underpowered"
    return "same"


@pytest.fixture(scope="module")
def pair(truth_report: Any, worse_report: Any) -> Any:
    with pytest.warns(HetaComparisonWarning):  # errored cases are left out: said
        return heta_nb.compare(truth_report, worse_report)


@pytest.fixture(scope="module")
def want(pair: Any) -> dict[tuple[str, str], Tested]:
    found = {}
    for row in pair.summary_rows():
        found[(row["mode"], row["metric"])] = {
            "p": _p(row["p_value"]),
            "p_adj": _p(row["p_adjusted"]),
            "verdict": _kind(row["verdict"]),
            "family": _family(row["family"]),
            "mdd": _mdd(row["min_detectable_difference"]),
        }
    assert {v["verdict"] for v in found.values()} == {"worse", "same", "n/a"}  # the pair has each kind
    assert found[("answer", "answer_f1")]["verdict"] == "worse"  # mode with mode: the answers got worse
    assert found[("answer", "answer_f1")]["family"] == "5 metrics of answer"
    assert found[("search", "ndcg@3")]["family"] == "3 metrics of search"  # n/a metrics are not in it
    return found


def _mdd(value: float | None) -> str:
    """A minimum detectable difference as every text output shows it (3 decimals, n/a)."""
    return "n/a" if value is None or value != value else f"{value:.3f}"


def _agree(name: str, got: dict[tuple[str, str], Tested], want: dict[tuple[str, str], Tested]) -> None:
    assert set(got) >= set(want), f"{name}: no {sorted(set(want) - set(got))}"
    for key, tested in want.items():
        for field, value in got[key].items():
            assert value == tested[field], f"{name} {key} {field}: {value!r} != {tested[field]!r}"


_CELLS = (
    r"(?P<n>\d+)\s+\S+\s+(?P<new>\S+(?: \([\d,]+ evaluator errors\))?)\s+\S+\s+(?:\[[^\]]*\]|n/a)"
    r"\s+(?P<p>\S+)\s+(?P<p_adj>\S+)(?:\s+(?P<mdd>[\d.]+|n/a)(?=\s))?\s+(?P<verdict>.+)$"
)
"""After a row's first two columns: n, baseline, new (with its evaluator errors), diff, CI, p, p_adj,
the minimum detectable difference (where the output has it), verdict."""


def _rows(text: str, first: str) -> list[Any]:
    """The rows of a text table whose first column matches ``first``, read line by line."""
    pattern = re.compile(rf"^(?P<first>{first})\s+(?P<metric>\S+)\s+{_CELLS}")
    return [m for line in text.splitlines() if (m := pattern.match(line))]


def _compare_text(text: str) -> dict[tuple[str, str], Tested]:
    """``repr(comparison)`` / ``heta-nb compare``: one row per system × metric."""
    found = {}
    for row in _rows(text, r"worse/\S+"):
        metric, mode = row["metric"], row["first"].split("/")[1]
        verdict = row["verdict"]
        found[(mode, metric)] = {"p": row["p"], "p_adj": row["p_adj"], "verdict": _kind(verdict)}
        if row["mdd"] is not None:
            found[(mode, metric)]["mdd"] = row["mdd"]
    families = dict(re.findall(r"^  - (\S+): (Holm over .*)$", text, re.M))
    for (mode, _metric), tested in found.items():
        family = next((f for s, f in families.items() if s.endswith(f"/{mode}")), "")
        if tested["verdict"] != "n/a":
            tested["family"] = _family(family)
    return found


def test_compare_repr_and_the_cli(pair: Any, want: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _agree("repr(compare)", _compare_text(repr(pair)), want)
    paths = []
    for report in pair.reports:
        path = tmp_path / f"{report.report_id}.json"
        text = report.to_json()
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        paths.append(str(path))
    assert main(["compare", *paths]) == 0
    out = capsys.readouterr().out
    _agree("heta-nb compare", _compare_text(out), want)
    assert out.splitlines()[0].startswith("worse/answer vs truth/answer: 0 better, 2 worse (answer_contains")


def test_compare_page_and_notebook(pair: Any, want: Any, tmp_path: Path) -> None:
    doc = lxml.html.fromstring(pair._repr_html_())
    [table] = doc.xpath('//table[@data-testid="heta-comparison-table"]')
    header = [" ".join(th.text_content().split()) for th in table.xpath(".//thead//th")]
    found = {}
    for tr in table.xpath(".//tbody/tr"):
        cells = tr.xpath("./th|./td")  # system, metric, verdict, ..., p, p (adj.) with its family on hover
        mode = " ".join(cells[0].text_content().split()).split("/")[1]
        metric = cells[1].text_content().strip()
        adjusted = cells[header.index("p (adj.)")]
        found[(mode, metric)] = {
            "p": cells[header.index("p")].text_content().strip().replace("—", "n/a"),
            "p_adj": adjusted.text_content().strip().replace("—", "n/a"),
            "mdd": cells[header.index("detects ≥")].text_content().strip().replace("—", "n/a"),
            "verdict": _kind(cells[2].text_content()),
        }
        if found[(mode, metric)]["verdict"] != "n/a":
            found[(mode, metric)]["family"] = _family(adjusted.get("title"))
    _agree("comparison page", found, want)

    path = tmp_path / "comparison.ipynb"
    heta_nb.to_notebook(pair, path)
    notebook = nbformat.read(path, as_version=4)
    lines = notebook.cells[0].source.replace("\\", "")
    for (mode, metric), tested in want.items():
        if tested["verdict"] == "worse":
            match = re.search(rf"worse/{mode} is worse than truth/{mode} on {re.escape(metric)}: .*?, p=(\S+), "
                              rf"adjusted p=(\S+), n=\d+; Holm over the (\d+ metrics? of \S+)", lines)  # fmt: skip
            assert match, (metric, lines)
            assert (match[1], match[2], match[3]) == (tested["p"], tested["p_adj"], tested["family"])
    table = next(c for c in notebook.cells if c.cell_type == "code" and "summary_frame()" in c.source)
    doc = lxml.html.fromstring(table.outputs[0]["data"]["text/html"])
    header = [" ".join(th.text_content().split()) for th in doc.xpath("//thead/tr[1]/th")]
    found = {}
    for tr in doc.xpath("//tbody/tr"):
        row = dict(zip(header, [" ".join(c.text_content().split()) for c in tr.xpath("./th|./td")]))
        tested = {"p": row["p_value"].replace("—", "n/a"), "p_adj": row["p_adjusted"].replace("—", "n/a")}
        tested["verdict"] = _kind(row["verdict"])
        if tested["verdict"] != "n/a":
            tested["family"] = _family(row["family"])
        found[(row["mode"], row["metric"])] = tested
    _agree("notebook summary table", found, want)


def test_check_in_every_format(truth_report: Any, worse_report: Any, want: Any) -> None:
    result = heta_nb.check(worse_report, truth_report)
    found = {}
    for row in result.rows:
        if row.verdict == "evaluator errors":
            continue  # not in the comparison: every score failed
        tested = {
            "p": _p(row.p_value),
            "p_adj": _p(row.p_adjusted),
            "verdict": _kind(row.verdict),
            "mdd": _mdd(row.min_detectable_difference),
        }
        if tested["verdict"] != "n/a":
            tested["family"] = _family(row.family)
        found[(row.mode, row.metric)] = tested
    _agree("check rows", found, want)

    data = json.loads(result.format("json"))
    rows = {(r["mode"], r["metric"]): r for r in data["rows"]}
    _agree(
        "check json",
        {
            k: {"p": _p(r["p_value"]), "p_adj": _p(r["p_adjusted"]), "mdd": _mdd(r["min_detectable_difference"])}
            for k, r in rows.items()
        },
        want,
    )
    text = result.to_text()
    parsed = {}
    for row in _rows(text, "answer|search"):
        verdict = row["verdict"].lstrip("↓⇣=↑↘·!? ")
        if verdict.startswith("evaluator errors"):
            continue
        parsed[(row["first"], row["metric"])] = {"p": row["p"], "p_adj": row["p_adj"], "verdict": _kind(verdict)}
        assert row["mdd"] is not None  # the gate's text has the column
        parsed[(row["first"], row["metric"])]["mdd"] = row["mdd"]
    _agree("check text", parsed, want)

    markdown = result.to_markdown()
    parsed = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) != 11 or cells[0] in ("mode", "---") or cells[0].startswith("---"):
            continue
        verdict = re.sub(r"^\S+ \*\*([^*]+)\*\*.*$", r"\1", cells[10])
        if verdict == "evaluator errors":
            continue
        metric = cells[1].replace("\\", "").replace("&#64;", "@")
        parsed[(cells[0].replace("\\", ""), metric)] = {
            "p": cells[7],
            "p_adj": cells[8],
            "mdd": cells[9],
            "verdict": _kind(verdict),
        }
    _agree("check markdown", parsed, want)

    junit = lxml.etree.fromstring(result.to_junit().encode("utf-8"))
    parsed = {}
    for case in junit.iter("testcase"):
        mode = case.get("classname").rsplit(".", 1)[1]
        out = case.findtext("system-out") or ""
        if "evaluator errors:" in out.splitlines()[0]:
            continue
        match = re.search(r", p (\S+), adjusted (\S+);", out)
        tested: dict[str, str] = {"verdict": _kind(out.split(":", 1)[0])}
        if match:
            tested.update(p=match[1], p_adj=match[2])
        if tested["verdict"] != "n/a":
            tested["family"] = _family(re.search(r"^family: (.*)$", out, re.M)[1])
        parsed[(mode, case.get("name"))] = tested
    _agree("check junit", parsed, want)


def test_the_leaderboard_tests_the_same_pair(truth_report: Any, worse_report: Any, want: Any, tmp_path: Path) -> None:
    board = heta_nb.Leaderboard.from_reports([truth_report, worse_report], baseline="truth kb")
    frame = board.frame()
    rows = frame[frame["recipe"] == "worse kb"]
    found = {}
    for row in rows.to_dict("records"):
        if row["status"] == "errored":
            continue
        tested = {"p": _p(row["p_value"]), "p_adj": _p(row["p_adjusted"]), "verdict": _kind(row["verdict"])}
        if tested["verdict"] != "n/a":
            tested["family"] = _family(row["family"])
        found[(row["mode"], row["metric"])] = tested
    _agree("leaderboard frame", found, want)
    csv = tmp_path / "board.csv"
    frame.to_csv(csv, index=False)
    import pandas as pd

    again = pd.read_csv(csv)
    again = again[again["recipe"] == "worse kb"]
    _agree(
        "leaderboard csv",
        {
            (r["mode"], r["metric"]): {"p": _p(r["p_value"]), "p_adj": _p(r["p_adjusted"])}
            for r in again.to_dict("records")
            if r["status"] != "errored"
        },  # fmt: skip
        want,
    )


def test_mlflow_gets_the_same_tests(
    pair: Any, truth_report: Any, worse_report: Any, want: Any, mlflow_run: Any
) -> None:
    from heta_nb.integrations import mlflow as hm
    from heta_nb.integrations.names import tracker_key

    client, run_id = mlflow_run
    hm.log_comparison(pair, run_id=run_id)
    hm.log_check(heta_nb.check(worse_report, truth_report), run_id=run_id)
    metrics = client.get_run(run_id).data.metrics
    for (mode, metric), tested in want.items():
        compared = tracker_key("compare", metric, f"worse/{mode}")
        checked = tracker_key("check", metric, mode)
        if tested["verdict"] == "n/a":
            assert f"{compared}/p_value" not in metrics and f"{checked}/p_adjusted" not in metrics
            continue
        assert _p(metrics[f"{compared}/p_value"]) == tested["p"]
        assert _p(metrics[f"{compared}/p_adjusted"]) == tested["p_adj"] == _p(metrics[f"{checked}/p_adjusted"])
        assert _mdd(metrics.get(f"{compared}/mdd")) == tested["mdd"] == _mdd(metrics.get(f"{checked}/mdd"))
