"""Figures that show themselves: a Figure and Axes Jupyter displays as a PNG, with no pyplot.

matplotlib is imported with this module (only :mod:`heta_nb.plots.style` imports it, lazily).
"""

from __future__ import annotations

import io
import struct
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure

__all__ = ["DISPLAY_SCALE", "PlotAxes", "PlotFigure", "display_png", "new_plot_axes"]

DISPLAY_SCALE = 2
"""Image pixels per CSS pixel of a displayed figure: sharp on high-density screens, shown at
the figure's own size (the PNG's ``width``/``height`` metadata say so, as IPython's
``retina`` format does)."""


def display_png(fig: Figure | SubFigure) -> tuple[bytes, dict[str, int]]:
    """The figure as Jupyter displays it: PNG bytes cropped to the content, and their display size.

    Args:
        fig: the figure (a subfigure's root figure is saved).

    Returns:
        ``(png, {"width": w, "height": h})`` with the size in CSS pixels.
    """
    root = fig.figure  # a SubFigure's root; a Figure's is itself
    buffer = io.BytesIO()
    root.savefig(
        buffer,
        format="png",
        dpi=root.dpi * DISPLAY_SCALE,
        bbox_inches="tight",
        pad_inches=0.1,
        metadata={"Software": None},
    )
    data = buffer.getvalue()
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk, right after the signature
    return data, {"width": max(1, round(width / DISPLAY_SCALE)), "height": max(1, round(height / DISPLAY_SCALE))}


class PlotFigure(Figure):
    """A standalone matplotlib Figure (never a pyplot one) that displays as an image.

    IPython shows a figure made without pyplot as ``<Figure size 800x370 with 1 Axes>``
    until ``%matplotlib inline`` registers its PNG formatter. This figure brings its own
    ``_repr_png_``, so a cell ending in ``plot_scores(...).figure`` shows the plot in
    JupyterLab, Notebook 7, VS Code, nbconvert and nbviewer, with or without
    ``%load_ext heta_nb``. Where pyplot's formatter is registered, it takes precedence
    (and with it the user's ``InlineBackend`` settings); the image is the same plot.
    """

    def _repr_png_(self) -> tuple[bytes, dict[str, int]]:
        return display_png(self)


class PlotAxes(Axes):
    """The Axes of a :class:`PlotFigure`: a cell ending in a plot function's result shows its figure."""

    def _repr_png_(self) -> tuple[bytes, dict[str, int]]:
        return display_png(self.figure)


def new_plot_axes(figsize: tuple[float, float], **figure_kwargs: Any) -> PlotAxes:
    """The one Axes of a new :class:`PlotFigure` of ``figsize`` (inches).

    No layout engine: positions are fixed, so saving twice gives the same bytes; the
    outside legend and long labels are kept by cropping to the content when saving.
    """
    fig = PlotFigure(figsize=figsize, **figure_kwargs)
    ax = fig.add_subplot(axes_class=PlotAxes)
    assert isinstance(ax, PlotAxes)
    return ax
