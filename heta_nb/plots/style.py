"""The look every plot shares: mode colours, line styles, hatches, axes, legends and titles.

Styling is per call and never changes ``rcParams``; text, ticks and lines follow the active
style (``plt.style.use("dark_background")`` included); matplotlib is imported when needed.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from heta_nb._util.text import plural

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "MUTED",
    "PALETTE",
    "add_legend",
    "count_noun",
    "ink",
    "legend_entry",
    "mode_colors",
    "mode_hatches",
    "mode_linestyles",
    "new_axes",
    "paper",
    "record_info",
    "set_title",
    "short_number",
    "style_axes",
]

PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
"""Okabe-Ito colours (yellow left out: too faint on white), safe for colour-blind readers."""

_FIXED_MODES = {
    "full_text_search": 0,
    "extractive_answer": 1,
    "sql_text_search": 2,
    "vector_search": 3,
    "hybrid_search": 4,
}
"""Heta's common modes always get the same colour; other modes a stable hashed one."""

MUTED = "#888888"
"""Reference lines and legend keys: a mid grey, readable on light and dark backgrounds."""
_LINESTYLES = ("-", "--", ":", "-.")
_HATCHES = ("", "//", "xx", "..")


# -- colours ------------------------------------------------------------------------------
def mode_colors(modes: Iterable[str]) -> dict[str, str]:
    """A colour per mode: fixed for Heta's common modes, hashed (stable) for the others.

    Colours are unique among ``modes`` as long as there are no more modes than colours;
    pass every mode of a report (as the plots do), not a subset, to keep them stable.

    Args:
        modes: query modes (duplicates are ignored).

    Returns:
        ``{mode: "#rrggbb"}`` in the order of ``modes``.
    """
    modes = list(dict.fromkeys(modes))
    colors: dict[str, str] = {}
    used: set[int] = set()
    for mode in modes:
        if mode in _FIXED_MODES:
            colors[mode] = PALETTE[_FIXED_MODES[mode]]
            used.add(_FIXED_MODES[mode])
    for mode in sorted(m for m in modes if m not in colors):
        start = zlib.crc32(mode.encode("utf-8", "surrogatepass")) % len(PALETTE)  # any str, a lone surrogate too
        slot = next(
            (s % len(PALETTE) for s in range(start, start + len(PALETTE)) if s % len(PALETTE) not in used), None
        )
        slot = start if slot is None else slot
        used.add(slot)
        colors[mode] = PALETTE[slot]
    return {mode: colors[mode] for mode in modes}


def mode_linestyles(modes: Sequence[str], colors: dict[str, str]) -> dict[str, str]:
    """Solid lines, then dashed ones once colours repeat (more modes than colours)."""
    seen: dict[str, int] = {}
    styles = {}
    for mode in modes:
        count = seen.get(colors[mode], 0)
        seen[colors[mode]] = count + 1
        styles[mode] = _LINESTYLES[count % len(_LINESTYLES)]
    return styles


def mode_hatches(modes: Sequence[str], colors: dict[str, str]) -> dict[str, str]:
    """No hatch, then hatched bars once colours repeat (more modes than colours)."""
    return {mode: _HATCHES[_LINESTYLES.index(style)] for mode, style in mode_linestyles(modes, colors).items()}


# -- colours of the active style ------------------------------------------------------------
def ink() -> str:
    """The active style's text colour (``rcParams["text.color"]``): error bars, outlines, labels."""
    import matplotlib

    return str(matplotlib.rcParams["text.color"])


def paper() -> str:
    """The active style's axes background (``rcParams["axes.facecolor"]``): marker edges, fills."""
    import matplotlib

    return str(matplotlib.rcParams["axes.facecolor"])


# -- shared helpers -----------------------------------------------------------------------
def new_axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    """``ax``, or the Axes of a new :class:`~heta_nb.plots.figure.PlotFigure` of ``figsize``.

    The new figure is standalone (never a pyplot one) and shows itself as an image in Jupyter.
    """
    if ax is not None:
        return ax
    from heta_nb.plots.figure import new_plot_axes

    return new_plot_axes(figsize)


def style_axes(ax: Axes, grid: Literal["both", "x", "y"] = "y") -> None:
    """The house style: no top or right spine, softer left and bottom ones, a faint grid behind the data.

    Colours come from the active style (``rcParams``), softened with transparency, so the plot
    reads on a light or a dark background alike.
    """
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_alpha(0.6)
    ax.tick_params(labelsize="small")
    ax.set_axisbelow(True)
    ax.grid(True, axis=grid, linewidth=0.8, alpha=0.35)


def add_legend(ax: Axes, handles: Sequence[Any] | None = None) -> None:
    """The legend, outside the axes on the right; mode names are shown as they are."""
    kwargs: dict[str, Any] = {"handles": list(handles)} if handles is not None else {}
    legend = ax.legend(
        **kwargs,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
        frameon=False,
        borderaxespad=0.0,
        handlelength=1.6,
    )
    for text in legend.get_texts():  # mode names are data, not TeX
        text.set_parse_math(False)


def count_noun(count: int, noun: str) -> str:
    """``"1 error"``, ``"1234 errors"``: plot text writes counts without thousands separators."""
    return plural(count, noun, grouping=False)


def short_number(value: float) -> str:
    """A short number: ``0.3333 -> "0.333"``, ``12.0 -> "12"``."""
    return f"{value:.3g}"


def set_title(ax: Axes, main: str, note: str) -> None:
    """A two-part title: what is shown, then the counts (wrapped so it never outgrows the plot)."""
    import textwrap

    lines = textwrap.wrap(note, width=max(72, len(main)), break_on_hyphens=False)
    ax.set_title("\n".join([main, *lines]), fontsize="medium", parse_math=False)


def legend_entry(mode: str, parts: Sequence[str], width: int = 34) -> str:
    """A legend entry: the mode, then its counts wrapped to short lines."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 2 + len(part) <= width:
            lines[-1] += ", " + part
        else:
            lines.append(part)
    return "\n".join([mode, *lines])


def record_info(ax: Axes, **info: Any) -> None:
    """Attach what was drawn to the Axes as ``ax.heta_nb_info``."""
    ax.heta_nb_info = info  # type: ignore[attr-defined]
