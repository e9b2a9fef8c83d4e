"""plot_scores: the right kind of plot for each kind of score."""

from __future__ import annotations

import random
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import FIXTURES  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

import heta_nb  # noqa: E402
import heta_nb.demo  # noqa: E402
from heta_nb import plots, stats  # noqa: E402
from heta_nb.model.io import decode_report  # noqa: E402
from heta_nb.model.json import dumps_compact  # noqa: E402
from heta_nb.render.svg import histogram
from heta_nb.testing import synthetic_report, synthetic_report_dict  # noqa: E402


@pytest.fixture(scope="module")
def normal() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


@pytest.fixture(scope="module")
def errors() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-errors.json")


@pytest.fixture(scope="module")
def synthetic() -> heta_nb.EvaluationReport:
    return synthetic_report(200, seed=4)


def _decode(raw: dict[str, Any]) -> heta_nb.EvaluationReport:
    return decode_report(dumps_compact(raw), source="<test>")


@pytest.fixture(scope="module")
def unbounded() -> heta_nb.EvaluationReport:
    """A synthetic report whose ``tokens`` score is unbounded (lognormal, ~50)."""
    raw = synthetic_report_dict(60, seed=9)
    rng = random.Random(2)
    for result in raw["case_results"]:
        for score in result["scores"]:
            if score["name"] == "beir_ndcg@5":
                score["name"] = "tokens"
                score["value"] = rng.lognormvariate(4, 0.5)
    return _decode(raw)


def _bars(ax: Any) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def _legend_texts(ax: Any) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [text.get_text() for text in legend.get_texts()]


def _scores(report: heta_nb.EvaluationReport, metric: str, mode: str, *, skipped: bool = False) -> np.ndarray:
    frame = report.scores_frame()
    rows = frame[(frame.metric == metric) & (frame.query_mode == mode)]
    if not skipped:
        rows = rows[~rows.skipped]
    return rows["numeric"].to_numpy()


# -- plot_scores: the kind auto chooses ---------------------------------------------------
def test_bool_metric_is_a_proportion_bar_with_wilson_ci(normal: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_scores(normal, "answer_contains")
    info = ax.heta_nb_info
    assert (info["kind"], info["style"], info["data_kind"]) == ("bar", "proportion", "bool")
    assert len(ax.patches) == len(normal.modes)  # one bar per mode
    assert len(_bars(ax)) == len(normal.modes)
    for mode, container in zip(normal.modes, _bars(ax)):
        values = _scores(normal, "answer_contains", mode)
        (bar,) = container.patches
        assert bar.get_height() == pytest.approx(values.mean())
        assert bar.get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(plots.mode_colors(normal.modes)[mode]))
        low, high = stats.wilson_interval(int(values.sum()), len(values))
        (segment,) = container.errorbar.lines[2][0].get_segments()
        assert segment[:, 1] == pytest.approx([low, high])
    assert [t.get_text() for t in ax.get_xticklabels()] == list(normal.modes)
    assert ax.get_ylabel() == "proportion true"


def test_few_valued_unit_scores_are_frequency_bars(normal: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_scores(normal, "evidence_recall@3")
    assert (ax.heta_nb_info["kind"], ax.heta_nb_info["style"]) == ("bar", "frequency")
    distinct = sorted(set(normal.scores_frame().query("metric == 'evidence_recall@3' and not skipped")["numeric"]))
    assert distinct == [0.0, 1.0]
    assert len(ax.patches) == len(normal.modes) * len(distinct)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1"]
    # each mode's bars are shares of its own scores
    for mode, container in zip(normal.modes, _bars(ax)):
        values = _scores(normal, "evidence_recall@3", mode)
        heights = [patch.get_height() for patch in container.patches]
        assert heights == pytest.approx([np.mean(values == v) for v in distinct])
        assert sum(heights) == pytest.approx(1.0)


def test_ecdf_of_a_big_report_is_thinned_but_exact_at_its_steps() -> None:
    big = synthetic_report(3000, modes=("m",), seed=5)
    ax = plots.plot_scores(big, "beir_ndcg@5", kind="ecdf")
    xs, ys = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    values = _scores(big, "beir_ndcg@5", "m")
    assert len(np.unique(values)) > plots.MAX_ECDF_STEPS and len(xs) == plots.MAX_ECDF_STEPS + 2
    for x, y in zip(xs[1:-1], ys[1:-1]):
        assert y == pytest.approx(np.mean(values <= x))


def test_many_valued_unit_scores_are_an_ecdf(synthetic: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_scores(synthetic, "evidence_recall@5")
    assert ax.heta_nb_info["kind"] == "ecdf"
    assert len(ax.lines) == len(synthetic.modes)  # one step line per mode
    for mode, line in zip(synthetic.modes, ax.lines):
        values = _scores(synthetic, "evidence_recall@5", mode)
        xs, ys = line.get_xdata(), line.get_ydata()
        assert line.get_drawstyle() == "steps-post"
        steps = min(len(np.unique(values)), plots.MAX_ECDF_STEPS)
        assert len(xs) == steps + 2 and xs[0] == 0.0 and xs[-1] == 1.0  # one step per distinct value, thinned
        assert ys[0] == 0.0 and ys[-1] == 1.0 and np.all(np.diff(ys) >= 0)
        # the ECDF at each value is the share of scores <= it
        for x, y in list(zip(xs[1:-1], ys[1:-1]))[::37]:
            assert y == pytest.approx(np.mean(values <= x))  # exact at every drawn step
    assert ax.get_xlim() == pytest.approx((-0.02, 1.02))


def test_unbounded_scores_are_box_plots_with_n_in_ticks(unbounded: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_scores(unbounded, "tokens")
    assert ax.heta_nb_info["kind"] == "box"
    assert len(ax.patches) == len(unbounded.modes)  # one box per mode
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    for mode, tick in zip(unbounded.modes, ticks):
        assert tick == f"{mode}\nn={len(_scores(unbounded, 'tokens', mode))}"
    medians = [line for line in ax.lines if line.get_linewidth() == 1.5]
    assert len(medians) == len(unbounded.modes)
    for mode, line in zip(unbounded.modes, medians):
        assert line.get_ydata()[0] == pytest.approx(np.median(_scores(unbounded, "tokens", mode)))


def test_text_scores_are_value_count_bars(normal: heta_nb.EvaluationReport) -> None:
    raw = normal.to_json().replace(
        '"name":"answer_exact_match","value":false', '"name":"answer_exact_match","value":"n/a"'
    )
    report = heta_nb.load_report(raw)
    ax = plots.plot_scores(report, "answer_exact_match")
    assert (ax.heta_nb_info["kind"], ax.heta_nb_info["data_kind"]) == ("bar", "text")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["n/a"]
    with pytest.raises(ValueError, match="text scores"):
        plots.plot_scores(report, "answer_exact_match", kind="ecdf")


@pytest.mark.parametrize("kind", ["hist", "ecdf", "box", "bar"])
def test_explicit_kinds(normal: heta_nb.EvaluationReport, kind: str) -> None:
    ax = plots.plot_scores(normal, "beir_ndcg@3", kind=kind)
    assert ax.heta_nb_info["kind"] == kind
    if kind == "hist":
        assert len(ax.patches) == len(normal.modes)  # one step outline per mode
        for mode, patch in zip(normal.modes, ax.patches):
            assert patch.get_edgecolor()[:3] == pytest.approx(
                matplotlib.colors.to_rgb(plots.mode_colors(normal.modes)[mode])
            )
    if kind == "ecdf":
        assert len(ax.lines) == len(normal.modes)


def test_bad_arguments(normal: heta_nb.EvaluationReport, synthetic: heta_nb.EvaluationReport) -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        plots.plot_scores(normal, "answer_contains", kind="violin")
    with pytest.raises(KeyError, match="no metric 'nope'.*evidence_recall@3"):
        plots.plot_scores(normal, "nope")
    with pytest.raises(KeyError, match="no mode 'nope'"):
        plots.plot_scores(normal, "answer_contains", modes=["nope"])
    with pytest.raises(ValueError, match="distinct values"):
        plots.plot_scores(synthetic, "beir_ndcg@5", kind="bar")


# -- plot_scores: saying what is left out ---------------------------------------------------
def test_titles_and_legends_state_n_and_skipped(normal: heta_nb.EvaluationReport) -> None:
    counts = normal.scores_frame().query("metric == 'answer_contains'")
    skipped = int(counts["skipped"].sum())
    kept = len(counts) - skipped
    assert skipped == 3
    ax = plots.plot_scores(normal, "answer_contains")
    title = ax.get_title()
    assert "answer_contains" in title and f"n={kept} scores" in title and f"{skipped} skipped excluded" in title
    for mode, text in zip(normal.modes, _legend_texts(ax)):
        mode_rows = counts[counts.query_mode == mode]
        assert text.startswith(mode)
        assert f"n={int((~mode_rows.skipped).sum())}" in text and "1 skipped excluded" in text
    assert ax.heta_nb_info["excluded"] == dict.fromkeys(normal.modes, 1)

    included = plots.plot_scores(normal, "answer_contains", include_skipped=True)
    assert f"n={len(counts)} scores" in included.get_title() and "skipped included as 0" in included.get_title()
    assert included.patches[1].get_height() == pytest.approx(
        _scores(normal, "answer_contains", "extractive_answer", skipped=True).mean()
    )


def test_errored_cases_are_counted_not_scored(errors: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_scores(errors, "evidence_recall@3")
    counts = errors.mode_counts()
    assert ax.heta_nb_info["errors"] == {m: c.errors for m, c in counts.items()}
    assert ax.heta_nb_info["n"]["vector_search"] == 0
    assert f"{errors.error_count} errored cases (no score)" in ax.get_title()
    texts = _legend_texts(ax)
    assert "n=0, 10 errors" in texts[1] and texts[1].startswith("vector_search")
    assert "1 error" in texts[0]


@pytest.mark.hostile
def test_histogram_bins_of_extreme_spans() -> None:
    wide = histogram([-1e308, 0.0, 1e308], kind="number", label="x", bins=12)
    assert wide is not None and "counts 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1" in wide["label"]
    narrow = histogram([-5e-324, 0.0, 0.0], kind="number", label="x", bins=12)
    assert narrow is not None and "counts 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2" in narrow["label"]
    single = histogram([2.0, 2.0], kind="number", label="x")
    assert single is not None and "1 bin from" in single["label"]
