"""What every benchmark format shares: reading JSON and JSONL files, parsing row fields
(text, answers, evidence, manifest) with errors that name file, line and field, and the
:class:`BenchmarkDataWarning` for files that load but disagree with each other."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from heta_nb._util.fs import (
    FileTooLargeError,
    NotARegularFileError,
    default_max_bytes,
    open_regular_file,
    read_regular_file,
)
from heta_nb._util.text import listing
from heta_nb.benchmark.records import BenchmarkEvidence
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.json import json_type_name
from heta_nb.model.report import BenchmarkManifest

__all__ = [
    "MAX_LINE_BYTES",
    "BenchmarkDataWarning",
    "StrPath",
    "chosen_evaluators",
    "dangling",
    "fail",
    "file_label",
    "jsonl_rows",
    "key_segment",
    "object_field",
    "open_benchmark_file",
    "parse_answers",
    "parse_evidence",
    "parse_evidence_list",
    "parse_manifest",
    "read_benchmark_file",
    "read_json",
    "read_json_array",
    "read_lines",
    "require_rows",
    "required_text",
    "row_text",
    "text_field",
    "warn_data",
]

#: A file path as the loaders take it.
StrPath = str | os.PathLike[str]


# --------------------------------------------------------------------------------------
# row fields; every error reads ``place: field: message`` (``file:line`` for JSONL and TSV
# rows, ``file[index]`` for JSON arrays, ``row <index>, column <name>`` for DataFrames)
# --------------------------------------------------------------------------------------
def fail(where: str, field: str | None, message: str) -> BenchmarkFormatError:
    """An error whose message reads ``where: field: message``."""
    return BenchmarkFormatError(f"{where}: {field}: {message}" if field else f"{where}: {message}")


def file_label(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` when inside it (short messages), else as given."""
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def chosen_evaluators(value: Sequence[Any] | str | None, default: tuple[str, ...]) -> tuple[Any, ...]:
    """The evaluators a caller passed (one name is a tuple of one), else the format's ``default``."""
    if value is None:
        return default
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def text_field(
    value: Any,
    where: str,
    field: str,
    *,
    required: bool = True,
    ints: bool = False,
    numbers: bool = False,
) -> str | None:
    """A stripped non-empty string; ``ints``/``numbers`` also accept JSON numbers (``str()``-ed).

    ``None`` is an error when ``required``, else it gives None.
    """
    if value is None:
        if required:
            raise fail(where, field, "is required")
        return None
    if isinstance(value, bool):
        raise fail(where, field, "must be a string, got boolean")
    if isinstance(value, int) and (ints or numbers):
        value = str(value)
    elif isinstance(value, float) and numbers:
        if not math.isfinite(value):
            raise fail(where, field, f"must be a string, got {value!r}")
        value = str(value)
    if not isinstance(value, str):
        kind = "a string or integer" if ints else "a string"
        raise fail(where, field, f"must be {kind}, got {json_type_name(value)}")
    stripped = value.strip()
    if not stripped:
        raise fail(where, field, "must not be empty")
    return stripped


def required_text(value: Any, where: str, field: str, **kwargs: bool) -> str:
    """:func:`text_field` of a required value (never None)."""
    result = text_field(value, where, field, **kwargs)
    assert result is not None
    return result


def row_text(row: Mapping[str, Any], key: str, where: str, **kwargs: bool) -> str:
    """A required text field of a row; a missing key says "is required"."""
    if key not in row:
        raise fail(where, key, "is required")
    value = row[key]
    if value is None:
        raise fail(where, key, "must be a string, got null")
    return required_text(value, where, key, **kwargs)


def object_field(value: Any, where: str, field: str) -> dict[str, Any]:
    """A JSON object field; null means ``{}``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail(where, field, f"must be an object, got {json_type_name(value)}")
    return dict(value)


def key_segment(value: str, where: str, field: str) -> str:
    """Refuse values that would nest or escape a raw object key."""
    if "/" in value or "\\" in value or value in (".", "..") or "\x00" in value:
        raise fail(where, field, f"{value!r} cannot be used in an object key (no '/', '\\', '.', '..' or NUL)")
    return value


def parse_answers(value: Any, where: str, field: str) -> tuple[str, ...]:
    """Expected answers: null → none, one string (or number) → one answer, or a list."""
    if value is None:
        return ()
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (required_text(value, where, field, numbers=True),)
    if not isinstance(value, (list, tuple)):
        raise fail(where, field, f"must be a list of strings or one string, got {json_type_name(value)}")
    return tuple(required_text(item, where, f"{field}[{i}]", numbers=True) for i, item in enumerate(value))


def parse_evidence(value: Any, where: str, field: str) -> BenchmarkEvidence:
    """One evidence object ``{reference_id?, locator?, text?, metadata?}``."""
    if not isinstance(value, Mapping):
        raise fail(where, field, f"must be an object, got {json_type_name(value)}")
    reference_id = text_field(value.get("reference_id"), where, f"{field}.reference_id", required=False, ints=True)
    locator = object_field(value.get("locator"), where, f"{field}.locator")
    text = text_field(value.get("text"), where, f"{field}.text", required=False, numbers=True)
    metadata = object_field(value.get("metadata"), where, f"{field}.metadata")
    if reference_id is None and not locator and text is None:
        raise fail(where, field, "evidence must set at least one of reference_id, locator, or text")
    return BenchmarkEvidence(reference_id=reference_id, locator=locator, text=text, metadata=metadata)


def parse_evidence_list(value: Any, where: str, field: str) -> tuple[BenchmarkEvidence, ...]:
    """A list of evidence objects; null means none."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise fail(where, field, f"must be a list of evidence objects, got {json_type_name(value)}")
    return tuple(parse_evidence(item, where, f"{field}[{i}]") for i, item in enumerate(value))


def parse_manifest(value: Any, where: str) -> BenchmarkManifest:
    """A BenchmarkManifest whose ``name`` and ``split`` are usable as raw-key segments."""
    try:
        manifest = BenchmarkManifest.coerce(value, label="manifest")
    except (TypeError, ValueError) as exc:
        raise BenchmarkFormatError(f"{where}: {exc}") from None
    # raw/benchmarks/{name}/{split}/...: the same rule as document ids
    key_segment(manifest.name, where, "name")
    key_segment(manifest.split, where, "split")
    return manifest


def require_rows(items: Sequence[Any], label: str, what: str) -> None:
    """Heta's runner refuses a benchmark without documents or cases; say so when loading."""
    if not items:
        raise BenchmarkFormatError(f"{label}: no {what} (Heta's runner needs at least one)")


# --------------------------------------------------------------------------------------
# reading files
# --------------------------------------------------------------------------------------
#: The longest line a JSONL or TSV benchmark file may hold (a document's text or base64 data
#: included); a longer one is refused after reading this much of it, never as a whole.
MAX_LINE_BYTES = 256 * 1024**2


def _check_file(path: Path, label: str) -> None:
    if not path.exists():
        raise FileNotFoundError(f"{label}: no such file ({path})")
    if path.is_dir():  # a FIFO, a device...: open_regular_file says what it is
        raise BenchmarkFormatError(f"{label}: is not a file ({path})")


@contextlib.contextmanager
def _refused_as_format_error(label: str) -> Iterator[None]:
    """A file that is not regular or too large, as a :class:`BenchmarkFormatError` naming ``label``."""
    try:
        yield
    except (NotARegularFileError, FileTooLargeError) as exc:
        raise BenchmarkFormatError(f"{label}: {exc.strerror}") from None


def open_benchmark_file(path: Path, label: str) -> BinaryIO:
    """The benchmark file at ``path`` opened for reading: a regular file within :func:`default_max_bytes`.

    (The same limit as ``load_report``'s ``max_bytes``; a FIFO, a device or a larger
    file is refused before a byte is read.)
    """
    _check_file(path, label)
    with _refused_as_format_error(label):
        return open_regular_file(path, max_bytes=default_max_bytes())


def read_benchmark_file(path: Path, label: str) -> bytes:
    """The bytes of a benchmark file (see :func:`open_benchmark_file`)."""
    _check_file(path, label)
    with _refused_as_format_error(label):
        return read_regular_file(path, max_bytes=default_max_bytes())


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _encoding_hint(head: bytes) -> str:
    """A hint for a file that is not UTF-8 because it is UTF-16 (PowerShell's ``>`` writes it)."""
    if head.startswith(_UTF16_BOMS):
        return "; the file starts with a UTF-16 byte-order mark: save it as UTF-8"
    return ""


def read_lines(path: Path, label: str) -> Iterator[tuple[int, str]]:
    """``(1-based line number, line)``, split on ``\\n`` only, decoded as strict UTF-8.

    Unlike ``str.splitlines`` this keeps U+2028 and other "line separators" that are
    legal inside JSON strings.
    """
    limit = default_max_bytes()
    total = 0
    with open_benchmark_file(path, label) as handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) - raw.endswith(b"\n") > MAX_LINE_BYTES:
                raise BenchmarkFormatError(
                    f"{label}:{number}: the line is longer than {MAX_LINE_BYTES:,} bytes (the longest a line may be)"
                )
            total += len(raw)
            if total > limit:  # it grew while read
                raise BenchmarkFormatError(f"{label}: the file grew past the limit of {limit:,} bytes while read")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                hint = _encoding_hint(raw) if number == 1 else ""
                raise BenchmarkFormatError(
                    f"{label}:{number}: not valid UTF-8 ({exc.reason} at byte {exc.start} of the line){hint}"
                ) from None
            if number == 1 and line.startswith("\ufeff"):
                line = line[1:]
            yield number, line.rstrip("\r\n")


# A JSON string (skipped) or a number; group 1 is the integer part when there is no
# fraction or exponent, i.e. a number ``json`` converts with ``int()``.
_JSON_STRING_OR_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|-?(\d+)(\.\d+)?([eE][-+]?\d+)?')


def _int_digit_limit() -> int:
    """Python's int-string conversion limit (0: none; Python < 3.10.7 has none)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    return int(get()) if get is not None else 0


def _long_integer(text: str, exc: ValueError) -> tuple[int | None, str]:
    """Where and what the ``ValueError`` of ``json.loads(text)`` is (error path only).

    ``json`` only raises a plain ValueError (not JSONDecodeError) for an integer longer
    than :func:`sys.get_int_max_str_digits`; returns ``(offset or None, description)``.
    """
    limit = _int_digit_limit()
    if not limit or "integer string conversion" not in str(exc):
        return None, str(exc)
    for match in _JSON_STRING_OR_NUMBER.finditer(text):
        digits = match.group(1)
        if digits is not None and match.group(2) is None and match.group(3) is None and len(digits) > limit:
            return match.start(), f"an integer with more than {limit} digits"
    return None, f"an integer with more than {limit} digits"


def _nesting(text: str) -> str:
    """Describe JSON too deeply nested for the parser (error path only)."""
    brackets = re.sub(r"[^\[\]{}]+", "", _JSON_STRING_OR_NUMBER.sub("", text))
    depth = deepest = 0
    for char in brackets:
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    limit = sys.getrecursionlimit()
    if deepest > limit:
        return f"nested more than {limit} levels deep ({deepest} levels)"
    return f"nested {deepest} levels deep, too deep for the JSON parser here"


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def jsonl_rows(path: Path, label: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Non-blank rows of a JSONL file, each a JSON object."""
    for number, line in read_lines(path, label):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchmarkFormatError(f"{label}:{number}:{exc.colno}: invalid JSON: {exc.msg}") from None
        except ValueError as exc:  # an integer over Python's digit limit
            offset, what = _long_integer(line, exc)
            column = "" if offset is None else f":{offset + 1}"
            raise BenchmarkFormatError(f"{label}:{number}{column}: invalid JSON: {what}") from None
        except RecursionError:
            raise BenchmarkFormatError(f"{label}:{number}: invalid JSON: {_nesting(line)}") from None
        if not isinstance(value, dict):
            raise BenchmarkFormatError(
                f"{label}:{number}: a JSONL row must be a JSON object, got {json_type_name(value)}"
            )
        yield number, value


def read_json(path: Path, label: str) -> Any:
    """A whole JSON file (strict UTF-8, BOM allowed); errors give line and column."""
    raw = read_benchmark_file(path, label)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise BenchmarkFormatError(f"{label}:{line}: not valid UTF-8 ({exc.reason}){_encoding_hint(raw)}") from None
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(f"{label}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # an integer over Python's digit limit
        offset, what = _long_integer(text, exc)
        place = "" if offset is None else ":{}:{}".format(*_line_column(text, offset))
        raise BenchmarkFormatError(f"{label}{place}: invalid JSON: {what}") from None
    except RecursionError:
        raise BenchmarkFormatError(f"{label}: invalid JSON: {_nesting(text)}") from None


def read_json_array(path: Path, label: str) -> list[Any]:
    """A JSON file that must hold an array."""
    value = read_json(path, label)
    if not isinstance(value, list):
        raise BenchmarkFormatError(f"{label}: must contain a JSON array, got {json_type_name(value)}")
    return value


# --------------------------------------------------------------------------------------
# warnings: files that load but disagree with each other
# --------------------------------------------------------------------------------------
#: How many dangling ids a warning quotes.
_WARN_EXAMPLES = 5
#: Modules whose frames a warning skips, so it points at the code that asked for the benchmark.
_LOADER_MODULES = "heta_nb.benchmark."


class BenchmarkDataWarning(UserWarning):
    """A benchmark loaded, but its files are inconsistent (e.g. qrels naming unknown ids)."""


def warn_data(message: str) -> None:
    """A :class:`BenchmarkDataWarning` attributed to the first caller outside ``heta_nb.benchmark``."""
    level, frame = 1, sys._getframe(0)
    while frame.f_back is not None and str(frame.f_globals.get("__name__", "")).startswith(_LOADER_MODULES):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, BenchmarkDataWarning, stacklevel=level)


def dangling(count: int, examples: Iterable[str]) -> str:
    """``3 ('a' on line 2, 'b' on line 5, ...)``: how many (``examples`` yields them all) and the first few."""
    return f"{count} ({listing(examples, _WARN_EXAMPLES, counted=False)})"
