"""The one Jinja2 environment behind every heta_nb HTML view, and its filters.

Autoescaping is on for every template and undefined names raise
(``StrictUndefined``), so a typo in a template fails a test instead of silently
rendering nothing. The environment is built on first use only: importing
:mod:`heta_nb.render` stays cheap.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import threading
from collections.abc import Iterator
from typing import Any

import jinja2
import markupsafe
from jinja2.utils import htmlsafe_json_dumps

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; Jinja's filter then
    orjson = None  # type: ignore[assignment]

from heta_nb._util.unicode import valid_text
from heta_nb._util.values import int_text

__all__ = [
    "environment",
    "format_count",
    "format_number",
    "html_safe_json",
    "html_safe_json_bytes",
    "title_level",
]

_TITLE_LEVEL: contextvars.ContextVar[int] = contextvars.ContextVar("heta_nb_title_level", default=3)
"""The heading level of a view's title: 3 in a notebook (under the notebook's own headings)."""


@contextlib.contextmanager
def title_level(level: int) -> Iterator[None]:
    """Render views with their title at heading ``level`` (their sections one below, and so on).

    A standalone page is its view's document: the title is its ``<h1>`` (or ``<h2>`` under a
    heading the caller chose), sections ``<h2>``, where a notebook output starts at ``<h3>``.
    """
    token = _TITLE_LEVEL.set(level)
    try:
        yield
    finally:
        _TITLE_LEVEL.reset(token)


def _heading(level: int) -> str:
    """``htag(3)`` in a template: the tag of a heading written for a title at level 3."""
    return f"h{min(6, max(1, level - 3 + _TITLE_LEVEL.get()))}"


_LOCK = threading.Lock()
_ENV: jinja2.Environment | None = None


def format_number(value: Any, digits: int = 3) -> str:
    """A number for display: ``digits`` decimals, NaN/None -> ``—``, inf -> ``∞``.

    Booleans read ``true``/``false``; float magnitudes from a million up use an exponent so a
    stray ``1e100`` cannot produce a hundred-digit cell; integers are exact up to 10**15, then
    written with an exponent without passing through a float (:func:`heta_nb._util.values.int_text`).
    """
    if type(value) is float and -1e6 < value < 1e6:  # (the common case first; NaN fails both tests)
        text = f"{value:.{digits}f}"
        return text if text[0] != "-" or text != "-0." + "0" * digits else text[1:]
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, (int, float)):
        return "—"
    if isinstance(value, int):
        return int_text(value, digits)  # (exact: no 400-digit cells, and never ∞ or OverflowError)
    if math.isnan(value):
        return "—"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if abs(value) >= 1e6:
        return f"{value:.{max(digits - 1, 1)}e}"
    text = f"{value:.{digits}f}"
    return "0." + "0" * digits if text == "-0." + "0" * digits else text


def format_count(value: Any) -> str:
    """An integer count with thousands separators (``12,400``); anything else via :func:`format_number`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int_text(value)
    return format_number(value)


class _Template(jinja2.Template):
    """Renders to text UTF-8 can encode (see :func:`heta_nb._util.unicode.valid_text`)."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        return valid_text(super().render(*args, **kwargs))


class _Environment(jinja2.Environment):
    """Reads ``a.b`` on a dict as ``a["b"]`` first (render contexts are plain dicts).

    Jinja's default tries the attribute first, which for a dict raises and catches an
    AttributeError on every lookup: a third of the render time of a large report.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def _build() -> jinja2.Environment:
    env = _Environment(
        loader=jinja2.PackageLoader("heta_nb", "render/templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.template_class = _Template
    env.filters["num"] = format_number
    env.filters["count"] = format_count
    env.filters["tojson"] = _tojson
    env.globals["htag"] = _heading
    return env


_HTML_SAFE = ((b"&", b"\\u0026"), (b"<", b"\\u003c"), (b">", b"\\u003e"), (b"'", b"\\u0027"))
_LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def html_safe_json(value: Any) -> str:
    """Jinja's ``tojson`` as plain text (HTML-safe JSON for a ``<script>``); see :func:`html_safe_json_bytes`."""
    return html_safe_json_bytes(value).decode("utf-8")


def html_safe_json_bytes(value: Any) -> bytes:
    """:func:`html_safe_json` as UTF-8 bytes, through orjson: 10x faster than Jinja's on an
    export's embedded case data, and no text copy of tens of MB. Keys sorted as Jinja sorts
    them; a value orjson refuses (a lone surrogate, a non-string key) goes through Jinja's
    own function."""
    if orjson is not None:
        try:
            data: bytes = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            pass
        else:
            for raw, escaped in (*_HTML_SAFE, *_LINE_SEPARATORS):
                if raw in data:  # (a scan; a copy only when there is something to escape)
                    data = data.replace(raw, escaped)
            return data
    return str(htmlsafe_json_dumps(value, dumps=json.dumps, sort_keys=True)).encode("utf-8")  # (ASCII: \\u escapes)


def _tojson(value: Any) -> markupsafe.Markup:
    """The ``tojson`` filter: :func:`html_safe_json`."""
    return markupsafe.Markup(html_safe_json(value))


def environment() -> jinja2.Environment:
    """The shared environment (built once, thread-safe)."""
    global _ENV
    if _ENV is None:
        with _LOCK:
            if _ENV is None:
                _ENV = _build()
    return _ENV
