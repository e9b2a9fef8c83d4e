"""Shortening and describing text for people: the one place that cuts text.

Every view cuts something (a 1 MB answer, a 300-character case id, an exception whose
``__str__`` raises), and each cut must say so. These helpers are the only ones that do
it, so a change of convention (the ellipsis, the "+N chars" note) happens here once.
:func:`unlinked` is the markdown escapers' last step: no URL or address in a text links.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ELLIPSIS",
    "as_text",
    "clip",
    "clip_label",
    "clip_tail",
    "compact_duration",
    "describe_error",
    "listing",
    "one_line",
    "plural",
    "shorten",
    "unlinked",
]

ELLIPSIS = "…"
_WWW_DOT = re.compile(r"(?i)(?<=www)\.")
_SCHEME_COLON = re.compile(r":(?=/)")
_EMAIL_AT = re.compile(r"(@|&#64;)(?=(?:\w|\\?[-_])+\\?\.)")
"""An ``@`` (or ``&#64;``) an address could continue from: a domain label, then a dot (escaped or not)."""


def as_text(value: Any) -> str:
    """``value`` as text: ``None`` as ``""``, a string as itself, anything else through :func:`str`."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def shorten(value: Any, limit: int, *, ellipsis: str = ELLIPSIS) -> str:
    """At most ``limit`` characters; when cut, the text ends with ``ellipsis`` (``…``)."""
    text = value if type(value) is str else as_text(value)
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ellipsis), 0)] + ellipsis


def clip(value: Any, limit: int) -> dict[str, str]:
    """``{"text": ..., "more": ...}``: the first ``limit`` characters, for templates.

    ``more`` is ``""`` when nothing was cut, else the number of characters left out
    with thousands separators (templates show ``… (+1,234 chars)``).
    """
    text = as_text(value)
    if len(text) <= limit:
        return {"text": text, "more": ""}
    return {"text": text[:limit], "more": f"{len(text) - limit:,}"}


def clip_tail(value: Any, limit: int) -> dict[str, str]:
    """Like :func:`clip`, but keeps the last ``limit`` characters (a traceback's end)."""
    text = as_text(value)
    if len(text) <= limit:
        return {"text": text, "more": ""}
    return {"text": text[-limit:], "more": f"{len(text) - limit:,}"}


def clip_label(value: Any, limit: int) -> str:
    """A name or id cut to ``limit`` characters with a ``… (+N chars)`` note."""
    clipped = clip(value, limit)
    return clipped["text"] + (f"{ELLIPSIS} (+{clipped['more']} chars)" if clipped["more"] else "")


def one_line(value: Any) -> str:
    """The text with every run of whitespace (newlines included) made one space."""
    return " ".join(as_text(value).split())


def describe_error(exc: BaseException, limit: int | None = None, *, with_type: bool = False) -> str:
    """``str(exc)``, never raising (a broken ``__str__`` gives a note instead).

    Args:
        exc: The exception.
        limit: Cut the message to this many characters (on one line) when given.
        with_type: Prefix ``TypeName: `` (just the type name when the message is empty).
    """
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not cost the caller
        text = f"<{type(exc).__name__}; its message could not be read>"
    if limit is not None:
        text = shorten(one_line(text), limit)
    if with_type:
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text


def plural(count: int, noun: str, plural_form: str | None = None, *, grouping: bool = True) -> str:
    """``"1 case"``, ``"1,234 cases"`` (``"1234 cases"`` with ``grouping=False``, as plots write counts)."""
    word = noun if count == 1 else plural_form or f"{noun}s"
    return f"{count:,} {word}" if grouping else f"{count} {word}"


def listing(items: Iterable[Any], limit: int, *, quote: bool = False, counted: bool = True) -> str:
    """``"a, b, c and 4 more"``: at most ``limit`` items, then how many were left out.

    With ``counted=False`` the rest is only hinted at: ``"a, b, c, ..."`` (benchmark warnings).
    """
    values = list(items)
    shown = [repr(v) if quote else as_text(v) for v in values[:limit]]
    rest = len(values) - len(shown)
    text = ", ".join(shown)
    if rest <= 0:
        return text
    return f"{text} and {rest:,} more" if counted else f"{text}, ..."


def compact_duration(seconds: float | None) -> str:
    """A duration for a progress line: ``"1h02m"``, ``"3m07s"``, ``"12s"``, or ``"?"`` when unknown."""
    if seconds is None:
        return "?"
    whole = max(0, int(round(seconds)))
    if whole >= 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    if whole >= 60:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole}s"


def unlinked(escaped: str) -> str:
    """Escaped markdown with GFM's extended autolinks broken; it renders the same text.

    GitHub links ``http://``, ``https://``, ``ftp://`` URLs and ``www.`` names where it
    reads them in the source, and e-mail addresses (``a@b.c``, ``mailto:``, ``xmpp:``)
    in each text node after parsing. So the ``:`` of ``://`` is written ``\\:`` (no
    scheme), the dot of ``www.`` ``\\.``, and an empty ``<span></span>`` goes before each
    ``@`` followed by a domain (``a@b.c``): it ends the text node, so no local part is left
    (``recall@3`` has no domain: left as it is). For the markdown escapers (:func:`heta_nb.gate.markdown.md`,
    :func:`heta_nb.notebook.md_escape`), after they escape ``\\``.

    Args:
        escaped: Text already escaped for markdown (``\\`` as ``\\\\``, ``<`` as ``&lt;``).

    Returns:
        The text with no extended autolink left.
    """
    if ":" in escaped:
        escaped = _SCHEME_COLON.sub(r"\\:", escaped)
    if "." in escaped:
        escaped = _WWW_DOT.sub(r"\\.", escaped)
    if "@" in escaped or "&#64;" in escaped:
        escaped = _EMAIL_AT.sub(r"<span></span>\1", escaped)
    return escaped
