"""Figures: no pyplot state, deterministic SVG and PNG, cheap import, colours and styles."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - only to check that no pyplot figure appears
import pytest  # noqa: E402
from helpers import FIXTURES  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import heta_nb  # noqa: E402
import heta_nb.demo  # noqa: E402
from heta_nb import plots  # noqa: E402
from heta_nb.model.io import decode_report  # noqa: E402
from heta_nb.model.json import dumps_compact  # noqa: E402
from heta_nb.render import figures  # noqa: E402
from heta_nb.testing import synthetic_report, synthetic_report_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def normal() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


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


# -- saving -------------------------------------------------------------------------------
NAMESPACES = (
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd",
)


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
