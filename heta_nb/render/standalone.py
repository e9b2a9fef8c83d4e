"""The standalone page: ``standalone.html.j2`` around a static view, with the explorer's JSON.

The explorer (its JSON, script and styles) comes from the caller: it is
:mod:`heta_nb.explorer`'s, the notebook widget's own UI on an in-page source, which this
(lower) layer does not import.

The JSON (every case's details: tens of MB for a large report) never passes through
Jinja: the template renders a random placeholder, and the page is kept as the text
before it, the JSON as UTF-8 bytes and the text after it (:class:`Page`).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, NamedTuple

from markupsafe import Markup

from heta_nb._version import __version__
from heta_nb.render.env import environment, html_safe_json_bytes

__all__ = ["Page", "standalone_document"]


class Page(NamedTuple):
    """A standalone page as its rendered text around the explorer's JSON, kept as bytes.

    Writing :meth:`chunks` puts the JSON in the file without ever making it text (a text
    copy of non-ASCII JSON takes 2 bytes a character, and the whole page's text another copy).
    """

    head: str
    data: bytes
    tail: str

    def chunks(self) -> list[bytes]:
        """The page as UTF-8, in three chunks (to write without joining them)."""
        return [self.head.encode("utf-8"), self.data, self.tail.encode("utf-8")]

    def text(self) -> str:
        """The page as one text."""
        return b"".join(self.chunks()).decode("utf-8")


def standalone_document(
    *,
    title: str,
    heading: str | None = None,
    fragment: str,
    figures: list[dict[str, str]],
    explorer: dict[str, Any],
    explorer_rows: int,
    explorer_noun: str,
    explorer_script: str,
    explorer_styles: str,
    data_id: str,
    facts: list[tuple[str, str]],
    manifests: list[dict[str, Any]],
) -> Page:
    """The standalone page (``standalone.html.j2``) around a static view: of a report, a comparison or a board.

    Args:
        title: the document title (the browser tab's); ``heading``: a title above the view, only
            one the caller chose (else the view's own is the title).
        fragment: the static view (HTML made by :mod:`heta_nb.render`); ``figures``: ``data_uri``, ``alt``,
            ``caption``, ``width`` (its own) and ``min_width`` (its text >= 10 px) of each figure.
        explorer: the explorer's JSON payload (:mod:`heta_nb.explorer.page`); ``explorer_rows`` and
            ``explorer_noun``: how many rows and what one is; ``explorer_script`` and
            ``explorer_styles``: the inline script that mounts it and its CSS; ``data_id``: the
            id of its JSON payload.
        facts: ``(label, value)`` pairs that trace the export; ``manifests``: ``title``, ``text``,
            ``truncated`` and ``size`` of each manifest block.
    """
    token = f"heta-nb-explorer-json-{uuid.uuid4().hex}"  # (unguessable: report text cannot hold it)
    page = (
        environment()
        .get_template("standalone.html.j2")
        .render(
            explorer_json=Markup(token),  # the JSON (tens of MB) is put in after rendering: no copies
            title=title,
            heading=heading,
            version=__version__,
            exported_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            fragment=Markup(fragment),
            figures=figures,
            explorer_rows=explorer_rows,
            explorer_noun=explorer_noun,
            data_id=data_id,
            facts=facts,
            manifests=manifests,
            explorer_js=Markup(_script_text(explorer_script)),
            explorer_css=Markup(_style_text(explorer_styles)),
        )
    )
    head, _, tail = page.partition(token)
    return Page(head, html_safe_json_bytes(explorer), tail)


def _script_text(script: str) -> str:
    """A script's text as a ``<script>`` element holds it (no ``</script`` can end it early)."""
    return script.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def _style_text(styles: str) -> str:
    """CSS as a ``<style>`` element holds it."""
    return styles.replace("</style", "<\\/style")
