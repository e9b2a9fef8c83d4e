"""Store keys: Heta's slug, the names heta_nb refuses, and Heta's report-key layout."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from heta_nb.errors import UnsafeNameError

__all__ = [
    "KB_ROOT",
    "KEY_PATTERN",
    "MAX_NAME_BYTES",
    "MAX_NAME_LENGTH",
    "REPORT_FILE",
    "SUMMARY_FILE",
    "heta_slug",
    "report_key",
    "report_prefix",
    "safe_slug",
    "windows_name_problem",
]

REPORT_FILE = "report.json"
SUMMARY_FILE = "heta_nb.summary.json"
KB_ROOT = "_heta/knowledge_bases"
MAX_NAME_LENGTH = 128
"""Longest knowledge-base name or report id accepted (characters; also <= 255 UTF-8 bytes)."""
MAX_NAME_BYTES = 255
"""Longest knowledge-base name or report id accepted, in UTF-8 bytes (a file-name limit)."""
KEY_PATTERN = re.compile(r"^_heta/knowledge_bases/([^/]+)/evaluations/([^/]+)/report\.json$")
"""A report key; its groups are the KB folder and the report folder."""


def heta_slug(value: str) -> str:
    """Heta's ``_slug``: strip, lowercase, join whitespace-separated parts with ``_``.

    Nothing else changes: ``"a/b"`` stays ``"a/b"``. Use :func:`safe_slug` for keys.
    """
    return "_".join(value.strip().lower().split())


def safe_slug(value: Any, what: str = "name") -> str:
    """Heta's slug of ``value``, refusing names that would escape or break the layout.

    Refused (with :class:`UnsafeNameError`): non-strings, empty or blank names, ``.``
    and ``..``, ``/`` or ``\\`` anywhere (absolute paths included), NUL and other
    control characters, names not in Unicode normalization form NFC (``"cafe\\u0301"``
    looks like ``"café"``; macOS would store both in one folder, Linux in two), and
    names over :data:`MAX_NAME_LENGTH` characters or 255 UTF-8 bytes (a file-name
    limit on every common file system).
    """
    if not isinstance(value, str):
        raise UnsafeNameError(f"{what} must be a string, got {type(value).__name__}")
    slug = heta_slug(value)
    if not slug:
        raise UnsafeNameError(f"{what} must not be empty")
    if slug in (".", ".."):
        raise UnsafeNameError(f"{what} {value!r} is not allowed: it would escape or alias its folder")
    for char in ("/", "\\"):
        if char in slug:
            raise UnsafeNameError(f"{what} {value!r} contains {char!r}, which would nest or escape the store layout")
    for char in slug:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs") or char == "\x00":
            raise UnsafeNameError(f"{what} {value!r} contains the control character {char!r}")
    if not unicodedata.is_normalized("NFC", slug):
        # "café" typed as e + combining accent looks like "café" but is another key on
        # Linux, and the same file on macOS: one name, one report, on every system.
        raise UnsafeNameError(
            f"{what} {ascii(value)} is not in Unicode normalization form NFC; "
            f"use {ascii(unicodedata.normalize('NFC', value))}, which looks the same"
        )
    if len(slug) > MAX_NAME_LENGTH:
        raise UnsafeNameError(f"{what} is too long ({len(slug)} characters; at most {MAX_NAME_LENGTH})")
    size = len(slug.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise UnsafeNameError(
            f"{what} is too long ({size} bytes in UTF-8; at most {MAX_NAME_BYTES}, a file-name limit)"
        )
    return slug


def report_prefix(knowledge_base_name: str, report_id: str) -> str:
    """The folder of one report: ``_heta/knowledge_bases/{kb}/evaluations/{id}``."""
    kb = safe_slug(knowledge_base_name, "knowledge_base_name")
    rid = safe_slug(report_id, "report_id")
    return f"{KB_ROOT}/{kb}/evaluations/{rid}"


def report_key(knowledge_base_name: str, report_id: str) -> str:
    """Heta's report key for ordinary names; unsafe names raise :class:`UnsafeNameError`."""
    return f"{report_prefix(knowledge_base_name, report_id)}/{REPORT_FILE}"


_WINDOWS_DEVICES = frozenset(
    [
        "con",
        "prn",
        "aux",
        "nul",
        "conin$",
        "conout$",
        *(f"{port}{digit}" for port in ("com", "lpt") for digit in "123456789\u00b9\u00b2\u00b3"),
    ]
)
_WINDOWS_FORBIDDEN = frozenset('<>:"|?*')


def windows_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a file or folder name on Windows, or None when it can.

    Windows refuses ``<>:"|?*`` (a ``:`` would even address an alternate data
    stream), silently drops a trailing dot or space, and reserves device names such
    as ``con``, ``nul``, ``conin$``, ``com1``-``com9`` and ``com¹``-``com³`` (with
    any extension, and spaces before it; the list of Python 3.13's
    ``ntpath.isreserved``), where a write would vanish.
    """
    forbidden = sorted(set(name) & _WINDOWS_FORBIDDEN)
    if forbidden:
        return f"contains {''.join(forbidden)!r}, which Windows does not allow in file names"
    if name != name.rstrip(". "):
        return "ends with a dot or a space, which Windows drops from file names"
    if name.split(".", 1)[0].rstrip(" ").lower() in _WINDOWS_DEVICES:
        return "is a device name on Windows"
    return None
