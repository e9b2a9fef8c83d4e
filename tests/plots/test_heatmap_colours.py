"""A leaderboard heatmap's colours tell its means apart (issue 34: 0.56-0.83 looked alike)."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from heta_nb.plots.leaderboard import colour_range, plot_leaderboard


def _lightness(rgb: tuple[float, float, float]) -> float:
    """CIE L* of an sRGB colour (0-100): what the eye reads as light or dark."""

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return 116 * y ** (1 / 3) - 16 if y > 216 / 24389 else y * 24389 / 27


def _board(means: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "metric": "recall@5",
            "system": [f"recipe {i}" for i in range(len(means))],
            "benchmark": "demo",
            "mean": means,
            "best": [m == max(means) for m in means],
            "significant": False,
            "mean_diff": float("nan"),
        }
    )


def _cell_lightness(means: list[float]) -> list[float]:
    ax = plot_leaderboard(_board(means), kind="heatmap")
    image = ax.get_images()[0]
    return [_lightness(image.cmap(image.norm(m))[:3]) for m in means]


def test_means_a_few_points_apart_get_colours_a_reader_tells_apart() -> None:
    means = [0.56, 0.65, 0.74, 0.83]
    lightness = _cell_lightness(means)
    for a, b in itertools.pairwise(lightness):
        assert abs(a - b) >= 15, lightness  # ~15 L* is an obvious step; the fixed 0-1 scale gave 7
    assert abs(lightness[0] - lightness[-1]) >= 50


def test_the_scale_stays_inside_zero_one_for_scores_and_widens_a_flat_board() -> None:
    assert colour_range([0.02, 0.99]) == (0.0, 1.0)
    low, high = colour_range([0.7, 0.7])
    assert low == pytest.approx(0.65) and high == pytest.approx(0.75)
    assert colour_range([]) == (0.0, 1.0)
    low, high = colour_range([120.0, 480.0])  # latencies: no clamp
    assert low < 120 and high > 480


def test_the_colour_bar_shows_the_scale_used() -> None:
    ax = plot_leaderboard(_board([0.56, 0.83]), kind="heatmap")
    image = ax.get_images()[0]
    assert image.norm.vmin == pytest.approx(0.51) and image.norm.vmax == pytest.approx(0.88)
