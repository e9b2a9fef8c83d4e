"""Parsing a report file's JSON: orjson when it reads the text exactly as the standard library
would, else :func:`json.loads`, whose errors name the line and column; the garbage collector
is paused meanwhile (:func:`paused_gc`)."""

from __future__ import annotations

import gc
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from heta_nb.errors import ReportFormatError

__all__ = ["parse_json", "paused_gc"]

_DIGITS = bytes(48 if 48 <= code <= 57 else 32 for code in range(256))
"""Maps every ASCII digit to ``0`` and any other byte to a space."""

_LONG_RUN = b"0" * 19
"""19 digits in a row: where an integer beyond 64 bits could be (orjson reads it as a float)."""

_CHUNK = 8 << 20


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector (if it runs) for the duration of the block.

    Parsing a report allocates millions of containers and no cycles; with the collector
    running, each young-generation pass scans them and the full passes grow with the
    heap, which makes a large parse about twice as slow.
    """
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _orjson_exact(data: bytes) -> bool:
    """Whether orjson reads ``data`` as :func:`json.loads` does: no integer beyond 64 bits.

    orjson reads such an integer as a float (``10**30`` becomes ``1e30``), where
    ``json.loads`` keeps it exact. The bytes are scanned, a chunk at a time, for 19 digits
    in a row (C speed); each such run is then looked at closely (digits in a string, or
    a 64-bit integer, are fine).
    """
    size = len(data)
    for start in range(0, size, _CHUNK):
        low = max(0, start - 32)
        window = data[low : min(size, start + _CHUNK + 32)]
        digits = window.translate(_DIGITS)
        found = digits.find(_LONG_RUN)
        while found >= 0:
            end = digits.find(b" ", found)
            end = len(digits) if end < 0 else end
            if _big_integer(window, found, end, at_start=low > 0 and found == 0):
                return False
            found = digits.find(_LONG_RUN, end)
    return True


_BEFORE_NUMBER = frozenset(b":,[ \t\r\n")


def _big_integer(window: bytes, start: int, end: int, *, at_start: bool) -> bool:
    """Whether the digits ``window[start:end]`` are an integer literal beyond 64 bits."""
    if at_start:
        return True  # cut by the window: decide the safe way
    if end < len(window) and window[end] in b".eE":
        return False  # a float's digits: orjson reads floats exactly
    negative = start > 0 and window[start - 1] == 45  # "-"
    before = start - 1 - negative
    if before >= 0 and window[before] not in _BEFORE_NUMBER:
        return False  # inside a string
    value = int(window[start:end]) if end - start <= 21 else 2**70
    return value > 2**63 if negative else value > 2**64 - 1


def parse_json(data: bytes | str, *, source: str) -> tuple[Any, bool]:
    """Parse report JSON (Heta's encoding: ``NaN`` and ``Infinity`` accepted).

    Args:
        data: The file's bytes (UTF-8, a BOM allowed) or its text.
        source: Names the report in error messages.

    Returns:
        ``(value, exact)``: the parsed value, and whether orjson parsed it (the value
        then holds no NaN, infinity, lone surrogate or integer beyond 64 bits, so
        orjson encodes it again without loss).

    Raises:
        ReportFormatError: empty, not UTF-8, or invalid JSON (with line and column).
    """
    if isinstance(data, bytes) and (not data or data.isspace()):
        raise ReportFormatError(source, ["empty file, not a report"])
    try:
        raw = data.encode("utf-8") if isinstance(data, str) else data
    except UnicodeEncodeError:  # lone surrogates: only the standard library reads them
        raw = None
    if raw is not None:
        if raw is data and raw.startswith(b"\xef\xbb\xbf"):  # a text's BOM is an error, as json.loads says
            raw = raw[3:]
        import orjson

        if _orjson_exact(raw):
            try:
                return orjson.loads(raw), True
            except orjson.JSONDecodeError:
                pass  # NaN, Infinity, a lone surrogate or an error: the standard library decides
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ReportFormatError(source, [f"not UTF-8 text (byte {exc.start}): {exc.reason}"]) from None
    else:
        text = data
    return _parse_text(text, source), False


def _parse_text(text: str, source: str) -> Any:
    """:func:`json.loads` with the messages a person can act on."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        ended_early = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        hint = " (the file looks truncated)" if ended_early else ""
        raise ReportFormatError(
            source, [f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{hint}"]
        ) from None
    except ValueError as exc:
        # Not a JSONDecodeError: an integer longer than sys.get_int_max_str_digits().
        # Find it only now, so that the normal path stays a bare json.loads.
        get_limit = getattr(sys, "get_int_max_str_digits", None)
        limit = int(get_limit()) if get_limit is not None else 0
        if not limit or "integer string conversion" not in str(exc):
            raise ReportFormatError(source, [f"invalid JSON: {exc}"]) from None
        place = ""
        # a string (skipped) or a number whose integer part json converts with int()
        for match in re.finditer(r'"(?:[^"\\]|\\.)*"|-?(\d+)(\.\d+)?([eE][-+]?\d+)?', text):
            digits = match.group(1)
            if digits is not None and match.group(2) is None and match.group(3) is None and len(digits) > limit:
                offset = match.start()
                line, column = text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
                place = f" at line {line}, column {column}"
                break
        raise ReportFormatError(source, [f"invalid JSON{place}: an integer with more than {limit} digits"]) from None
    except RecursionError:
        outside_strings = re.sub(r'"(?:[^"\\]|\\.)*"', "", text)
        depth = deepest = 0
        for char in re.sub(r"[^\[\]{}]+", "", outside_strings):
            depth += 1 if char in "[{" else -1
            deepest = max(deepest, depth)
        limit = sys.getrecursionlimit()
        what = (
            f"nested more than {limit} levels deep ({deepest} levels)"
            if deepest > limit
            else f"nested {deepest} levels deep, too deep for the JSON parser here"
        )
        raise ReportFormatError(source, [f"invalid JSON: {what}"]) from None
