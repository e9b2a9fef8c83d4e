"""n/a metrics and one mean, on the real demo: two Heta recipes (BM25 over small and large
chunks) evaluated offline in ``full_text_search`` (no answers) and ``extractive_answer``.

Heta's ``full_text_search`` returns no answer, so its answer metrics read "n/a" in every view
(NaN plus a note in the frames, not tested in comparisons or the gate), Heta's own number stays
in ``report.json`` and beside the n/a. The number shown first for a metric is the mean of the
scored values, the same in the report repr, the comparison, ``heta-nb show`` and ``heta-nb compare``.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from helpers import requires_heta

import heta_nb
from heta_nb.cli import main
from heta_nb.render import build_report_context, render_report_html, report_plain_text

pytestmark = requires_heta

KB = "saltmarsh isles"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The two demo recipes' reports, saved in a store, as ``make demo`` makes them."""
    from heta_nb.demo.heta_recipes import demo_query_engines, demo_recipe
    from heta_nb.demo.settings import DEMO_EVALUATORS, DEMO_MODES, RECIPE_CHUNKS, load_benchmark

    root = tmp_path_factory.mktemp("demo")
    store = heta_nb.ReportStore(root / "store")
    reports = {}
    for name, (chunk, overlap) in RECIPE_CHUNKS.items():
        reports[name] = heta_nb.evaluate(
            load_benchmark(),
            recipe=demo_recipe(root / name, chunk, overlap),
            query_engines=demo_query_engines(),
            knowledge_base_name=KB,
            report_id=name,
            query_modes=list(DEMO_MODES),
            evaluators=list(DEMO_EVALUATORS),
            top_k=5,
            store=store,
            progress=False,
        )
    return {"reports": reports, "store": root / "store"}


def _small(demo: dict[str, Any]) -> Any:
    return demo["reports"]["small-chunks"]


def test_the_mode_without_answers_has_its_answer_metrics_not_applicable(demo: dict[str, Any]) -> None:
    report = _small(demo)
    assert all(
        r.response is None or r.response.answer is None
        for r in report.case_results
        if r.query_mode == "full_text_search"
    )
    found = {(s.mode, s.metric): s for s in report.metric_summaries()}
    for metric in ("answer_contains", "answer_f1"):
        s = found[("full_text_search", metric)]
        assert not s.applicable and s.not_applicable == "full_text_search returns no answers"
        assert math.isnan(s.shown) and s.label == "n/a" and s.note == "n/a: full_text_search returns no answers"
        assert s.mean == 0.0  # Heta's number, still there
        assert found[("extractive_answer", metric)].applicable  # the mode that answers is scored
    assert all(found[("full_text_search", m)].applicable for m in ("evidence_recall@5", "ndcg@5", "mrr@5"))
    # the report itself is never changed: Heta's stored summary keeps its 0.0
    assert report.score_summary["full_text_search.answer_contains"] == 0.0


def test_frames_hold_nan_a_note_and_heta_number(demo: dict[str, Any]) -> None:
    frame = _small(demo).summary_frame().set_index(["query_mode", "metric"])
    row = frame.loc[("full_text_search", "answer_f1")]
    assert math.isnan(row["mean"]) and math.isnan(row["ci_low"]) and row["n"] == 0
    assert row["status"] == "n/a" and row["reason"] == "full_text_search returns no answers"
    assert row["note"] == "n/a: full_text_search returns no answers"
    assert row["heta_summary"] == 0.0 == row["heta_mean"]
    ok = frame.loc[("extractive_answer", "answer_f1")]
    assert ok["mean"] > ok["heta_mean"] > 0 and ok["n"] == ok["heta_n"] - ok["skipped"]  # both means kept


def test_report_views_read_n_a(demo: dict[str, Any]) -> None:
    report = _small(demo)
    context = build_report_context(report)
    summary = context["summary"]
    names = [m["name"]["text"] for m in summary["metrics"]]
    fts = summary["rows"][0]
    cell = fts["cells"][names.index("answer_contains")]
    assert cell["na"] and "n/a: full_text_search returns no answers" in cell["title"]
    assert "Heta's score_summary: 0" in cell["title"]
    page = render_report_html(report)
    assert "0.000 [0.000, 0.039]" not in page and ">n/a<" in page
    # the case table: "n/a" instead of a cross on every row, the stored value on hover
    table = context["modes"][0]
    column = [m["name"]["text"] for m in table["metrics"]].index("answer_contains")
    cells = [row["cells"][column] for row in table["rows"]]
    assert cells and all(c["text"] == "n/a" and "stored value" in c["title"] for c in cells)
    answering = context["modes"][1]
    assert "n/a" not in {row["cells"][column]["text"] for row in answering["rows"]}
    headline = summary["headline"][0]
    assert headline["mode"] == "full_text_search" and headline["na"] == ["answer_contains", "answer_f1"]
    assert "n/a: answer_contains, answer_f1" in report_plain_text(report)


def test_cli_show_prints_n_a_and_heta_number(demo: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", f"{demo['store']}:{KB}/small-chunks"]) == 0
    out = capsys.readouterr().out
    assert not out.startswith("EvaluationReport(")
    rows = [
        row
        for row in map(str.split, out.splitlines())
        if row[:1] == ["full_text_search"] and row[1].startswith("answer_")
    ]
    assert len(rows) == 2 and all(row[2] == "n/a" and row[-1] == "0.000" for row in rows)
    assert out.count("n/a: full_text_search returns no answers") == 1  # one note, not one per metric


def test_comparisons_and_the_gate_do_not_test_n_a_metrics(
    demo: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    small, large = demo["reports"]["small-chunks"], demo["reports"]["large-chunks"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        modes = heta_nb.compare(small)  # full_text_search (baseline) vs extractive_answer
        recipes = heta_nb.compare(small, large, names=["small", "large"])
    assert modes.verdict("extractive_answer", "answer_f1") == "n/a: full_text_search returns no answers"
    assert math.isnan(modes.test("extractive_answer", "answer_f1").p_value)
    assert modes.family_size == len(modes.metrics) - 2
    row = next(
        r
        for r in recipes.summary_rows()
        if r["system"] == "large/full_text_search" and r["metric"] == "answer_contains"
    )
    assert row["verdict"].startswith("n/a") and math.isnan(row["p_adjusted"]) and not row["significant"]
    # n/a on both sides: not tested
    assert recipes.verdict("large/full_text_search", "answer_f1") == "n/a: full_text_search returns no answers"
    # each mode is paired with the same mode: extractive_answer is tested against extractive_answer
    assert recipes.baseline_of("large/extractive_answer") == "small/extractive_answer"
    assert recipes.verdict("large/extractive_answer", "answer_f1").startswith("worse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        across = heta_nb.compare(small, large, names=["small", "large"], across_modes=True)
    # across modes (asked for), against a baseline mode without answers, the answering mode is n/a
    assert across.baseline == "small/full_text_search"
    assert across.verdict("large/extractive_answer", "answer_f1").startswith("n/a")
    result = heta_nb.check(large, baseline=small)
    na_rows = [r for r in result.rows if r.mode == "full_text_search" and r.metric.startswith("answer_")]
    assert na_rows and all(r.verdict == "n/a" and math.isnan(r.p_adjusted) and r.n == 0 for r in na_rows)
    assert main(
        [
            "check",
            f"{demo['store']}:{KB}/large-chunks",
            "--baseline",
            f"{demo['store']}:{KB}/small-chunks",
            "--format",
            "json",
        ]
    ) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    assert data  # valid JSON with the n/a rows (NaN written as null)


def _first_number(text: str, mode: str, metric: str) -> str:
    """The first number after ``mode`` and ``metric`` on one line of ``text``."""
    for line in text.splitlines():
        if mode in line and re.search(rf"\b{re.escape(metric)}\b", line):
            found = re.findall(r"(?<![\d.+-])\d\.\d+", line.split(metric, 1)[1])
            if found:
                return f"{float(found[0]):.3f}"
    raise AssertionError(f"no {mode} {metric} number in:\n{text}")


def test_one_metric_shows_one_first_number_everywhere(demo: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    small, large = demo["reports"]["small-chunks"], demo["reports"]["large-chunks"]
    metric = "evidence_recall@5"
    expected = {}
    for name, report in (("small-chunks", small), ("large-chunks", large)):
        s = next(x for x in report.metric_summaries() if (x.mode, x.metric) == ("extractive_answer", metric))
        assert s.skipped > 0 and s.mean_scored != s.mean  # a metric where the two conventions differ
        expected[name] = f"{s.mean_scored:.3f}"
        # report repr (HTML and text) show the mean of the scored values first
        context = build_report_context(report)
        cell = context["summary"]["rows"][1]["cells"][0]
        assert cell["mean"] == expected[name] and cell["n"] == str(s.n_scored)
        assert _first_number(report_plain_text(report), "extractive_answer", metric) == expected[name]
        assert main(["show", f"{demo['store']}:{KB}/{name}"]) == 0
        out = capsys.readouterr().out
        assert _first_number(out, "extractive_answer", metric) == expected[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(small, large, names=["small-chunks", "large-chunks"], modes=["extractive_answer"])
    row = next(r for r in comparison.summary_rows() if r["metric"] == metric)
    assert (f"{row['baseline_mean']:.3f}", f"{row['mean']:.3f}") == (expected["small-chunks"], expected["large-chunks"])
    line = next(x for x in repr(comparison).splitlines() if x.split()[1:2] == [metric])  # its table row
    assert line.split()[3:5] == [expected["small-chunks"], expected["large-chunks"]]
    store = demo["store"]
    assert (
        main(["compare", f"{store}:{KB}/small-chunks", f"{store}:{KB}/large-chunks", "--modes", "extractive_answer"])
        == 0
    )
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.split()[1:2] == [metric])  # its table row
    assert line.split()[3:5] == [expected["small-chunks"], expected["large-chunks"]]


def test_plots_read_n_a(demo: dict[str, Any]) -> None:
    from heta_nb.plots import plot_metric_summary

    ax = plot_metric_summary(_small(demo))
    info = ax.heta_nb_info
    assert ("full_text_search", "answer_f1") in info["not_applicable"]
    assert "n/a" in [t.get_text() for t in ax.texts]


def test_saved_report_json_is_unchanged(demo: dict[str, Any]) -> None:
    path = (
        Path(demo["store"])
        / "_heta"
        / "knowledge_bases"
        / "saltmarsh_isles"
        / "evaluations"
        / "small-chunks"
        / "report.json"
    )
    data = json.loads(path.read_text())
    assert data["score_summary"]["full_text_search.answer_contains"] == 0.0
    assert "not_applicable" not in path.read_text()
