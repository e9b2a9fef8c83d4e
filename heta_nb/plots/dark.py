"""A light figure drawn for a dark page: greys inverted, colours kept, the background transparent.

The kernel cannot know the theme of the page that shows a figure, so a light figure is shown
in HTML as two PNGs, this one for dark themes (JupyterLab Dark, VS Code's dark themes), and
the page's own CSS picks one (:func:`heta_nb.plots.figure.display_html`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.collections import Collection
from matplotlib.colors import to_rgba, to_rgba_array
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

__all__ = ["dark_png", "is_light"]

_NEUTRAL = 0.08
"""A colour whose channels differ by less than this is a grey (ink, paper, grid): inverted."""


def _luminance(color: Any) -> float:
    r, g, b, _ = to_rgba(color)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def is_light(fig: Figure) -> bool:
    """The figure has a light background (the default style; not ``dark_background``)."""
    return _luminance(fig.patch.get_facecolor()) > 0.5


def _inverted(color: Any) -> tuple[float, float, float, float] | None:
    """A grey with its lightness inverted (black ink -> white), or None for a colour (kept)."""
    if isinstance(color, str) and color.lower() in ("none", "auto"):
        return None
    r, g, b, a = to_rgba(color)
    if max(r, g, b) - min(r, g, b) >= _NEUTRAL:
        return None
    v = 1.0 - (r + g + b) / 3
    return (v, v, v, a)


def _inverted_array(colors: Any) -> np.ndarray | None:
    array = to_rgba_array(colors)
    if not len(array):
        return None
    spread = array[:, :3].max(axis=1) - array[:, :3].min(axis=1)
    grey = spread < _NEUTRAL
    if not grey.any():
        return None
    out = array.copy()
    out[grey, :3] = 1.0 - array[grey, :3].mean(axis=1, keepdims=True)
    return out


def _swaps(artist: Artist) -> Iterator[tuple[Callable[[Any], Any], Any, Any]]:
    """``(setter, original, inverted)`` for each grey colour of ``artist``."""
    if isinstance(artist, Text):
        pairs: list[tuple[Callable[[Any], Any], Any]] = [(artist.set_color, artist.get_color())]
    elif isinstance(artist, Line2D):
        pairs = [
            (artist.set_color, artist.get_color()),
            (artist.set_markeredgecolor, artist.get_markeredgecolor()),
            (artist.set_markerfacecolor, artist.get_markerfacecolor()),
        ]
    elif isinstance(artist, Patch):
        pairs = [(artist.set_facecolor, artist.get_facecolor()), (artist.set_edgecolor, artist.get_edgecolor())]
    elif isinstance(artist, Collection):
        arrays: list[tuple[Callable[[Any], Any], Any]] = [
            (artist.set_facecolor, artist.get_facecolor()),
            (artist.set_edgecolor, artist.get_edgecolor()),
        ]
        for array_setter, colors in arrays:
            inverted = _inverted_array(colors)
            if inverted is not None:
                yield array_setter, np.array(colors, copy=True), inverted
        return
    else:
        return
    for setter, color in pairs:
        new = _inverted(color)
        if new is not None:
            yield setter, color, new


@contextmanager
def _dark(fig: Figure) -> Iterator[None]:
    """The figure's greys inverted while inside; every colour restored after."""
    undo: list[tuple[Callable[[Any], Any], Any]] = []
    try:
        for artist in fig.findobj(Artist):
            if artist is fig.patch:
                continue  # saved transparent
            for setter, original, new in list(_swaps(artist)):
                setter(new)
                undo.append((setter, original))
        yield
    finally:
        for setter, original in reversed(undo):
            setter(original)


def dark_png(fig: Figure, dpi: float, pad_inches: float = 0.1) -> bytes:
    """The light ``fig`` as a PNG for a dark page: greys inverted, transparent background.

    Args:
        fig: a light figure (:func:`is_light`); it is left as it was.
        dpi: the resolution, as for the light image (the two are the same size).
        pad_inches: the padding around the cropped content.

    Returns:
        PNG bytes.
    """
    buffer = io.BytesIO()
    stale = fig.stale
    with _dark(fig):
        fig.savefig(
            buffer,
            format="png",
            dpi=dpi,
            bbox_inches="tight",
            pad_inches=pad_inches,
            transparent=True,
            metadata={"Software": None},
        )
    fig.stale = stale
    return buffer.getvalue()
