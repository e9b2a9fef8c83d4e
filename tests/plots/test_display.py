"""Plots display as images in Jupyter by themselves, and follow the active style (dark too)."""

from __future__ import annotations

import struct
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.style  # noqa: E402
import pytest  # noqa: E402
from helpers import FIXTURES  # noqa: E402
from IPython.core.formatters import DisplayFormatter  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import heta_nb  # noqa: E402
from heta_nb import plots  # noqa: E402
from heta_nb.plots.figure import DISPLAY_SCALE, PlotAxes, PlotFigure  # noqa: E402
from heta_nb.testing import synthetic_report  # noqa: E402


@pytest.fixture(scope="module")
def normal() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


def _every_plot(report: heta_nb.EvaluationReport) -> list[Any]:
    """One Axes of each plot function (the comparison's plots included), each on a new figure."""
    benchmark = heta_nb.demo.load_benchmark()
    labelled = synthetic_report(40, modes=("full_text_search", "extractive_answer"), seed=4)
    ids = [case.case_id for case in benchmark.cases]
    raw = {
        **labelled.raw,
        "case_results": [{**r, "case_id": ids[int(r["case_id"][1:])]} for r in labelled.raw["case_results"]],
    }
    labelled = heta_nb.load_report(raw)
    comparison = heta_nb.compare(report, modes=["full_text_search", "extractive_answer"], metrics=["beir_ndcg@3"])
    return [
        plots.plot_scores(report, "answer_contains"),
        plots.plot_scores(report, "beir_ndcg@3", kind="box"),
        plots.plot_latency(report),
        plots.plot_metric_summary(report),
        plots.plot_by_label(labelled, benchmark, "evidence_recall@5", "difficulty"),
        comparison.plot_paired("beir_ndcg@3"),
        comparison.plot_deltas("beir_ndcg@3"),
    ]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_figures_and_axes_display_as_png_without_pyplot_or_the_extension(normal: heta_nb.EvaluationReport) -> None:
    """What IPython shows for a cell ending in ``plot_...(...)`` or ``plot_...(...).figure``:
    an image, not ``<Figure size 800x370 with 1 Axes>`` (no formatter registered for Figure)."""
    formatter = DisplayFormatter()
    with pytest.raises(KeyError):  # plain IPython: no PNG formatter registered for matplotlib's Figure
        formatter.formatters["image/png"].lookup_by_type(Figure)
    for ax in _every_plot(normal):
        assert isinstance(ax, PlotAxes) and isinstance(ax.figure, PlotFigure)
        for shown in (ax.figure, ax):
            data, metadata = formatter.format(shown)
            assert "text/plain" in data  # the fallback stays
            png = data["image/png"]
            width, height = _png_size(png)
            assert width > 300 and height > 200
            # drawn at twice the resolution, shown at the figure's own size (sharp on HiDPI screens)
            assert metadata["image/png"] == {
                "width": round(width / DISPLAY_SCALE),
                "height": round(height / DISPLAY_SCALE),
            }
            fig_width = ax.figure.get_figwidth() * ax.figure.dpi
            assert 0.6 * fig_width < metadata["image/png"]["width"] < 1.6 * fig_width  # cropped to content


def test_a_figure_of_the_callers_own_is_left_alone(normal: heta_nb.EvaluationReport) -> None:
    fig = Figure()
    ax = plots.plot_scores(normal, "answer_contains", ax=fig.subplots())
    assert type(ax.figure) is Figure  # the caller's figure, the caller's display
    data, _ = DisplayFormatter().format(ax.figure)
    assert "image/png" not in data


def _luminance(color: Any) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: Any, b: Any) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("style", ["default", "dark_background", "ggplot"])
def test_text_follows_the_active_style_and_stays_readable(normal: heta_nb.EvaluationReport, style: str) -> None:
    """Titles, tick labels, legends and value labels take the style's colours (WCAG contrast >= 4.5)."""
    with matplotlib.style.context(style):
        title_color = matplotlib.rcParams["axes.titlecolor"]
        expected_title = matplotlib.rcParams["text.color"] if title_color == "auto" else title_color
        drawn = _every_plot(normal)
    for ax in drawn:
        background = ax.get_facecolor()
        texts = [t for t in ax.figure.findobj(Text) if t.get_text().strip() and t.get_visible()]
        assert texts
        low = [(t.get_text()[:30], t.get_color()) for t in texts if _contrast(t.get_color(), background) < 4.5]
        assert low == [], f"{ax.heta_nb_info['plot']}: text too faint on {background}"
        assert to_rgb(ax.title.get_color()) == to_rgb(expected_title)
        assert "#333333" not in {matplotlib.colors.to_hex(t.get_color()) for t in texts}  # no hard-coded ink


def test_dark_style_png_is_dark_with_light_text(normal: heta_nb.EvaluationReport) -> None:
    """The saved image itself: a dark background, and light pixels where the text is."""
    import io

    import numpy as np
    from matplotlib.image import imread

    with matplotlib.style.context("dark_background"):
        ax = plots.plot_latency(normal)
    image = imread(io.BytesIO(ax.figure._repr_png_()[0]))[..., :3]
    brightness = image.mean(axis=2)
    assert np.median(brightness) < 0.1  # black background
    assert (brightness > 0.9).mean() > 0.005  # white text and ticks, enough of them to read
