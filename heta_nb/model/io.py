"""Reading and encoding reports: ``load_report`` accepts whatever a user has at hand.

Heta 0.1.2 has no report loader at all; this is the one both sides can use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heta_nb._util.fs import read_regular_file
from heta_nb.errors import ReportFormatError, ReportNotFoundError
from heta_nb.model.json import json_type_name, to_json_value, utf8_json
from heta_nb.model.lazy import encode_report_utf8, lazify
from heta_nb.model.parse import parse_json, paused_gc
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


def load_report(source: ReportSource, *, max_bytes: int | None = None) -> EvaluationReport:
    """Load an :class:`EvaluationReport` from almost anything.

    Args:
        source: a local path (``str`` or ``os.PathLike``); an fsspec URL such as
            ``memory://r.json`` or ``s3://bucket/key`` (fsspec backends as installed);
            JSON text or bytes; a mapping in the report schema; an ``EvaluationReport``;
            or any object with a ``to_dict()`` returning that schema, such as a
            ``heta_framework`` EvaluationReport (converted without importing heta).
        max_bytes: the largest file (or URL object) read; default 4 GiB, or the
            ``HETA_NB_MAX_BYTES`` environment variable. A larger one is refused before
            it is read. Only regular files are read: a FIFO or a device (``/dev/zero``)
            is refused, saying what it is.

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
        return decode_report(_read_location(source, max_bytes), source=os.fspath(source))
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


_RAISE_LIMIT = "load_report(..., max_bytes={size})"


def _read_location(location: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    text = os.fspath(location)
    path = local_path(text)
    if path is None:
        from heta_nb._util.fs import read_url

        return read_url(text, max_bytes=max_bytes, hint=_RAISE_LIMIT)
    try:
        return read_regular_file(path, max_bytes=max_bytes, hint=_RAISE_LIMIT)
    except FileNotFoundError:
        raise ReportNotFoundError(f"{text}: no such file") from None
    except IsADirectoryError:
        candidate = path / "report.json"
        if candidate.is_file():
            return read_regular_file(candidate, max_bytes=max_bytes, hint=_RAISE_LIMIT)
        raise ReportFormatError(text, ["is a directory without a report.json"]) from None
    except OSError as exc:
        raise ReportFormatError(text, [f"cannot read: {exc.strerror or exc}"]) from None


def decode_report(data: bytes | str, *, source: str) -> EvaluationReport:
    """Parse report JSON (Heta's encoding, ``NaN``/``Infinity`` accepted) and validate it.

    The JSON is read with orjson (the standard library where orjson would read it
    differently: ``NaN``, lone surrogates, integers beyond 64 bits), the garbage
    collector paused. Every field is validated now; then each case result is kept as
    its compact JSON until it is opened (:mod:`heta_nb.model.lazy`), beside the columns
    the views read, so the report takes about the memory of its file.

    Args:
        data: The file's bytes (UTF-8, a BOM allowed) or its text.
        source: Names the report in error messages (a path or ``<report bytes>``).

    Returns:
        The report (``to_json()`` gives Heta's bytes back).

    Raises:
        ReportFormatError: invalid JSON (line and column), an unsupported
            ``schema_version`` or a missing key, or fields of the wrong type (JSON paths).
    """
    with paused_gc():
        parsed, exact = parse_json(data, source=source)
        checked = _checked(parsed, source, every_key=True)
        if exact and type(checked.get("case_results")) is list:
            checked["case_results"] = lazify(checked)
            return EvaluationReport._lazily(checked)
        return EvaluationReport.from_raw(checked)


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


def _validated(parsed: Any, source: str) -> EvaluationReport:
    return EvaluationReport.from_raw(_checked(parsed, source))


def _checked(parsed: Any, source: str, *, every_key: bool = False) -> dict[str, Any]:
    """``parsed`` validated as a report's JSON object (completed with defaults where absent)."""
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
    return checked  # type: ignore[no-any-return]


def encode_report(report: EvaluationReport) -> bytes:
    """The report as Heta writes it: compact UTF-8 JSON, non-ASCII kept.

    A lone surrogate (which UTF-8 cannot encode) is written as its ``\\uXXXX`` escape.
    A report read from a file is encoded case result by case result, never as one text.
    """
    top = report._lazy_top()
    if top is None:
        return utf8_json(report.to_json())
    return encode_report_utf8(top, report.case_count, report.case_result_json)
