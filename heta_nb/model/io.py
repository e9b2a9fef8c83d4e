"""Reading and encoding reports: ``load_report`` accepts whatever a user has at hand.

Heta 0.1.2 has no report loader at all; this is the one both sides can use.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heta_nb.errors import ReportFormatError, ReportNotFoundError
from heta_nb.model.json import dumps_compact, json_type_name, to_json_value, utf8_json
from heta_nb.model.record import Problems, TooManyProblems
from heta_nb.model.report import SUPPORTED_SCHEMA_VERSIONS, EvaluationReport

__all__ = [
    "ReportSource",
    "decode_report",
    "encode_report",
    "load_report",
    "local_path",
    "local_report_file",
    "parse_report",
]

ReportSource = Any
"""A path, ``os.PathLike``, fsspec URL, JSON text or bytes, mapping, or object with ``to_dict()``."""


def load_report(source: ReportSource) -> EvaluationReport:
    """Load an :class:`EvaluationReport` from almost anything.

    Args:
        source: a local path (``str`` or ``os.PathLike``); an fsspec URL such as
            ``memory://r.json`` or ``s3://bucket/key`` (fsspec backends as installed);
            JSON text or bytes; a mapping in the report schema; an ``EvaluationReport``;
            or any object with a ``to_dict()`` returning that schema, such as a
            ``heta_framework`` EvaluationReport (converted without importing heta).

    Returns:
        The validated, immutable report. A report written by Heta round-trips exactly:
        ``report.to_json()`` reproduces the file's bytes.

    Raises:
        ReportFormatError: invalid JSON (with line and column), an unsupported
            ``schema_version``, or fields of the wrong type (with their JSON paths).
        ReportNotFoundError: the path or URL does not exist.
    """
    if isinstance(source, EvaluationReport):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return decode_report(bytes(source), source="<report bytes>")
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        return decode_report(source, source="<report text>")
    if isinstance(source, (str, os.PathLike)):
        return decode_report(_read_location(source), source=os.fspath(source))
    if isinstance(source, Mapping):
        return parse_report(source, source="<report dict>")
    to_dict = getattr(source, "to_dict", None)
    if callable(to_dict):
        label = f"<{type(source).__module__}.{type(source).__name__}>"
        try:
            data = to_dict()
        except Exception as exc:  # a foreign object's to_dict may fail in any way
            raise ReportFormatError(label, [f"to_dict() failed: {type(exc).__name__}: {exc}"]) from exc
        if not isinstance(data, Mapping):
            raise ReportFormatError(label, [f"to_dict() returned {type(data).__name__}, not a mapping"])
        return parse_report(data, source=label)
    raise ReportFormatError(
        f"<{type(source).__name__}>",
        ["cannot load a report from this type; pass a path, URL, JSON text/bytes, a dict or an object with to_dict()"],
    )


def local_path(location: str | os.PathLike[str]) -> Path | None:
    """The local path a report location names (``file://`` stripped); None for another URL."""
    text = os.fspath(location)
    if text.startswith("file://"):
        return Path(text[len("file://") :])
    return None if "://" in text else Path(text)


def local_report_file(source: Any) -> Path | None:
    """The local file :func:`load_report` would read ``source`` from, resolved; else None.

    A folder stands for its ``report.json``; JSON text, URLs, objects and paths that
    are not files give None. For writers that must never replace their input.
    """
    if not isinstance(source, (str, os.PathLike)) or isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        return None
    try:
        path = local_path(source)
        if path is not None and path.is_dir():
            path = path / "report.json"
        return path.resolve() if path is not None and path.is_file() else None
    except (OSError, ValueError):
        return None


def _read_location(location: str | os.PathLike[str]) -> bytes:
    text = os.fspath(location)
    path = local_path(text)
    if path is None:
        from heta_nb._util.fs import read_url

        return read_url(text)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ReportNotFoundError(f"{text}: no such file") from None
    except IsADirectoryError:
        candidate = path / "report.json"
        if candidate.is_file():
            return candidate.read_bytes()
        raise ReportFormatError(text, ["is a directory without a report.json"]) from None
    except OSError as exc:
        raise ReportFormatError(text, [f"cannot read: {exc.strerror or exc}"]) from None


def decode_report(data: bytes | str, *, source: str) -> EvaluationReport:
    """Parse report JSON (Heta's encoding, ``NaN``/``Infinity`` accepted) and validate it.

    Args:
        data: The file's bytes (UTF-8, a BOM allowed) or its text.
        source: Names the report in error messages (a path or ``<report bytes>``).

    Returns:
        The report, wrapping the parsed JSON (``to_json()`` gives Heta's bytes back).

    Raises:
        ReportFormatError: invalid JSON (line and column), an unsupported
            ``schema_version`` or a missing key, or fields of the wrong type (JSON paths).
    """
    if isinstance(data, bytes):
        if not data.strip():
            raise ReportFormatError(source, ["empty file, not a report"])
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ReportFormatError(source, [f"not UTF-8 text (byte {exc.start}): {exc.reason}"]) from None
    else:
        text = data
    try:
        parsed = json.loads(text)
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
    return _validated(parsed, source, every_key=True)


def parse_report(data: Mapping[str, Any], *, source: str = "<report dict>") -> EvaluationReport:
    """Validate a mapping in the report schema (a deep copy is taken, tuples become lists).

    Args:
        data: The report's serialized form, e.g. Heta's ``report.to_dict()``.
        source: Names the report in error messages.

    Returns:
        The report, wrapping the copy.

    Raises:
        ReportFormatError: a value that is not JSON, an unsupported ``schema_version``,
            or fields of the wrong type (with their JSON paths).
    """
    try:
        plain = to_json_value(data, "")
    except TypeError as exc:
        raise ReportFormatError(source, [str(exc).lstrip(": ")]) from None
    except RecursionError:
        raise ReportFormatError(source, ["value nested too deeply"]) from None
    return _validated(plain, source)


_DEFAULTED_KEYS = (
    "schema_version",
    "report_key",
    "knowledge_base_manifest",
    "recipe_manifest",
    "query_modes",
    "case_results",
    "metadata",
)
"""Report keys the model can default when a report is built in Python, but that every
``report.json`` has (Heta writes all 13 keys): a file without one is not a report."""


def _validated(parsed: Any, source: str, *, every_key: bool = False) -> EvaluationReport:
    if not isinstance(parsed, dict):
        raise ReportFormatError(source, [f"expected a JSON object at the top level, got {json_type_name(parsed)}"])
    version = parsed.get("schema_version", "1")
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(repr(v) for v in SUPPORTED_SCHEMA_VERSIONS)
        raise ReportFormatError(
            source,
            [
                f"schema_version: unsupported version {version!r}; "
                f"this heta_nb reads schema_version {supported} (upgrade heta-nb to read newer reports)"
            ],
        )
    problems = Problems()
    if every_key:  # after the version: a newer schema may have other keys
        problems.items.extend(
            f"{key}: missing required field (every report.json has it)" for key in _DEFAULTED_KEYS if key not in parsed
        )
    checked: Any = parsed
    try:
        checked = EvaluationReport.check_json(parsed, "", problems)
    except TooManyProblems:
        pass
    except RecursionError:
        problems.items.append("value nested too deeply")
    if problems:
        raise ReportFormatError(source, problems.items, more=problems.more)
    return EvaluationReport.from_raw(checked)


def encode_report(report: EvaluationReport) -> bytes:
    """The report as Heta writes it: compact UTF-8 JSON, non-ASCII kept.

    A lone surrogate (which UTF-8 cannot encode) is written as its ``\\uXXXX`` escape.
    """
    return utf8_json(dumps_compact(report.raw))
