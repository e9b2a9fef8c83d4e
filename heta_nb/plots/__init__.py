"""matplotlib plots of evaluation reports: score distributions, latency, summaries, labels.

Every function takes an optional ``ax=`` and returns the Axes it drew on. Without one it
creates a standalone :class:`~heta_nb.plots.figure.PlotFigure` (never a pyplot figure), so
plotting here never changes pyplot's state or ``rcParams``; all styling is per call, and
text, ticks and lines take their colours from the active style (``dark_background`` too).
Such a figure, and the Axes returned, show as an image in Jupyter by themselves (no
``%matplotlib inline``, no ``%load_ext heta_nb``), in nbconvert and nbviewer too.
Save a figure with :func:`heta_nb.render.figures.figure_to_svg` / ``figure_to_png``
(deterministic bytes; the SVG helper fixes ``svg.hashsalt`` inside an ``rc_context`` for
that call only).

Each mode keeps one colour in every plot (a colour-blind-safe Okabe-Ito palette, see
:func:`mode_colors`). Skipped scores are left out of distributions by default, errored
cases never are scores; titles and legends say how many of each there were.

Each returned Axes carries a ``heta_nb_info`` dict describing what was drawn (``plot``,
``kind``, ``metric``, ``modes`` and per-mode ``n``/``skipped``/``errors``).

matplotlib (and pandas, for :func:`plot_by_label`) is imported when a function is called.

Modules: :mod:`~heta_nb.plots.scores` (:func:`plot_scores`), :mod:`~heta_nb.plots.latency`,
:mod:`~heta_nb.plots.summary` (:func:`plot_metric_summary`), :mod:`~heta_nb.plots.labels`
(:func:`plot_by_label`), :mod:`~heta_nb.plots.history` (:func:`plot_history`: a recipe's reports
over time, ``History.plot``); :mod:`~heta_nb.plots.style` and :mod:`~heta_nb.plots.ecdf` are
what they share.
"""

from __future__ import annotations

from heta_nb.plots.ecdf import MAX_ECDF_STEPS
from heta_nb.plots.history import plot_history
from heta_nb.plots.labels import plot_by_label
from heta_nb.plots.latency import plot_latency
from heta_nb.plots.scores import MAX_BAR_VALUES, MAX_FREQUENCY_BARS, SCORE_KINDS, plot_scores
from heta_nb.plots.style import PALETTE, mode_colors
from heta_nb.plots.summary import plot_metric_summary

__all__ = [
    "MAX_BAR_VALUES",
    "MAX_ECDF_STEPS",
    "MAX_FREQUENCY_BARS",
    "PALETTE",
    "SCORE_KINDS",
    "mode_colors",
    "plot_by_label",
    "plot_history",
    "plot_latency",
    "plot_metric_summary",
    "plot_scores",
]
