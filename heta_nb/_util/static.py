"""What a widget output shows where widgets do not run (nbconvert, nbviewer, GitHub, a terminal).

IPython publishes every type of an object's mimebundle; a frontend with widgets draws the
``application/vnd.jupyter.widget-view+json`` view, the others show ``text/html`` (else
``text/plain``). ipywidgets puts the widget's repr there (``VBox(children=(HTML(value=''...``);
:class:`WithFallback` displays a widget with our own text and HTML instead, the view kept.
:class:`Static` is a plain output of both (a placeholder a ``display_id`` update replaces).
"""

from __future__ import annotations

import html as _html
from collections.abc import Callable
from typing import Any

__all__ = ["WIDGET_VIEW", "Static", "WithFallback", "line_html"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def line_html(text: str) -> str:
    """One line of text as a small static box (escaped)."""
    lines = "<br>".join(_html.escape(line) for line in text.splitlines())
    return f'<div class="heta-static-line"><p><em>{lines}</em></p></div>'


class Static:
    """An output of a text and its HTML (``html=None``: the text as one line of HTML; ``""``: nothing shown)."""

    def __init__(self, text: str, html: str | None = None) -> None:
        self.text = text
        self.html = line_html(text) if html is None else html

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": self.html}

    def __repr__(self) -> str:
        return self.text


class WithFallback:
    """A widget as IPython displays it, with ``text()`` as its ``text/plain`` and ``html()`` (else the
    text as one line) as its ``text/html``. Both are read when displayed (or a display updated)."""

    def __init__(self, widget: Any, text: Callable[[], str], html: Callable[[], str | None] | None = None) -> None:
        self.widget = widget
        self.text = text
        self.html = html

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = self.widget._repr_mimebundle_()
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        try:
            text = self.text()
            html = self.html() if self.html is not None else None
        except Exception as exc:  # noqa: BLE001 - a fallback never stops the widget from showing
            text, html = f"heta_nb: a widget (its static view failed: {type(exc).__name__})", None
        return {**data, "text/plain": text, "text/html": html or line_html(text)}, metadata
