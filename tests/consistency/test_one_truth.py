"""One report, every output: the same mean, n, CI, n/a and evaluator errors for each mode × metric.

The report has everything an output can get wrong (``conftest``): an answer metric the
``search`` mode cannot produce (n/a), skipped scores (the headline mean and Heta's differ),
KB errors, an evaluator that fails on a third of the cases and one that fails on all. Each
output is read back the way its reader would (HTML by its DOM, text by its columns, files
by pyarrow, DuckDB and MLflow's client) and compared with the one summary
(``report.metric_summaries()``).
"""

from __future__ import annotations

import io
import json
import math
import weakref
from pathlib import Path
from typing import Any

import lxml.html
import nbformat
import pytest
from consistency.readers import (
    Shown,
    agree,
    expected,
    frame_rows,
    report_summary_table,
    show_table,
    summary_markdown,
    widget_means,
)
from consistency.support import EVALUATORS, MODES, benchmark, kb

import heta_nb
from heta_nb.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def want(truth_report: heta_nb.EvaluationReport) -> dict[tuple[str, str], Shown]:
    summaries = truth_report.metric_summaries()
    statuses = {s.status for s in summaries}
    assert {"scored", "n/a", "errored"} <= statuses  # the report holds what the outputs get wrong
    assert any(s.scored and s.evaluator_errors for s in summaries)  # a number with evaluator errors beside it
    assert any(s.scored and s.skipped and s.shown != s.heta_mean for s in summaries)  # Heta's mean differs
    assert truth_report.error_count > 0
    return {(s.mode, s.metric): expected(s) for s in summaries}


def _saved(report: heta_nb.EvaluationReport, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{report.report_id}.json"
    text = report.to_json()
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_the_summary_frame_is_the_summary(truth_report: Any, want: Any) -> None:
    agree("summary_frame", frame_rows(truth_report.summary_frame()), want)


def test_the_repr_and_the_standalone_page(truth_report: Any, want: Any, tmp_path: Path) -> None:
    agree("_repr_html_", report_summary_table(truth_report._repr_html_()), want)
    page = heta_nb.to_html(truth_report, tmp_path / "report.html").read_text(encoding="utf-8")
    agree("to_html", report_summary_table(page), want)
    # the headline line above the table says the evaluator errors too
    doc = lxml.html.fromstring(page)
    headline = " ".join(doc.xpath('//*[@data-testid="heta-headline"]')[0].text_content().split())
    assert "broken_judge: 30 evaluator errors" in headline and "flaky_judge: 6 evaluator errors" in headline


def _html_table(html: str) -> list[dict[str, str]]:
    doc = lxml.html.fromstring(html)
    [table] = doc.xpath("//table")
    header = [" ".join(th.text_content().split()) for th in table.xpath(".//thead/tr[1]/th")]
    rows = []
    for tr in table.xpath(".//tbody/tr"):
        cells = [" ".join(c.text_content().split()) for c in tr.xpath("./th|./td")]
        rows.append(dict(zip(header, cells)))
    return rows


def test_the_exported_notebook(truth_report: Any, want: Any, tmp_path: Path) -> None:
    path = tmp_path / "report.ipynb"
    heta_nb.to_notebook(truth_report, path)
    notebook = nbformat.read(path, as_version=4)
    first = notebook.cells[0].source
    lines = summary_markdown(first)
    agree("notebook summary lines", lines, want)
    assert "best in search" not in first  # never best where the other mode has no number...
    assert "n/a in search (search returns no answers)" in first  # ...n/a is said, with its reason
    table = next(
        c.outputs[0]["data"]["text/html"]
        for c in notebook.cells
        if c.cell_type == "code" and "summary_frame()" in c.source and c.outputs
    )
    found = {}
    for row in _html_table(table):
        key = (row["query_mode"], row["metric"])
        if row["status"] != "scored":
            assert row["mean"] == "—" and row["n"] == "0"
            found[key] = {"value": row["status"], "errors": row["evaluator_errors"]}
        else:
            ci = f"[{row['ci_low']}, {row['ci_high']}]" if row["ci_low"] != "—" else ""
            found[key] = {"value": row["mean"], "ci": ci, "n": row["n"], "errors": row["evaluator_errors"]}
    agree("notebook summary table", found, want)


def test_heta_nb_show(truth_report: Any, want: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(_saved(truth_report, tmp_path))]) == 0
    agree("heta-nb show", show_table(capsys.readouterr().out), want)


def test_the_live_widget_and_the_console_line(want: Any) -> None:
    from heta_nb.progress.console import ConsoleProgress
    from heta_nb.progress.widget import RunWidget

    widget = RunWidget(show_report=False)
    run = heta_nb.start(
        benchmark(), kb=kb, knowledge_base_name="truth kb", query_modes=MODES, evaluators=EVALUATORS,
        store=None, progress=widget, report_id="truth", retries=0,
    )  # fmt: skip
    widget._run = weakref.ref(run)  # heta_nb.start gives its own widget the run before it starts
    with pytest.warns(heta_nb.HetaRunWarning):
        report = run.result(timeout=60)
    widget.flush()
    assert {(s.mode, s.metric): expected(s) for s in report.metric_summaries()} == want  # the same run again
    agree("live widget", widget_means(widget.means.value), want)

    stream = io.StringIO()
    console = ConsoleProgress(stream, min_interval=0.0)
    with pytest.warns(heta_nb.HetaRunWarning):
        heta_nb.evaluate(
            benchmark(), kb=kb, knowledge_base_name="truth kb", query_modes=MODES, evaluators=EVALUATORS,
            store=None, progress=console, report_id="truth", retries=0,
        )  # fmt: skip
    last = [line for line in stream.getvalue().replace("\r", "\n").splitlines() if "(mean of scored)" in line][-1]
    metric = EVALUATORS[0]
    shown = dict(part.rsplit(" ", 1) for part in last.split(f"{metric} (mean of scored): ")[1].split(", "))
    assert shown == {mode: want[(mode, metric)]["value"] for mode in MODES}
    failed = sum(int(shown["errors"]) for shown in want.values())
    assert failed == 72 and f"evaluator errors {failed}" in last  # the failing evaluators, counted as they happen


def test_the_leaderboard(truth_report: Any, want: Any, tmp_path: Path) -> None:
    board = heta_nb.Leaderboard.from_reports([truth_report])
    agree("leaderboard frame", frame_rows(board.frame()), want)
    store = heta_nb.ReportStore(tmp_path / "store")
    store.save(truth_report)
    csv = tmp_path / "board.csv"
    assert main(["leaderboard", str(tmp_path / "store"), "-o", str(csv)]) == 0
    import pandas as pd

    agree("leaderboard csv", frame_rows(pd.read_csv(csv, keep_default_na=False, na_values=[""])), want)
    doc = lxml.html.fromstring(board._repr_mimebundle_()["text/html"])
    metrics = [" ".join(th.text_content().split()) for th in doc.xpath('//th[contains(@class, "heta-lb-metric")]')]
    found = {}
    for tr in doc.xpath('//table[contains(@class, "heta-lb-t")]/tbody/tr'):
        mode = " ".join(tr.xpath("./th")[0].text_content().split()).split(" · ")[1].split(" ")[0]
        for metric, td in zip(metrics, tr.xpath("./td")):
            means = td.xpath('.//*[contains(@class, "heta-mean")]')
            errors = td.xpath('.//*[@data-testid="heta-evaluator-errors"]')
            count = errors[0].text_content().split()[1] if errors else "0"
            if means:
                found[(mode, metric)] = {"value": means[0].text_content().strip(), "errors": count}
            else:
                found[(mode, metric)] = {"value": td.text_content().strip()}
    agree("leaderboard html", found, want)
    text = repr(board)
    assert "n/a" in text and "0.000" not in text.split("\n")[2]  # the search row: n/a, never 0.000


def test_the_gate_judges_the_summary(truth_report: Any, want: Any, tmp_path: Path) -> None:
    floors = {metric: 0.0 for mode, metric in want}
    result = heta_nb.check(truth_report, truth_report, floors=floors)
    data = json.loads(result.format("json"))
    for row in data["rows"]:
        shown = want[(row["mode"], row["metric"])]
        if shown["value"] == "n/a":
            assert row["verdict"] == "n/a" and row["n"] == 0 and row["p_adjusted"] is None
        elif shown["value"] == "errored":
            assert row["verdict"] == "evaluator errors" and "30 of 30 scores" in row["reason"]
        else:
            assert f"{row['floor_mean']:.3f}" == shown["value"]  # the floor reads the headline mean
            assert str(row["new_evaluator_errors"]) == shown["errors"]
    assert {r["verdict"] for r in data["rows"]} == {"no detectable change", "n/a", "evaluator errors"}
    assert result.exit_code == 2 and result.verdict == "evaluator errors"  # never a pass
    text = result.to_text()
    assert "6 evaluator errors" in text  # beside the flaky judge's number


def test_parquet_through_pyarrow_and_duckdb(truth_report: Any, want: Any, tmp_path: Path) -> None:
    pyarrow_parquet = pytest.importorskip("pyarrow.parquet")
    duckdb = pytest.importorskip("duckdb")
    truth_report.to_parquet(tmp_path / "out")
    summary = pyarrow_parquet.read_table(tmp_path / "out" / "summary.parquet").to_pandas()
    agree("parquet (pyarrow)", frame_rows(summary), want)
    assert set(summary["report_id"]) == {"truth"}
    frame = duckdb.sql(f"SELECT * FROM '{tmp_path / 'out' / 'summary.parquet'}'").df()
    agree("parquet (duckdb)", frame_rows(frame), want)


def test_mlflow_reads_back_the_summary(truth_report: Any, want: Any, mlflow_run: Any) -> None:
    from heta_nb.integrations import mlflow as hm
    from heta_nb.integrations.names import status_key, tracker_key

    client, run_id = mlflow_run
    hm.log_report(truth_report, run_id=run_id)
    data = client.get_run(run_id).data
    found = {}
    for mode, metric in want:
        key = tracker_key(metric, mode)
        if key in data.metrics:
            low, high = data.metrics.get(f"{key}/ci_low", math.nan), data.metrics.get(f"{key}/ci_high", math.nan)
            found[(mode, metric)] = {
                "value": f"{data.metrics[key]:.3f}",
                "ci": f"[{low:.3f}, {high:.3f}]" if math.isfinite(low) else "",
                "n": str(int(data.metrics[f"{key}/n"])),
            }
        else:
            found[(mode, metric)] = {"value": data.tags[status_key(key)].split(":")[0]}
        if f"{key}/evaluator_errors" in data.metrics:
            found[(mode, metric)]["errors"] = str(int(data.metrics[f"{key}/evaluator_errors"]))
    agree("mlflow", found, want)
