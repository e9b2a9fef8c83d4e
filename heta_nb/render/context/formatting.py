"""Small formatters the render contexts share: latencies, durations, links, element ids,
one-line descriptions of JSON values and metadata entries (all plain text)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from heta_nb._util.text import clip, clip_label, shorten
from heta_nb._util.times import minute_utc
from heta_nb._util.values import EXACT_INT_LIMIT, int_text, is_finite_number
from heta_nb.render.env import format_number
from heta_nb.render.limits import RenderLimits

__all__ = [
    "as_mapping",
    "clean_id_prefix",
    "clip_name",
    "default_id_prefix",
    "describe",
    "format_duration",
    "format_ms",
    "format_time",
    "mapping_entries",
    "percent",
    "safe_url",
]

_BREAKS = re.compile(r"(?<=[_./:])")


def clip_name(value: Any, limit: int) -> dict[str, Any]:
    """Like :func:`~heta_nb._util.text.clip`, plus ``parts``: the text split after ``_ . / :``
    (line-break hints)."""
    clipped: dict[str, Any] = clip(value, limit)
    clipped["parts"] = [part for part in _BREAKS.split(clipped["text"]) if part]
    return clipped


def percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` as ``12.5%`` (``—`` when ``whole`` is 0)."""
    return f"{100.0 * part / whole:.1f}%" if whole else "—"


def format_ms(value: Any) -> str:
    """A latency in milliseconds: ``0.03``, ``4.60``, ``12.3``, ``1,204``; an integer of any
    size exactly, or with an exponent from 10**15 (never through a float: no OverflowError)."""
    if not is_finite_number(value):
        return format_number(value)
    if isinstance(value, int) and not -EXACT_INT_LIMIT < value < EXACT_INT_LIMIT:
        return int_text(value)
    if abs(value) < 10:
        return f"{value:.2f}"
    if abs(value) < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def format_time(value: Any) -> dict[str, str]:
    """An ISO-8601 time as ``{"text": "2026-12-02 15:54 UTC", "iso": <the value>}``: to the
    minute, in UTC when it has an offset (the ISO value for a hover); text that does not
    parse is shown as it is (shortened), an absent time as ``"—"``."""
    if not isinstance(value, str) or not value.strip():
        return {"text": "—", "iso": ""}
    iso = shorten(value, 60)
    return {"text": minute_utc(value) or iso, "iso": iso}


def format_duration(seconds: Any) -> str:
    """``0.53 s``, ``42 s``, ``5 min 03 s``, ``2 h 04 min``; ``—`` when unknown."""
    if not is_finite_number(seconds):
        return "—"
    if isinstance(seconds, int) and not -EXACT_INT_LIMIT < seconds < EXACT_INT_LIMIT:
        return ("−" if seconds < 0 else "") + int_text(abs(seconds)) + " s"
    if seconds < 0:
        return "−" + format_duration(-seconds)
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        minutes, rest = divmod(int(round(seconds)), 60)
        return f"{minutes} min {rest:02d} s"
    hours, rest = divmod(int(round(seconds)) // 60, 60)
    return f"{hours:,} h {rest:02d} min"


def safe_url(value: Any, limit: int = 2000) -> str | None:
    """``value`` if it is a plain ``http(s)://host/...`` URL worth linking, else None."""
    if not isinstance(value, str) or not value or len(value) > limit:
        return None
    if any(ch.isspace() or ord(ch) < 32 or ch in "\"'<>`\\" for ch in value):
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return value


_ID_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def default_id_prefix(report_id: str) -> str:
    """``heta-<10 hex of sha1(report_id)>``: deterministic, valid as an HTML id."""
    return "heta-" + hashlib.sha1(report_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def clean_id_prefix(prefix: str) -> str:
    """A caller's id prefix made valid as an HTML id (``heta-`` added if it does not start with a letter)."""
    cleaned = _ID_SAFE.sub("-", prefix)[:64].strip("-")
    return cleaned if cleaned and cleaned[0].isalpha() else "heta-" + cleaned


def describe(value: Any, budget: int, depth: int = 0) -> str:
    """A compact one-line description of a JSON-ish value, at most about ``budget`` chars.

    Lists and mappings are described without walking more than a few items, so a huge
    or deeply nested metadata value costs nothing.
    """
    kind = type(value)  # (exact types first: an export describes every score's metadata)
    if kind is str:
        return value if len(value) <= budget else shorten(value, budget)
    if value is None:
        return "null"
    if kind is float:
        return format_number(value, 4)
    if kind is bool or isinstance(value, bool):
        return "true" if value else "false"
    if kind is int or isinstance(value, int):  # (exact up to 128-bit ids; beyond, an exponent)
        return f"{value:,}" if -(10**40) < value < 10**40 else int_text(value)
    if isinstance(value, float):
        return format_number(value, 4)
    if isinstance(value, str):
        return shorten(value, budget)
    if depth >= 2:
        return "{…}" if isinstance(value, Mapping) else "[…]"
    if kind is dict or isinstance(value, Mapping):
        labels = [(f"{key}: " if type(key) is str and len(key) <= 40 else f"{shorten(key, 40)}: ", item)
                  for key, item in islice(value.items(), 8)]  # fmt: skip
        return _describe_items(labels, len(value), "{}", budget, depth)
    if kind is list or isinstance(value, (list, tuple)):
        return _describe_items([("", item) for item in islice(value, 10)], len(value), "[]", budget, depth)
    return shorten(type(value).__name__, 40)


def _describe_items(items: Iterable[tuple[str, Any]], total: int, brackets: str, budget: int, depth: int) -> str:
    """``(label, item)`` pairs of a container, described until ``budget`` runs out."""
    parts = []
    used = 2
    for label, item in items:
        part = label + describe(item, max(budget - used, 8), depth + 1)
        parts.append(part)
        used += len(part) + 2
        if used >= budget:
            break
    more = total - len(parts)
    return brackets[0] + ", ".join(parts) + (f", … +{more:,}" if more > 0 else "") + brackets[1]


def mapping_entries(
    mapping: Any, limits: RenderLimits, *, skip: Iterable[str] = (), value_chars: int | None = None
) -> dict[str, Any]:
    """Up to ``max_metadata_items`` entries of a mapping as ``{"entries": [{key, value}], "more": n}``."""
    if not isinstance(mapping, Mapping):
        return {"entries": [], "more": 0}
    skipped = [key for key in skip if key in mapping]
    chars = value_chars or limits.max_value_chars
    entries: list[dict[str, str]] = []
    for key, item in mapping.items():
        if key in skipped:
            continue
        if len(entries) >= limits.max_metadata_items:
            break
        entries.append(
            {
                "key": clip_label(key, limits.max_key_chars),
                "value": clip_label(describe(item, chars), chars),
            }
        )
    return {"entries": entries, "more": max(0, len(mapping) - len(skipped) - len(entries))}


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty dict (for fields a report may leave out)."""
    return value if type(value) is dict or isinstance(value, Mapping) else {}
