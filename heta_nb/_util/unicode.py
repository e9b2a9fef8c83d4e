"""Text that UTF-8 can encode: what to do with lone surrogates.

JSON lets a string hold ``"\\ud800"``, a UTF-16 surrogate with no partner, and Python
reads it as a one-character ``str`` (files decoded with ``surrogateescape`` hold such
characters too). That is not Unicode, so ``str.encode("utf-8")`` raises on it: an HTML
file, a notebook, a Jupyter message or a report holding one could not be written.
"""

from __future__ import annotations

import re

__all__ = ["escape_surrogates_in_json", "valid_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` for people to read: every lone surrogate becomes U+FFFD (�)."""
    if text.isascii():
        return text
    try:  # (UTF-8 refuses exactly the lone surrogates; the C encoder is faster than a regex search)
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def escape_surrogates_in_json(json_text: str) -> str:
    """JSON text with each lone surrogate written as its ``\\uXXXX`` escape.

    Only valid for JSON text (a surrogate can only be inside a string there); it then
    parses back to the same value, and every other character keeps its bytes.
    """
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", json_text)
