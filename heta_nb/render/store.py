"""A report store's listing as static HTML: a store explorer's view before a report is chosen.

A leaf of :mod:`heta_nb.render` (it needs only the Jinja environment), so the explorer can
import it without the views that import the comparison and the gate.
"""

from __future__ import annotations

from heta_nb.render.env import environment

__all__ = ["render_store_html"]


def render_store_html(location: str, reports: list[tuple[str, str]], limit: int = 50) -> str:
    """A report store's listing (``(key, label)`` per report, newest first): a store explorer's static view."""
    return environment().get_template("store.html.j2").render(location=location, reports=reports, limit=limit)
