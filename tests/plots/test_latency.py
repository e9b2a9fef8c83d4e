"""plot_latency."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import FIXTURES  # noqa: E402

import heta_nb  # noqa: E402
import heta_nb.demo  # noqa: E402
from heta_nb import plots  # noqa: E402
from heta_nb.testing import synthetic_report  # noqa: E402


@pytest.fixture(scope="module")
def errors() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-errors.json")


@pytest.fixture(scope="module")
def synthetic() -> heta_nb.EvaluationReport:
    return synthetic_report(200, seed=4)


def _legend_texts(ax: Any) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [text.get_text() for text in legend.get_texts()]


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


@pytest.mark.parametrize(("low", "high"), [(0.5, 4.0), (7.0, 200.0), (3.0, 900.0), (0.01, 500.0)])
def test_a_log_axis_always_labels_several_ticks(low: float, high: float) -> None:
    """One labelled power of ten ("100") says too little: 1-2-5 steps up to three decades."""
    raw = synthetic_report(40, modes=("m",), seed=5).to_dict()
    for index, result in enumerate(raw["case_results"]):
        result["latency_ms"] = low * (high / low) ** (index / 39)
    ax = plots.plot_latency(heta_nb.load_report(raw))
    ax.figure.canvas.draw()
    left, right = ax.get_xlim()
    labelled = [
        t.get_text()
        for t in [*ax.get_xticklabels(), *ax.get_xticklabels(minor=True)]
        if t.get_text() and left <= t.get_position()[0] <= right
    ]
    assert len(labelled) >= 3, labelled
