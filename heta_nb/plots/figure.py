"""Figures that show themselves: a Figure and Axes Jupyter displays as a PNG, with no pyplot.

matplotlib is imported with this module (only :mod:`heta_nb.plots.style` imports it, lazily).
"""

from __future__ import annotations

import base64
import html
import io
import struct
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure

__all__ = ["DISPLAY_SCALE", "PlotAxes", "PlotFigure", "display_html", "display_png", "new_plot_axes"]

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


_THEMED = (
    "<style>.heta-plot>img{max-width:100%;height:auto}.heta-plot>img.heta-plot-dark{display:none}"
    '[data-jp-theme-light="false"] .heta-plot>img.heta-plot-dark,body.vscode-dark .heta-plot>img.heta-plot-dark,'
    "body.vscode-high-contrast:not(.vscode-high-contrast-light) .heta-plot>img.heta-plot-dark{display:inline-block}"
    '[data-jp-theme-light="false"] .heta-plot>img.heta-plot-light,body.vscode-dark .heta-plot>img.heta-plot-light,'
    "body.vscode-high-contrast:not(.vscode-high-contrast-light) .heta-plot>img.heta-plot-light{display:none}</style>"
)
"""The page picks the image: JupyterLab's ``data-jp-theme-light`` and VS Code's body classes.
Without the style (an HTML sanitizer dropping it), the dark image stays ``hidden``."""


def display_html(fig: Figure | SubFigure) -> str | None:
    """The figure for HTML outputs: its light PNG and, for dark themes, a dark one the page picks.

    A light figure (the default style) is shown as two PNGs of the same size: the light one,
    and one with its greys inverted on a transparent background (:mod:`heta_nb.plots.dark`);
    a style rule of the output shows the dark one under JupyterLab's dark theme or a dark VS
    Code theme. A figure in a dark style (``dark_background``) reads on any page: None (the
    PNG alone is shown).
    """
    from heta_nb.plots.dark import dark_png, is_light

    root = fig.figure
    if not is_light(root):
        return None
    light, size = display_png(root)
    dark = dark_png(root, dpi=root.dpi * DISPLAY_SCALE, pad_inches=0.1)
    alt = html.escape(_alt(root), quote=True)

    def img(data: bytes, kind: str, extra: str = "") -> str:
        src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        return (
            f'<img class="heta-plot-{kind}"{extra} alt="{alt}" width="{size["width"]}" height="{size["height"]}"'
            f' src="{src}">'
        )

    return f'<div class="heta-plot">{_THEMED}{img(light, "light")}{img(dark, "dark", " hidden")}</div>'


def _alt(fig: Figure) -> str:
    """The figure's titles, for the images' alt text."""
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return "; ".join(t.replace("\n", " ") for t in titles) or "plot"


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

    def _repr_html_(self) -> str | None:
        return display_html(self)


class PlotAxes(Axes):
    """The Axes of a :class:`PlotFigure`: a cell ending in a plot function's result shows its figure."""

    def _repr_png_(self) -> tuple[bytes, dict[str, int]]:
        return display_png(self.figure)

    def _repr_html_(self) -> str | None:
        return display_html(self.figure)


def new_plot_axes(figsize: tuple[float, float], **figure_kwargs: Any) -> PlotAxes:
    """The one Axes of a new :class:`PlotFigure` of ``figsize`` (inches).

    No layout engine: positions are fixed, so saving twice gives the same bytes; the
    outside legend and long labels are kept by cropping to the content when saving.
    """
    fig = PlotFigure(figsize=figsize, **figure_kwargs)
    ax = fig.add_subplot(axes_class=PlotAxes)
    assert isinstance(ax, PlotAxes)
    return ax
