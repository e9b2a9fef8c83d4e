"""matplotlib figures as deterministic SVG text and PNG bytes, for HTML exports and notebooks.

matplotlib is imported when a function here is called.
"""

from __future__ import annotations

import io
import math
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from heta_nb._util.unicode import valid_text

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

__all__ = ["MIN_TEXT_PX", "draw_svg", "figure_to_png", "figure_to_svg", "svg_display_width"]


def _root(fig: Figure | SubFigure) -> Figure:
    """The top-level Figure (``ax.figure`` may be a SubFigure)."""
    return fig.figure  # a Figure's ``figure`` is itself, a SubFigure's the root (matplotlib >= 3.7)


_TEXT_LOCK = threading.RLock()


@contextmanager
def _encodable_text(fig: Figure) -> Iterator[None]:
    """Every text of ``fig`` UTF-8 can encode while it is laid out and saved.

    A report may hold a lone surrogate (valid JSON ``"\\ud800"``) in a mode, metric or id,
    and matplotlib's font code refuses one (``TypeError`` from ``FT2Font.set_text``). The
    texts already on the figure, and those it sets while drawing (tick labels come from
    the formatters then), read each lone surrogate as U+FFFD
    (:func:`heta_nb._util.unicode.valid_text`); other text is left as it is. The class's
    ``set_text`` is wrapped only for the save, under a lock (re-entrant: a nested save
    keeps the outer wrapper).
    """
    from matplotlib.text import Text

    with _TEXT_LOCK:
        original = Text.set_text
        wrapped = getattr(original, "_heta_nb_valid", False)
        if not wrapped:

            def set_text(self: Text, s: object) -> None:
                original(self, valid_text(s) if type(s) is str else s)

            set_text._heta_nb_valid = True  # type: ignore[attr-defined]
            Text.set_text = set_text  # type: ignore[method-assign]
        try:
            for text in fig.findobj(Text):
                raw = text.get_text()
                if not raw.isascii():
                    text.set_text(raw)  # (through the wrapper)
            yield
        finally:
            if not wrapped:
                Text.set_text = original  # type: ignore[method-assign]


@contextmanager
def _settled(fig: Figure) -> Iterator[None]:
    """Hold a figure with a layout engine (e.g. constrained) still while saving.

    Each layout pass moves things by a few ULPs, so the layout runs only when the figure
    changed since it was last drawn; saving an unchanged figure again gives the same bytes.
    """
    engine = fig.get_layout_engine()
    if engine is None:
        yield
        return
    if fig.stale:  # changed since it was last drawn: lay it out again
        fig.draw_without_rendering()
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)
        fig.stale = False  # it was just drawn as it is; a later change marks it stale again


def figure_to_svg(fig: Figure | SubFigure) -> str:
    """The figure as a self-contained SVG document; the same figure gives the same text.

    Cropped to its content (``bbox_inches="tight"``, like Jupyter's inline display).
    Dates, creator links and random element ids are left out (the id salt is fixed for
    this call only), so the SVG has no external reference. Text stays text, drawn by
    the browser's fonts, so matplotlib's "Glyph ... missing from font" warnings (a
    name in a script DejaVu Sans lacks, or with a control character) do not apply and
    are not shown.

    Args:
        fig: ``ax.figure``; a subfigure saves its whole figure.

    Returns:
        The SVG text.
    """
    import matplotlib

    root = _root(fig)
    buffer = io.StringIO()
    # Text stays text (svg.fonttype "none"): a fifth of the size of glyph outlines.
    with (
        _encodable_text(root),
        _settled(root),
        matplotlib.rc_context({"svg.hashsalt": "heta_nb", "svg.fonttype": "none"}),
        warnings.catch_warnings(),
    ):
        warnings.filterwarnings("ignore", r"Glyph \d+ .*missing from (current )?font", UserWarning)
        root.savefig(
            buffer,
            format="svg",
            bbox_inches="tight",
            pad_inches=0.1,
            metadata={"Date": None, "Creator": None, "Type": None, "Format": None},
        )
    return valid_text(buffer.getvalue())


def draw_svg(draw: Callable[[], Axes]) -> tuple[str | None, str | None]:
    """``(svg, None)`` of the figure ``draw()`` plots, or ``(None, why)`` if it cannot be drawn.

    For exports, where one figure must not cost the whole file: matplotlib refuses some
    valid reports (scores from -1e308 to 1e308 span more than a float holds, so no
    tick can be placed); ``why`` names the error.

    Args:
        draw: plots a figure and returns its Axes, e.g. ``functools.partial(plot_scores, report, metric)``.

    Returns:
        ``(svg, None)`` or ``(None, "ExceptionType: first line of its message")``.
    """
    from numpy.linalg import LinAlgError

    try:
        return figure_to_svg(draw().figure), None
    # matplotlib 3.7 / numpy 1.24 fail on the same spans with IndexError (no tick) or a singular
    # transform (LinAlgError, a plain Exception there), newer ones with ValueError / OverflowError
    except (ValueError, OverflowError, FloatingPointError, IndexError, LinAlgError) as exc:
        lines = str(exc).strip().splitlines()
        return None, f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def figure_to_png(fig: Figure | SubFigure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes, cropped to its content, without software metadata.

    Args:
        fig: ``ax.figure``; a subfigure saves its whole figure.
        dpi: resolution (pixels per inch).

    Returns:
        The PNG bytes; the same figure gives the same bytes.
    """
    root = _root(fig)
    buffer = io.BytesIO()
    with _encodable_text(root), _settled(root):
        root.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.1, metadata={"Software": None})
    return buffer.getvalue()


MIN_TEXT_PX = 10.0
"""The smallest text a shown figure may have, in CSS pixels."""

_SVG_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)(pt|px)?"')
_SVG_VIEWBOX = re.compile(r'<svg\b[^>]*?\sviewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
_SVG_FONT = re.compile(r'font-size(?:="|:\s*)([\d.]+)')


def svg_display_width(svg: str) -> tuple[float, float]:
    """``(natural, smallest)``: an SVG figure's own width and the narrowest it may be shown at, in CSS px.

    Shown narrower than ``smallest``, its smallest text would fall below :data:`MIN_TEXT_PX`
    (text sizes are in the viewBox's units; matplotlib's width is in points).
    """
    width, unit = (m.group(1), m.group(2)) if (m := _SVG_WIDTH.search(svg)) else ("600", "px")
    natural = float(width) * (4 / 3 if unit == "pt" else 1.0)
    view = _SVG_VIEWBOX.search(svg)
    view_width = float(view.group(1)) if view else natural
    sizes = [float(s) for s in _SVG_FONT.findall(svg) if float(s) > 0]
    if not sizes or not view_width:
        return natural, natural
    return natural, float(math.ceil(min(max(natural, 1.0) * 4, view_width * MIN_TEXT_PX / min(sizes))))
