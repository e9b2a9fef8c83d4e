"""matplotlib plots: the kind chosen, what is drawn per mode, honest labels, no global state."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402 - only to check that no pyplot figure appears
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import FIXTURES  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import heta_nb  # noqa: E402
import heta_nb.demo  # noqa: E402
from heta_nb import plots, stats  # noqa: E402
from heta_nb.model.io import decode_report  # noqa: E402
from heta_nb.model.json import dumps_compact  # noqa: E402
from heta_nb.render import figures  # noqa: E402
from heta_nb.tables.distributions import label_breakdown  # noqa: E402
from heta_nb.testing import synthetic_report, synthetic_report_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


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


def test_mode_subset_keeps_colours(normal: heta_nb.EvaluationReport) -> None:
    colors = plots.mode_colors(normal.modes)
    ax = plots.plot_scores(normal, "answer_contains", modes=["sql_text_search"])
    assert len(ax.patches) == 1
    assert ax.patches[0].get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(colors["sql_text_search"]))


def test_mode_colours_are_fixed_distinct_and_stable() -> None:
    colors = plots.mode_colors(["full_text_search", "extractive_answer", "sql_text_search"])
    assert colors == {"full_text_search": "#0072B2", "extractive_answer": "#E69F00", "sql_text_search": "#009E73"}
    custom = plots.mode_colors(["zeta", "alpha", "full_text_search", "beta"])
    assert len(set(custom.values())) == 4 and custom["full_text_search"] == "#0072B2"
    assert plots.mode_colors(["beta", "full_text_search", "alpha", "zeta"]) == custom  # order does not matter
    assert set(plots.mode_colors([f"m{i}" for i in range(7)]).values()) == set(plots.PALETTE)


# -- plot_latency -------------------------------------------------------------------------
def test_latency_is_a_log_ecdf_with_median_and_p95(synthetic: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_latency(synthetic)
    assert ax.get_xscale() == "log"
    frame = synthetic.cases_frame()
    n_modes = len(synthetic.modes)
    # per mode: the ECDF step line and two markers (median, p95); plus the 0.5 and 0.95 guides
    assert len(ax.lines) == 3 * n_modes + 2
    steps = [line for line in ax.lines if line.get_drawstyle() == "steps-post"]
    assert len(steps) == n_modes
    for mode, line in zip(synthetic.modes, steps):
        values = frame[(frame.query_mode == mode) & (frame.status == "ok")]["latency_ms"].to_numpy()
        assert len(line.get_xdata()) == len(np.unique(values)) + 1  # one step per distinct latency
        assert list(line.get_xdata()[1:]) == pytest.approx(sorted(np.unique(values)))
        p50, p95 = np.quantile(values, [0.5, 0.95])
        assert ax.heta_nb_info["quantiles"][mode] == pytest.approx((p50, p95))
        markers = [m for m in ax.lines if m.get_marker() in ("o", "D") and m.get_color() == line.get_color()]
        points = sorted((float(m.get_xdata()[0]), float(m.get_ydata()[0])) for m in markers)
        assert [v for point in points for v in point] == pytest.approx([p50, 0.5, p95, 0.95])
    texts = _legend_texts(ax)
    assert texts[-2:] == ["median (p50)", "p95"]
    assert all("p50=" in text and "p95=" in text and "n=" in text for text in texts[:n_modes])
    assert f"{synthetic.error_count} errored results excluded" in ax.get_title()
    assert "log scale" in ax.get_xlabel()
    assert plots.plot_latency(synthetic, log=False).get_xscale() == "linear"


def test_latency_with_failed_modes(errors: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_latency(errors)
    assert ax.heta_nb_info["n"] == {"full_text_search": 9, "vector_search": 0, "no_such_mode": 0}
    assert "no latencies" in _legend_texts(ax)[1]
    assert plots.plot_latency(errors, include_errors=True).heta_nb_info["n"]["vector_search"] == 10


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
            assert bar.get_width() == pytest.approx(item.mean)
            assert item.mean == normal.score_summary[f"{mode}.{metric}"]
            assert segment[:, 0] == pytest.approx([item.ci_low, item.ci_high])
    assert "95% CI" in ax.get_xlabel() and "n=10 scores per mode and metric" in ax.get_title()
    assert "skipped scores averaged in as 0" in ax.get_title()


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


# -- no global state, ax= honoured --------------------------------------------------------
def _all_plots(normal: heta_nb.EvaluationReport, demo_pair: tuple[Any, Any]) -> list[Any]:
    """Each plot function, as a callable taking ``ax``."""
    report, benchmark = demo_pair
    return [
        lambda ax: plots.plot_scores(normal, "answer_contains", ax=ax),
        lambda ax: plots.plot_scores(normal, "beir_ndcg@3", kind="ecdf", ax=ax),
        lambda ax: plots.plot_latency(normal, ax=ax),
        lambda ax: plots.plot_metric_summary(normal, ax=ax),
        lambda ax: plots.plot_by_label(report, benchmark, "answer_contains", "difficulty", ax=ax),
    ]


def test_given_ax_is_drawn_on_and_returned(normal: heta_nb.EvaluationReport, demo_pair: tuple[Any, Any]) -> None:
    for plot in _all_plots(normal, demo_pair):
        fig = Figure()
        left, right = fig.subplots(1, 2)
        drawn = plot(right)
        assert drawn is right and drawn.figure is fig
        assert len(right.patches) + len(right.lines) > 0
        assert not left.patches and not left.lines and left.get_title() == ""


def test_no_pyplot_figure_and_rcparams_untouched(normal: heta_nb.EvaluationReport, demo_pair: tuple[Any, Any]) -> None:
    plt.close("all")
    before = dict(matplotlib.rcParams)
    for plot in _all_plots(normal, demo_pair):
        ax = plot(None)
        assert isinstance(ax.figure, Figure)
        figures.figure_to_png(ax.figure)
        figures.figure_to_svg(ax.figure)
    assert plt.get_fignums() == []
    assert dict(matplotlib.rcParams) == before


# -- saving -------------------------------------------------------------------------------
NAMESPACES = (
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd",
)


def test_svg_is_deterministic_and_self_contained(normal: heta_nb.EvaluationReport) -> None:
    first = figures.figure_to_svg(plots.plot_scores(normal, "answer_contains").figure)
    second = figures.figure_to_svg(plots.plot_scores(normal, "answer_contains").figure)
    assert first == second  # a new figure, drawn the same way, gives the same text
    assert first.lstrip().startswith("<?xml") and "<svg" in first and "answer_contains" not in first.split("<svg")[0]
    assert 'xlink:href="http' not in first and 'href="http' not in first
    rest = first
    for uri in NAMESPACES:
        rest = rest.replace(uri, "")
    assert "http" not in rest
    assert "<dc:date>" not in first and "matplotlib.org" not in first
    assert re.search(r'xlink:href="#', first)  # glyphs are internal references only


def test_png_is_deterministic(normal: heta_nb.EvaluationReport) -> None:
    ax = plots.plot_latency(normal)
    first = figures.figure_to_png(ax.figure)
    assert first == figures.figure_to_png(ax.figure)
    assert first == figures.figure_to_png(plots.plot_latency(normal).figure)
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and b"Software" not in first
    big = figures.figure_to_png(ax.figure, dpi=200)
    width = int.from_bytes(first[16:20], "big")
    assert int.from_bytes(big[16:20], "big") == pytest.approx(2 * width, rel=0.03)


def test_import_is_cheap() -> None:
    code = (
        "import sys, heta_nb.plots; print(','.join(m for m in ('matplotlib', 'pandas', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def test_more_modes_than_colours_are_told_apart_by_hatch_and_line_style() -> None:
    report = synthetic_report(30, modes=[f"m{i}" for i in range(9)], seed=3)
    colors = plots.mode_colors(report.modes)
    bars = plots.plot_scores(report, "answer_contains")
    seen = {(colors[m], patch.get_hatch() or "") for m, patch in zip(report.modes, bars.patches)}
    assert len(seen) == 9
    lines = plots.plot_scores(report, "evidence_recall@5", kind="ecdf")
    assert len({(line.get_color(), line.get_linestyle()) for line in lines.lines}) == 9


def test_saving_a_subfigure_saves_its_figure(normal: heta_nb.EvaluationReport) -> None:
    fig = Figure(figsize=(10, 4))
    left, right = fig.subfigures(1, 2)
    ax = plots.plot_scores(normal, "answer_contains", ax=right.subplots())
    assert ax.figure is right
    assert figures.figure_to_png(ax.figure) == figures.figure_to_png(fig)
    assert figures.figure_to_svg(ax.figure) == figures.figure_to_svg(fig)
