"""plot_metric_summary and plot_by_label."""

from __future__ import annotations

import math
from typing import Any

import matplotlib

matplotlib.use("Agg")
import copy
import json
from collections.abc import Callable

import pytest  # noqa: E402
from helpers import FIXTURES  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

import heta_nb  # noqa: E402
import heta_nb.demo  # noqa: E402
from heta_nb import plots  # noqa: E402
from heta_nb.model.io import decode_report  # noqa: E402
from heta_nb.model.json import dumps_compact  # noqa: E402
from heta_nb.tables.distributions import label_breakdown  # noqa: E402
from heta_nb.testing import synthetic_report_dict  # noqa: E402


@pytest.fixture(scope="module")
def normal() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


@pytest.fixture(scope="module")
def errors() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-errors.json")


def _decode(raw: dict[str, Any]) -> heta_nb.EvaluationReport:
    return decode_report(dumps_compact(raw), source="<test>")


@pytest.fixture(scope="module")
def demo_pair() -> tuple[heta_nb.EvaluationReport, heta_nb.Benchmark]:
    """The demo benchmark and a synthetic report over its first 90 case ids."""
    benchmark = heta_nb.demo.load_benchmark()
    ids = [case.case_id for case in benchmark.cases]
    raw = synthetic_report_dict(90, modes=("full_text_search", "extractive_answer"), seed=2)
    for result in raw["case_results"]:
        result["case_id"] = ids[int(result["case_id"][1:])]
    return _decode(raw), benchmark


def _bars(ax: Any) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def _legend_texts(ax: Any) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [text.get_text() for text in legend.get_texts()]


BASE = json.loads((FIXTURES / "report-normal.json").read_text(encoding="utf-8"))


MODE = "full_text_search"


METRIC = "evidence_recall@3"


def _report(change: Callable[[dict[str, Any]], None]) -> heta_nb.EvaluationReport:
    data = copy.deepcopy(BASE)
    change(data)
    return heta_nb.load_report(json.dumps(data))


def _cases(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data["case_results"] if c["query_mode"] == MODE]


def _score(case: dict[str, Any], name: str = METRIC) -> dict[str, Any]:
    return next(s for s in case["scores"] if s["name"] == name)


def _infinite_scores(data: dict[str, Any]) -> None:
    for case in _cases(data):
        _score(case)["value"] = float("inf")


# -- plot_metric_summary ------------------------------------------------------------------
def test_metric_summary_bars_match_metric_summaries(normal: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_metric_summary(normal)
    metrics = normal.metric_names
    assert len(ax.patches) == len(metrics) * len(normal.modes)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(metrics)
    table = {(s.mode, s.metric): s for s in normal.metric_summaries()}
    for mode, container in zip(normal.modes, _bars(ax)):
        assert len(container.patches) == len(metrics)
        segments = container.errorbar.lines[2][0].get_segments()
        for metric, bar, segment in zip(metrics, container.patches, segments):
            item = table[(mode, metric)]
            if not item.applicable:  # an answer metric of a mode without answers: no bar, "n/a"
                assert math.isnan(bar.get_width())
                continue
            # the mean shown first everywhere: of the scored values (Heta's counts skipped as 0)
            assert bar.get_width() == pytest.approx(item.mean_scored)
            assert segment[:, 0] == pytest.approx([item.scored_ci_low, item.scored_ci_high])
    not_applicable = ax.heta_nb_info["not_applicable"]
    assert ("full_text_search", "answer_contains") in not_applicable
    assert [t.get_text() for t in ax.texts].count("n/a") == len(not_applicable)
    assert "95% CI" in ax.get_xlabel() and "scored values" in ax.get_xlabel()
    assert "scores per mode and metric" in ax.get_title() and "skipped scores left out" in ax.get_title()


def test_metric_summary_subset(errors: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_metric_summary(errors, metrics=["evidence_recall@3", "answer_contains"], modes=["full_text_search"])
    assert len(ax.patches) == 2
    assert "1 errored case left out" in ax.get_title()
    assert "1 error left out" in _legend_texts(ax)[0]


# -- plot_by_label ------------------------------------------------------------------------
def test_by_label_bars_match_label_breakdown(demo_pair: tuple[Any, Any]) -> None:
    report, benchmark = demo_pair
    ax = plots.plot_by_label(report, benchmark, "evidence_recall@5", "difficulty")
    table = label_breakdown(report, benchmark, "difficulty", metrics=["evidence_recall@5"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["easy\n63 cases", "hard\n32 cases"]
    assert len(ax.patches) == 2 * len(report.modes)
    for mode, container in zip(report.modes, _bars(ax)):
        segments = container.errorbar.lines[2][0].get_segments()
        for value, bar, segment in zip(["easy", "hard"], container.patches, segments):
            row = table.loc[(value, mode, "evidence_recall@5")]
            assert bar.get_height() == pytest.approx(row["mean"])
            assert segment[:, 1] == pytest.approx([row["ci_low"], row["ci_high"]])
    title = " ".join(ax.get_title().split())
    assert "evidence_recall@5 by difficulty" in title and "Student-t" in title
    assert f"{int(table['skipped'].sum())} skipped excluded" in title
    assert "10 case results missing from the report" in title
    bools = plots.plot_by_label(report, benchmark, "answer_contains", "hops")
    assert "Wilson" in bools.get_title() and bools.get_ylabel() == "proportion true"
    with pytest.raises(KeyError, match="labels: \\['difficulty', 'hops', 'question_type'\\]"):
        plots.plot_by_label(report, benchmark, "answer_contains", "colour")


@pytest.mark.hostile
def test_infinite_means_are_left_out_of_the_summary_plot_and_said_so() -> None:
    from heta_nb.plots import plot_metric_summary
    from heta_nb.render.figures import figure_to_svg

    ax = plot_metric_summary(_report(_infinite_scores))
    assert "not finite" in ax.get_title()
    left, right = ax.get_xlim()
    assert left == left and right == right and right < float("inf")
    figure_to_svg(ax.figure)
