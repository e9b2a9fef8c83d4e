"""Loaders for Heta JSONL, BEIR and MultiHop-RAG benchmarks, and for DataFrames.

Each loader reads a benchmark into a :class:`~heta_nb.benchmark.types.Benchmark`
whose documents, cases, evidence and raw keys are the ones heta-framework 0.1.2's
own adapters produce (``docs/heta-compat.md`` §2.1-2.3), so reports scored either
way line up. The loaders differ from Heta on purpose where Heta's behaviour is a
trap: a string ``answers`` is one answer, ``null`` means "none" for optional
objects and lists, ``"text": null`` is an error, ``path`` rows may not leave the
benchmark folder, base64 is decoded strictly, duplicate ids are reported when
loading instead of failing later in the runner, and a manifest ``name`` or ``split``
that would nest or escape a raw object key (``/``, ``\\``, ``.``, ``..``, NUL) is refused.

Dangling references are kept but reported: BEIR qrels naming a corpus id that is not
in ``corpus.jsonl`` (real datasets such as ArguAna have them) stay in the evidence, as
in Heta and in BEIR's own scoring, and give one :class:`BenchmarkDataWarning` per
qrels file; qrels of a query id missing from ``queries.jsonl`` (NFCorpus has them) are
dropped, as in Heta, with one warning; MultiHop-RAG evidence naming an article that is
not in ``corpus.json`` is kept with one warning per queries file. BEIR qrels rows that
Heta reads without complaint but not as the file meant also warn, once per kind: more
than three columns (a TREC qrels file is misread), a repeated query/corpus pair with
another score (the last wins), and scores that are not integers (truncated).

Every error is a :class:`~heta_nb.errors.BenchmarkFormatError` whose message
starts with the place: ``file:line`` for JSONL and TSV rows, ``file[index]`` for
JSON arrays, ``row <index>, column <name>`` for DataFrames, followed by the field.
"""

from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import itertools
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING, Any

from heta_nb.benchmark.types import (
    Benchmark,
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkRunUnit,
)
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.json import json_type_name
from heta_nb.model.report import BenchmarkManifest

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "BEIR_DEFAULT_EVALUATORS",
    "BENCHMARK_FORMATS",
    "BenchmarkDataWarning",
    "JSONL_DEFAULT_EVALUATORS",
    "MULTIHOP_RAG_DEFAULT_EVALUATORS",
    "benchmark_from_frame",
    "beir_document_id",
    "load_beir",
    "load_benchmark",
    "load_jsonl_benchmark",
    "load_multihop_rag",
    "multihop_rag_article_id",
]

StrPath = str | os.PathLike[str]

#: Default evaluators of a Heta JSONL benchmark (Heta's ``JsonlBenchmark`` default).
JSONL_DEFAULT_EVALUATORS: tuple[str, ...] = ("evidence_recall@5", "answer_contains")
#: Default evaluators of a BEIR benchmark (heta_nb's ranking-metric names).
BEIR_DEFAULT_EVALUATORS: tuple[str, ...] = ("ndcg@10", "recall@10", "map@10", "mrr@10", "precision@10")
#: Default evaluators of MultiHop-RAG (Heta's ``MultiHopRagBenchmark`` default).
MULTIHOP_RAG_DEFAULT_EVALUATORS: tuple[str, ...] = ("evidence_recall@5", "answer_contains")
#: Formats :func:`load_benchmark` understands.
BENCHMARK_FORMATS: tuple[str, ...] = ("jsonl", "beir", "multihop_rag")

_SOURCE_KEYS = ("text", "data_base64", "path", "source_uri")
_MANIFEST_KEYS = frozenset(
    ("name", "version", "split", "task_type", "build_scope", "homepage", "license", "citation", "metadata")
)

_BEIR_HOMEPAGE = "https://github.com/beir-cellar/beir"
_BEIR_DATA_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"
_BEIR_CITATION = "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of Information Retrieval Models"
_BEIR_TASK_TYPES: Mapping[str, str] = {
    "scifact": "scientific_fact_retrieval",
    "nfcorpus": "biomedical_information_retrieval",
    "fiqa": "financial_question_answering_retrieval",
    "hotpotqa": "multi_hop_question_answering_retrieval",
}
_BEIR_HEADERS = (("query-id", "corpus-id", "score"), ("query_id", "corpus_id", "score"))

_MHR_HOMEPAGE = "https://github.com/yixuantt/MultiHop-RAG"
_MHR_CITATION = "MultiHop-RAG: Benchmarking Retrieval-Augmented Generation for Multi-Hop Queries"
_MHR_DATA_URL = "https://huggingface.co/datasets/yixuantt/MultiHopRAG/resolve/main"

#: How many dangling ids a warning quotes.
_WARN_EXAMPLES = 5


class BenchmarkDataWarning(UserWarning):
    """A benchmark loaded, but its files are inconsistent (e.g. qrels naming unknown ids)."""


# --------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------
def _fail(where: str, field: str | None, message: str) -> BenchmarkFormatError:
    """An error whose message reads ``where: field: message``."""
    return BenchmarkFormatError(f"{where}: {field}: {message}" if field else f"{where}: {message}")


def _label(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` when inside it (short messages), else as given."""
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def _evaluators(value: Sequence[Any] | str | None, default: tuple[str, ...]) -> tuple[Any, ...]:
    if value is None:
        return default
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _text(
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
            raise _fail(where, field, "is required")
        return None
    if isinstance(value, bool):
        raise _fail(where, field, "must be a string, got boolean")
    if isinstance(value, int) and (ints or numbers):
        value = str(value)
    elif isinstance(value, float) and numbers:
        if not math.isfinite(value):
            raise _fail(where, field, f"must be a string, got {value!r}")
        value = str(value)
    if not isinstance(value, str):
        kind = "a string or integer" if ints else "a string"
        raise _fail(where, field, f"must be {kind}, got {json_type_name(value)}")
    stripped = value.strip()
    if not stripped:
        raise _fail(where, field, "must not be empty")
    return stripped


def _required_text(value: Any, where: str, field: str, **kwargs: bool) -> str:
    result = _text(value, where, field, **kwargs)
    assert result is not None
    return result


def _row_text(row: Mapping[str, Any], key: str, where: str, **kwargs: bool) -> str:
    """A required text field of a row; a missing key says "is required"."""
    if key not in row:
        raise _fail(where, key, "is required")
    value = row[key]
    if value is None:
        raise _fail(where, key, "must be a string, got null")
    return _required_text(value, where, key, **kwargs)


def _object(value: Any, where: str, field: str) -> dict[str, Any]:
    """A JSON object field; null means ``{}``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(where, field, f"must be an object, got {json_type_name(value)}")
    return dict(value)


def _segment_check(value: str, where: str, field: str) -> str:
    """Refuse values that would nest or escape a raw object key."""
    if "/" in value or "\\" in value or value in (".", "..") or "\x00" in value:
        raise _fail(where, field, f"{value!r} cannot be used in an object key (no '/', '\\', '.', '..' or NUL)")
    return value


def _answers(value: Any, where: str, field: str) -> tuple[str, ...]:
    """Expected answers: null → none, one string (or number) → one answer, or a list."""
    if value is None:
        return ()
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (_required_text(value, where, field, numbers=True),)
    if not isinstance(value, (list, tuple)):
        raise _fail(where, field, f"must be a list of strings or one string, got {json_type_name(value)}")
    return tuple(_required_text(item, where, f"{field}[{i}]", numbers=True) for i, item in enumerate(value))


def _evidence_item(value: Any, where: str, field: str) -> BenchmarkEvidence:
    """One evidence object ``{reference_id?, locator?, text?, metadata?}``."""
    if not isinstance(value, Mapping):
        raise _fail(where, field, f"must be an object, got {json_type_name(value)}")
    reference_id = _text(value.get("reference_id"), where, f"{field}.reference_id", required=False, ints=True)
    locator = _object(value.get("locator"), where, f"{field}.locator")
    text = _text(value.get("text"), where, f"{field}.text", required=False, numbers=True)
    metadata = _object(value.get("metadata"), where, f"{field}.metadata")
    if reference_id is None and not locator and text is None:
        raise _fail(where, field, "evidence must set at least one of reference_id, locator, or text")
    return BenchmarkEvidence(reference_id=reference_id, locator=locator, text=text, metadata=metadata)


def _evidence_list(value: Any, where: str, field: str) -> tuple[BenchmarkEvidence, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise _fail(where, field, f"must be a list of evidence objects, got {json_type_name(value)}")
    return tuple(_evidence_item(item, where, f"{field}[{i}]") for i, item in enumerate(value))


def _manifest(value: Any, where: str) -> BenchmarkManifest:
    """A BenchmarkManifest whose ``name`` and ``split`` are usable as raw-key segments."""
    try:
        manifest = BenchmarkManifest.coerce(value, label="manifest")
    except (TypeError, ValueError) as exc:
        raise BenchmarkFormatError(f"{where}: {exc}") from None
    # raw/benchmarks/{name}/{split}/...: the same rule as document ids
    _segment_check(manifest.name, where, "name")
    _segment_check(manifest.split, where, "split")
    return manifest


def _benchmark(
    manifest: BenchmarkManifest,
    documents: list[BenchmarkDocument],
    cases: list[BenchmarkCase],
    *,
    evaluators: tuple[Any, ...],
    source: str,
    units: Iterable[BenchmarkRunUnit] | None = None,
) -> Benchmark:
    try:
        return Benchmark(manifest, documents, cases, units=units, evaluators=evaluators, source=source)
    except (TypeError, ValueError) as exc:
        raise BenchmarkFormatError(str(exc)) from None


def _require_rows(items: Sequence[Any], label: str, what: str) -> None:
    """Heta's runner refuses a benchmark without documents or cases; say so when loading."""
    if not items:
        raise BenchmarkFormatError(f"{label}: no {what} (Heta's runner needs at least one)")


# --------------------------------------------------------------------------------------
# reading files
# --------------------------------------------------------------------------------------
def _check_file(path: Path, label: str) -> None:
    if not path.exists():
        raise FileNotFoundError(f"{label}: no such file ({path})")
    if not path.is_file():
        raise BenchmarkFormatError(f"{label}: is not a file ({path})")


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _encoding_hint(head: bytes) -> str:
    """A hint for a file that is not UTF-8 because it is UTF-16 (PowerShell's ``>`` writes it)."""
    if head.startswith(_UTF16_BOMS):
        return "; the file starts with a UTF-16 byte-order mark: save it as UTF-8"
    return ""


def _lines(path: Path, label: str) -> Iterator[tuple[int, str]]:
    """``(1-based line number, line)``, split on ``\\n`` only, decoded as strict UTF-8.

    Unlike ``str.splitlines`` this keeps U+2028 and other "line separators" that are
    legal inside JSON strings.
    """
    _check_file(path, label)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
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


def _jsonl_rows(path: Path, label: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Non-blank rows of a JSONL file, each a JSON object."""
    for number, line in _lines(path, label):
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


def _read_json(path: Path, label: str) -> Any:
    """A whole JSON file (strict UTF-8, BOM allowed); errors give line and column."""
    _check_file(path, label)
    raw = path.read_bytes()
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


def _read_json_array(path: Path, label: str) -> list[Any]:
    value = _read_json(path, label)
    if not isinstance(value, list):
        raise BenchmarkFormatError(f"{label}: must contain a JSON array, got {json_type_name(value)}")
    return value


# --------------------------------------------------------------------------------------
# Heta JSONL
# --------------------------------------------------------------------------------------
def _resolve_document_path(value: str, root: Path, where: str, allow_outside: bool) -> Path:
    """Resolve a ``path`` row against ``root`` (symlinks included) and keep it inside."""
    if "\x00" in value:
        raise _fail(where, "path", f"{value!r} contains a NUL character")
    is_absolute = Path(value).is_absolute() or value.startswith(("/", "\\")) or bool(PureWindowsPath(value).drive)
    if is_absolute and not allow_outside:
        raise _fail(
            where,
            "path",
            f"{value!r} is an absolute path; paths must be relative to the benchmark folder "
            "(pass allow_outside_paths=True to allow it)",
        )
    candidate = Path(value) if is_absolute else root / value
    try:
        resolved = candidate.resolve()
        root_resolved = root.resolve()
    except (OSError, RuntimeError) as exc:  # e.g. a symlink loop
        raise _fail(where, "path", f"{value!r} cannot be resolved ({exc})") from None
    if not allow_outside and not resolved.is_relative_to(root_resolved):
        raise _fail(
            where,
            "path",
            f"{value!r} is outside the benchmark folder (pass allow_outside_paths=True to allow it)",
        )
    if not resolved.exists():
        raise _fail(where, "path", f"{value!r} does not exist (resolved to {resolved})")
    if not resolved.is_file():
        raise _fail(where, "path", f"{value!r} is not a file (resolved to {resolved})")
    return resolved


def _decode_base64(value: str, where: str) -> bytes:
    """Standard base64, strictly: only the alphabet, correct padding, canonical form.

    Whitespace (line wrapping) is allowed. Heta's lenient decoder silently drops other
    characters, which turns typos and URL-safe base64 into wrong bytes.
    """
    compact = "".join(value.split())
    try:
        data = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _fail(where, "data_base64", f"is not valid base64 ({exc})") from None
    if base64.b64encode(data).decode("ascii") != compact:
        raise _fail(where, "data_base64", "is not valid base64 (bad padding or trailing bits)")
    return data


def _document_from_row(row: Mapping[str, Any], where: str, root: Path, allow_outside: bool) -> BenchmarkDocument:
    document_id = _segment_check(_row_text(row, "document_id", where, ints=True), where, "document_id")
    name = _segment_check(_row_text(row, "name", where), where, "name")
    media_type = _row_text(row, "media_type", where)
    # source_uri: null means "not set", as in Heta; the other source keys count when present.
    sources = [key for key in _SOURCE_KEYS if key in row and not (key == "source_uri" and row[key] is None)]
    if not sources:
        raise _fail(where, "text", "a document needs exactly one of text, data_base64, path or source_uri")
    if len(sources) > 1:
        raise _fail(where, ", ".join(sources), "a document must set only one of text, data_base64, path or source_uri")
    key = sources[0]
    value = row[key]
    data: bytes | None = None
    path: Path | None = None
    source_uri: str | None = None
    if key == "text":
        if not isinstance(value, str):
            raise _fail(where, "text", f"must be a string, got {json_type_name(value)}")
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            raise _fail(where, "text", "contains an unpaired surrogate and cannot be encoded as UTF-8") from None
    elif key == "data_base64":
        data = _decode_base64(_required_text(value, where, "data_base64"), where)
    elif key == "path":
        path = _resolve_document_path(_required_text(value, where, "path"), root, where, allow_outside)
    else:
        source_uri = _required_text(value, where, "source_uri")
    metadata = _object(row.get("metadata"), where, "metadata")
    try:
        return BenchmarkDocument(
            document_id=document_id,
            name=name,
            media_type=media_type,
            data=data,
            path=path,
            source_uri=source_uri,
            metadata=metadata,
        )
    except (TypeError, ValueError) as exc:
        raise BenchmarkFormatError(f"{where}: {exc}") from None


def _case_from_row(row: Mapping[str, Any], where: str) -> BenchmarkCase:
    case_id = _row_text(row, "case_id", where, ints=True)
    query = _row_text(row, "query", where)
    expected = row.get("expected")
    if expected is None:
        expected = {}
    elif not isinstance(expected, Mapping):
        raise _fail(where, "expected", f"must be an object, got {json_type_name(expected)}")
    try:
        return BenchmarkCase(
            case_id=case_id,
            query=query,
            expected=BenchmarkExpected(
                answers=_answers(expected.get("answers"), where, "expected.answers"),
                evidence=_evidence_list(expected.get("evidence"), where, "expected.evidence"),
                value=expected.get("value"),
                metadata=_object(expected.get("metadata"), where, "expected.metadata"),
            ),
            labels=_object(row.get("labels"), where, "labels"),
            metadata=_object(row.get("metadata"), where, "metadata"),
        )
    except (TypeError, ValueError) as exc:
        if isinstance(exc, BenchmarkFormatError):
            raise
        raise BenchmarkFormatError(f"{where}: {exc}") from None


def _read_unique(
    rows: Iterable[tuple[int, dict[str, Any]]],
    label: str,
    id_field: str,
    make: Callable[[dict[str, Any], str], Any],
) -> list[Any]:
    """Build items from rows, refusing duplicate ids (naming both lines)."""
    items: list[Any] = []
    first_line: dict[str, int] = {}
    for number, row in rows:
        where = f"{label}:{number}"
        item = make(row, where)
        item_id = getattr(item, id_field)
        if item_id in first_line:
            raise _fail(where, id_field, f"duplicate {id_field} {item_id!r} (first on line {first_line[item_id]})")
        first_line[item_id] = number
        items.append(item)
    return items


def load_jsonl_benchmark(
    documents_jsonl: StrPath,
    cases_jsonl: StrPath,
    *,
    manifest: BenchmarkManifest | Mapping[str, Any] | Any,
    root_dir: StrPath | None = None,
    evaluators: Sequence[Any] | None = None,
    allow_outside_paths: bool = False,
) -> Benchmark:
    """Load a benchmark in Heta's JSONL format (``documents.jsonl`` + ``cases.jsonl``).

    The row formats are Heta 0.1.2's (``docs/heta-compat.md`` §2.1), minus its traps:
    a string ``answers`` is one answer; ``null`` answers, evidence, expected, metadata
    or labels mean none; ``"text": null`` is an error; ``path`` rows are resolved
    against ``root_dir`` (symlinks included) and must stay inside it; ``data_base64``
    is decoded strictly; duplicate ids are errors. Unknown keys are ignored.

    Args:
        documents_jsonl: one document per line.
        cases_jsonl: one case per line.
        manifest: a BenchmarkManifest (or mapping / Heta manifest object).
        root_dir: folder ``path`` rows are relative to (default: the documents file's folder).
        evaluators: default evaluators (default ``("evidence_recall@5", "answer_contains")``).
        allow_outside_paths: allow absolute ``path`` rows and paths leaving ``root_dir``.

    Returns:
        The benchmark, with one corpus-level run unit.

    Raises:
        BenchmarkFormatError: a bad row; the message names file, line and field.
        FileNotFoundError: a file is missing.
    """
    documents_path = Path(documents_jsonl)
    cases_path = Path(cases_jsonl)
    base = documents_path.parent
    root = Path(root_dir) if root_dir is not None else base
    bench_manifest = _manifest(manifest, "manifest")
    doc_label, case_label = _label(documents_path, base), _label(cases_path, base)
    documents = _read_unique(
        _jsonl_rows(documents_path, doc_label),
        doc_label,
        "document_id",
        lambda row, where: _document_from_row(row, where, root, allow_outside_paths),
    )
    cases = _read_unique(_jsonl_rows(cases_path, case_label), case_label, "case_id", _case_from_row)
    _require_rows(documents, doc_label, "documents")
    _require_rows(cases, case_label, "cases")
    return _benchmark(
        bench_manifest,
        documents,
        cases,
        evaluators=_evaluators(evaluators, JSONL_DEFAULT_EVALUATORS),
        source=str(base),
    )


# --------------------------------------------------------------------------------------
# BEIR
# --------------------------------------------------------------------------------------
def beir_document_id(value: str) -> str:
    """Heta's BEIR document id for a corpus ``_id`` (safe characters, sha1 suffix when changed).

    Characters other than Unicode letters/digits and ``._-`` become ``_``; runs of
    ``_`` collapse and leading/trailing ``_`` go. When that changes the id or leaves it
    longer than 96 characters, ``_`` + the first 12 hex digits of ``sha1(id)`` are
    appended to (at most 83 characters of) it, e.g. ``"doc 5"`` → ``doc_5_7b98d11c9666``.
    """
    original = value.strip()
    replaced = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in original)
    safe = "_".join(piece for piece in replaced.split("_") if piece) or "document"
    if safe == value and len(safe) <= 96:
        return safe
    digest = hashlib.sha1(value.encode("utf-8")).hexdigest()[:12]
    if not safe.strip("._-"):
        return f"document_{digest}"
    return f"{safe[:83].strip('._-')}_{digest}"


def _beir_id(value: Any, field: str) -> str:
    text = _required_text(value, "load_beir", field).lower()
    if "/" in text or "\\" in text:
        raise _fail("load_beir", field, f"{text!r} must be a dataset id, not a path")
    return _segment_check(text, "load_beir", field)  # the split is a raw-key segment


def _beir_manifest(dataset: str, split: str) -> BenchmarkManifest:
    return BenchmarkManifest(
        name=f"beir_{dataset}",
        version="official",
        split=split,
        task_type=_BEIR_TASK_TYPES.get(dataset, "information_retrieval"),
        build_scope="corpus",
        homepage=_BEIR_HOMEPAGE,
        citation=_BEIR_CITATION,
        metadata={
            "dataset": dataset,
            "recommended": dataset in _BEIR_TASK_TYPES,
            "dataset_url": f"{_BEIR_DATA_URL}/{dataset}.zip",
        },
    )


def _beir_optional(value: Any, where: str, field: str) -> str:
    """BEIR ``title`` / ``text``: missing or null is ``""``; numbers are ``str()``-ed."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _fail(where, field, f"must be a string, got {json_type_name(value)}")
    return str(value).strip()


def _read_qrels(path: Path, label: str) -> tuple[dict[str, dict[str, int]], dict[str, int], dict[str, int]]:
    """``{query_id: {corpus_id: relevance}}`` in file order (a repeated pair keeps the last score).

    Also the first line of each query id and of each corpus id with a score > 0.
    Rows Heta reads without complaint but not as the file meant give one warning per
    kind: more than three columns (a TREC qrels file is misread), a repeated pair with
    another score, and scores that are not integers (truncated, ``0.5`` becomes 0).
    """
    qrels: dict[str, dict[str, int]] = {}
    query_lines: dict[str, int] = {}
    corpus_lines: dict[str, int] = {}
    pair_lines: dict[tuple[str, str], int] = {}
    wide: list[tuple[int, int]] = []  # (line, columns)
    repeated: list[str] = []
    truncated: list[str] = []
    first = True
    for number, line in _lines(path, label):
        text = line.strip()
        if not text:
            continue
        parts = text.split("\t")
        is_first, first = first, False
        if is_first and tuple(p.strip().lower() for p in parts[:3]) in _BEIR_HEADERS:
            continue
        where = f"{label}:{number}"
        if len(parts) < 3:
            raise BenchmarkFormatError(
                f"{where}: expected 3 tab-separated columns (query-id, corpus-id, score), got {len(parts)}"
            )
        query_id, corpus_id, score = (p.strip() for p in parts[:3])
        if not query_id:
            raise _fail(where, "query-id", "must not be empty")
        if not corpus_id:
            raise _fail(where, "corpus-id", "must not be empty")
        try:
            value = float(score)
        except ValueError:
            hint = ""
            if len(parts) == 4:
                hint = (
                    "; the row has 4 columns: a TREC qrels file (query-id, iteration, corpus-id, relevance) "
                    "must be converted to BEIR's query-id, corpus-id, score"
                )
            elif is_first:
                hint = "; a header row must read query-id, corpus-id, score"
            raise _fail(where, "score", f"{score!r} is not a number{hint}") from None
        try:
            relevance = int(value)
        except (ValueError, OverflowError):  # nan, inf
            raise _fail(where, "score", f"{score!r} is not a number") from None
        if len(parts) > 3:
            wide.append((number, len(parts)))
        if value != relevance:
            truncated.append(f"{score!r} on line {number} (read as {relevance})")
        judged = qrels.setdefault(query_id, {})
        pair = (query_id, corpus_id)
        if pair in pair_lines and judged[corpus_id] != relevance:
            repeated.append(
                f"{query_id!r}/{corpus_id!r} on lines {pair_lines[pair]} and {number} "
                f"(scores {judged[corpus_id]} and {relevance})"
            )
        pair_lines.setdefault(pair, number)
        judged[corpus_id] = relevance
        query_lines.setdefault(query_id, number)
        if relevance > 0:
            corpus_lines.setdefault(corpus_id, number)
    if wide:
        wide_line, columns = wide[0]
        _warn(
            f"{label}: {len(wide)} row(s) have more than 3 tab-separated columns (line {wide_line} has {columns}); "
            "only the first three are read, as query-id, corpus-id and score (as Heta and BEIR do). A TREC "
            "qrels file (query-id, iteration, corpus-id, relevance) is misread this way: convert it first",
        )
    if repeated:
        _warn(
            f"{label}: {_dangling(len(repeated), repeated)} query-id/corpus-id pair(s) repeat with a different "
            "score; the last score is used, as in Heta",
        )
    if truncated:
        _warn(
            f"{label}: {_dangling(len(truncated), truncated)} score(s) are not integers; they are truncated "
            "as Heta does (int(float(score))), and a score truncated to 0 is not relevant",
        )
    return qrels, query_lines, corpus_lines


def _warn(message: str) -> None:
    """A :class:`BenchmarkDataWarning` attributed to the caller outside this module."""
    level, frame = 1, sys._getframe(0)
    while frame.f_back is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, BenchmarkDataWarning, stacklevel=level)


def _dangling(count: int, examples: Iterable[str]) -> str:
    """``3 ('a' on line 2, 'b' on line 5, ...)``: a count and the first few examples."""
    shown = list(itertools.islice(examples, _WARN_EXAMPLES))
    more = ", ..." if count > len(shown) else ""
    return f"{count} ({', '.join(shown)}{more})"


def load_beir(
    folder: StrPath,
    *,
    split: str = "test",
    dataset: str | None = None,
    evaluators: Sequence[Any] | None = None,
) -> Benchmark:
    """Load one split of a BEIR dataset folder, exactly as Heta's ``BeirBenchmark`` sees it.

    Reads ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/{split}.tsv``. Document ids
    are :func:`beir_document_id` of ``_id``, the text is ``title + "\\n\\n" + text``.
    A case per query that has qrels; its evidence is one entry per qrel with score > 0
    (reference id, ``source_key_prefix`` locator, ``metadata.relevance``).

    Dangling qrels are not errors, because official BEIR files have them, but each
    kind gives one :class:`BenchmarkDataWarning` per qrels file with the count and the
    first ids and lines: a corpus id (score > 0) missing from ``corpus.jsonl`` stays in
    the evidence, as in Heta and BEIR's own scoring (it counts as never retrieved);
    rows of a query id missing from ``queries.jsonl`` are left out, as in Heta. Rows
    with more than three columns, repeated pairs with another score and non-integer
    scores are read as Heta reads them, with one warning per kind.

    Args:
        folder: the dataset folder.
        split: qrels split (lowercased, as Heta does).
        dataset: dataset id for the manifest name ``beir_{dataset}`` (default: the
            folder name, lowercased).
        evaluators: default evaluators (default ``BEIR_DEFAULT_EVALUATORS``).

    Raises:
        BenchmarkFormatError: a bad row (file and line named), duplicate ids, or no cases.
        FileNotFoundError: a required file is missing.
    """
    root = Path(folder)
    dataset_id = _beir_id(dataset if dataset is not None else root.resolve().name, "dataset")
    split_id = _beir_id(split, "split")
    corpus_path, queries_path = root / "corpus.jsonl", root / "queries.jsonl"
    qrels_path = root / "qrels" / f"{split_id}.tsv"
    missing = [_label(p, root) for p in (corpus_path, queries_path, qrels_path) if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{root}: BEIR dataset is missing {', '.join(missing)}")
    manifest = _beir_manifest(dataset_id, split_id)
    corpus_label, queries_label, qrels_label = (_label(p, root) for p in (corpus_path, queries_path, qrels_path))

    documents: list[BenchmarkDocument] = []
    seen_docs: dict[str, tuple[int, str]] = {}
    for number, row in _jsonl_rows(corpus_path, corpus_label):
        where = f"{corpus_label}:{number}"
        original = _row_text(row, "_id", where, ints=True)
        document_id = beir_document_id(original)
        if document_id in seen_docs:
            line, other = seen_docs[document_id]
            same = "duplicate _id" if other == original else f"_id {original!r} gives the same document id as"
            raise _fail(where, "_id", f"{same} {other!r} on line {line} ({document_id!r})")
        seen_docs[document_id] = (number, original)
        title = _beir_optional(row.get("title"), where, "title")
        body = _beir_optional(row.get("text"), where, "text")
        content = "\n\n".join(part for part in (title, body) if part).strip() or title or original
        try:
            documents.append(
                BenchmarkDocument(
                    document_id=_segment_check(document_id, where, "_id"),
                    name=f"{document_id}.txt",
                    media_type="text/plain",
                    data=content.encode("utf-8"),
                    metadata={
                        "beir_doc_id": original,
                        "beir_document_id": document_id,
                        "dataset": dataset_id,
                        "title": title,
                    },
                )
            )
        except UnicodeEncodeError:
            raise _fail(where, "text", "contains an unpaired surrogate") from None

    queries: dict[str, str] = {}
    query_lines: dict[str, int] = {}
    for number, row in _jsonl_rows(queries_path, queries_label):
        where = f"{queries_label}:{number}"
        query_id = _row_text(row, "_id", where, ints=True)
        if query_id in queries:
            raise _fail(where, "_id", f"duplicate query id {query_id!r} (first on line {query_lines[query_id]})")
        queries[query_id] = _row_text(row, "text", where)
        query_lines[query_id] = number

    qrels, qrel_query_lines, qrel_corpus_lines = _read_qrels(qrels_path, qrels_label)
    unknown_queries = [query_id for query_id in qrels if query_id not in queries]
    if unknown_queries:
        examples = (f"{q!r} on line {qrel_query_lines[q]}" for q in unknown_queries)
        _warn(
            f"{qrels_label}: {_dangling(len(unknown_queries), examples)} query id(s) are not in "
            f"{queries_label}; their qrels were left out",
        )
    unknown_documents: dict[str, int] = {}
    prefix = f"raw/benchmarks/{manifest.name}/{manifest.split}/"
    ids: dict[str, str] = {}
    cases: list[BenchmarkCase] = []
    for query_id, query in queries.items():
        judged = qrels.get(query_id)
        if not judged:
            continue
        evidence = []
        for corpus_id, relevance in judged.items():
            if relevance <= 0:
                continue
            document_id = ids.get(corpus_id) or ids.setdefault(corpus_id, beir_document_id(corpus_id))
            if document_id not in seen_docs:
                unknown_documents.setdefault(corpus_id, qrel_corpus_lines[corpus_id])
            evidence.append(
                BenchmarkEvidence(
                    reference_id=document_id,
                    locator={"source_key_prefix": f"{prefix}{document_id}/"},
                    metadata={
                        "beir_doc_id": corpus_id,
                        "beir_document_id": document_id,
                        "relevance": relevance,
                    },
                )
            )
        cases.append(
            BenchmarkCase(
                case_id=query_id,
                query=query,
                expected=BenchmarkExpected(
                    evidence=tuple(evidence),
                    metadata={"beir_query_id": query_id, "positive_qrels": len(evidence)},
                ),
                labels={"dataset": dataset_id, "split": split_id},
                metadata={"beir_query_id": query_id, "dataset": dataset_id},
            )
        )
    if unknown_documents:
        examples = (f"{c!r} on line {n}" for c, n in sorted(unknown_documents.items(), key=lambda item: item[1]))
        _warn(
            f"{qrels_label}: {_dangling(len(unknown_documents), examples)} corpus id(s) with a score > 0 are not "
            f"in {corpus_label}; they stay in the cases' evidence (as in Heta and BEIR) but can never be retrieved",
        )
    _require_rows(documents, corpus_label, "documents")
    if not cases:
        raise BenchmarkFormatError(
            f"{qrels_label}: no query in {queries_label} has qrels in this file (check the split and the ids)"
        )
    return _benchmark(
        manifest,
        documents,
        cases,
        units=(BenchmarkRunUnit(unit_id="corpus", metadata={"dataset": dataset_id, "split": split_id}),),
        evaluators=_evaluators(evaluators, BEIR_DEFAULT_EVALUATORS),
        source=str(root),
    )


# --------------------------------------------------------------------------------------
# MultiHop-RAG
# --------------------------------------------------------------------------------------
def multihop_rag_article_id(*, title: str, url: str | None) -> str:
    """Heta's MultiHop-RAG document id: ``article_`` + 16 hex digits of sha256(url or title)."""
    return "article_" + hashlib.sha256((url or title).encode("utf-8")).hexdigest()[:16]


def _mhr_url(value: Any, where: str, field: str) -> str | None:
    """Optional URL: null or blank is None (as in Heta)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(where, field, f"must be a string, got {json_type_name(value)}")
    return value.strip() or None


def _mhr_manifest() -> BenchmarkManifest:
    return BenchmarkManifest(
        name="multihop_rag",
        version="official",
        split="all",
        task_type="multi_hop_qa",
        build_scope="corpus",
        homepage=_MHR_HOMEPAGE,
        citation=_MHR_CITATION,
        metadata={
            "corpus_url": f"{_MHR_DATA_URL}/corpus.json",
            "queries_url": f"{_MHR_DATA_URL}/MultiHopRAG.json",
        },
    )


def _mhr_document(row: Any, where: str) -> BenchmarkDocument:
    if not isinstance(row, Mapping):
        raise BenchmarkFormatError(f"{where}: a corpus row must be an object, got {json_type_name(row)}")
    title = _row_text(row, "title", where)
    body = _row_text(row, "body", where)
    url = _mhr_url(row.get("url"), where, "url")
    document_id = multihop_rag_article_id(title=title, url=url)
    source, published_at = row.get("source"), row.get("published_at")
    text = f"Title: {title}\nSource: {source or ''}\nPublished at: {published_at or ''}\nURL: {url or ''}\n\n{body}"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(where, "body", "contains an unpaired surrogate") from None
    return BenchmarkDocument(
        document_id=document_id,
        name=f"{document_id}.txt",
        media_type="text/plain",
        data=data,
        metadata={
            "title": title,
            "author": row.get("author"),
            "source": source,
            "published_at": published_at,
            "category": row.get("category"),
            "url": url,
        },
    )


def _mhr_evidence(row: Any, where: str, field: str, manifest: BenchmarkManifest) -> BenchmarkEvidence:
    if not isinstance(row, Mapping):
        raise _fail(where, field, f"must be an object, got {json_type_name(row)}")
    title = _required_text(row.get("title"), where, f"{field}.title")
    url = _mhr_url(row.get("url"), where, f"{field}.url")
    fact = row.get("fact")
    text = None
    if fact is not None:
        if isinstance(fact, bool) or not isinstance(fact, (str, int, float)):
            raise _fail(where, f"{field}.fact", f"must be a string, got {json_type_name(fact)}")
        text = str(fact).strip() or None
    document_id = multihop_rag_article_id(title=title, url=url)
    source_key = f"raw/benchmarks/{manifest.name}/{manifest.split}/{document_id}/{document_id}.txt"
    return BenchmarkEvidence(
        reference_id=document_id,
        locator={"source_key": source_key},
        text=text,
        metadata={
            "document_id": document_id,
            "title": title,
            "author": row.get("author"),
            "source": row.get("source"),
            "category": row.get("category"),
            "published_at": row.get("published_at"),
            "url": url,
        },
    )


def _mhr_case(row: Any, index: int, where: str, manifest: BenchmarkManifest) -> BenchmarkCase:
    if not isinstance(row, Mapping):
        raise BenchmarkFormatError(f"{where}: a query row must be an object, got {json_type_name(row)}")
    query = _row_text(row, "query", where)
    answer = _row_text(row, "answer", where, numbers=True)
    rows = row.get("evidence_list")
    if rows is None:
        rows = []
    elif not isinstance(rows, list):
        raise _fail(where, "evidence_list", f"must be a list, got {json_type_name(rows)}")
    question_type = row.get("question_type")
    return BenchmarkCase(
        case_id=f"multihop_rag_{index:04d}",
        query=query,
        expected=BenchmarkExpected(
            answers=(answer,),
            evidence=tuple(_mhr_evidence(item, where, f"evidence_list[{i}]", manifest) for i, item in enumerate(rows)),
            metadata={"question_type": question_type},
        ),
        labels={"question_type": question_type},
        metadata={"original_index": index},
    )


def load_multihop_rag(
    folder_or_corpus: StrPath,
    queries_path: StrPath | None = None,
    *,
    evaluators: Sequence[Any] | None = None,
) -> Benchmark:
    """Load MultiHop-RAG (``corpus.json`` + ``MultiHopRAG.json``) as Heta's adapter does.

    Document ids are :func:`multihop_rag_article_id`, the text is a ``Title:`` /
    ``Source:`` / ``Published at:`` / ``URL:`` header, a blank line and the body.
    Case ids are ``multihop_rag_{index:04d}``; evidence has the exact raw key as
    ``locator.source_key`` and the fact as ``text``; ``question_type`` is a label.
    Unlike Heta, two corpus rows with the same id (same url, or same title without
    url) are an error here, and a missing or null ``evidence_list`` means no evidence.
    Evidence naming an article that is not in the corpus stays in the evidence, as in
    Heta (it can never be found), and gives one :class:`BenchmarkDataWarning` per
    queries file with the count and the first few items.

    Args:
        folder_or_corpus: the folder holding both files, or the path of ``corpus.json``.
        queries_path: ``MultiHopRAG.json`` (default: next to the corpus).
        evaluators: default evaluators (default ``("evidence_recall@5", "answer_contains")``).

    Raises:
        BenchmarkFormatError: a bad row (``file[index]: field: ...``) or duplicate ids.
        FileNotFoundError: a file is missing.
    """
    given = Path(folder_or_corpus)
    corpus_path = given / "corpus.json" if given.is_dir() else given
    base = corpus_path.parent
    queries = Path(queries_path) if queries_path is not None else base / "MultiHopRAG.json"
    corpus_label, queries_label = _label(corpus_path, base), _label(queries, base)
    manifest = _mhr_manifest()

    documents: list[BenchmarkDocument] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(_read_json_array(corpus_path, corpus_label)):
        where = f"{corpus_label}[{index}]"
        document = _mhr_document(row, where)
        if document.document_id in seen:
            other = seen[document.document_id]
            field = "url" if document.metadata.get("url") else "title"
            raise _fail(
                where,
                field,
                f"article id {document.document_id!r} duplicates {corpus_label}[{other}] "
                "(the id is derived from the url, or the title when there is no url)",
            )
        seen[document.document_id] = index
        documents.append(document)
    cases = [
        _mhr_case(row, index, f"{queries_label}[{index}]", manifest)
        for index, row in enumerate(_read_json_array(queries, queries_label))
    ]
    unknown = [
        (f"{queries_label}[{index}].evidence_list[{i}]", evidence.metadata["title"])
        for index, case in enumerate(cases)
        for i, evidence in enumerate(case.expected.evidence)
        if evidence.reference_id not in seen
    ]
    if unknown:
        examples = (f"{where} {title!r}" for where, title in unknown)
        _warn(
            f"{queries_label}: {_dangling(len(unknown), examples)} evidence item(s) name an article that is not "
            f"in {corpus_label} (no row with that url, or that title when there is no url); they stay in the "
            "evidence (as in Heta) but can never be found",
        )
    _require_rows(documents, corpus_label, "articles")
    _require_rows(cases, queries_label, "queries")
    return _benchmark(
        manifest,
        documents,
        cases,
        evaluators=_evaluators(evaluators, MULTIHOP_RAG_DEFAULT_EVALUATORS),
        source=str(base),
    )


# --------------------------------------------------------------------------------------
# format detection
# --------------------------------------------------------------------------------------
def _layouts(split: str) -> dict[str, tuple[str, ...]]:
    return {
        "jsonl": ("documents.jsonl", "cases.jsonl"),
        "beir": ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"),
        "multihop_rag": ("corpus.json", "MultiHopRAG.json"),
    }


_LAYOUT_TITLES = {"jsonl": "Heta JSONL", "beir": "BEIR", "multihop_rag": "MultiHop-RAG"}


_COMPRESSED = (".gz", ".zip", ".bz2", ".xz")
#: How many subfolders the "no benchmark found" message looks into.
_NESTED_LIMIT = 50


def _all_layout_files(layouts: Mapping[str, tuple[str, ...]]) -> list[str]:
    return list(dict.fromkeys(f for files in layouts.values() for f in files))


def _nested_benchmarks(folder: Path, layouts: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Subfolders (one level, e.g. an unzipped ``scifact/``) that match a layout (error path only)."""
    try:
        children = sorted(itertools.islice((c for c in folder.iterdir() if c.is_dir()), _NESTED_LIMIT))
    except OSError:
        return []
    found = []
    for child in children:
        for fmt, files in layouts.items():
            matches = all((child / f).is_file() for f in files)
            if not matches and fmt == "beir":  # any split will do here
                matches = all((child / f).is_file() for f in files[:2]) and any((child / "qrels").glob("*.tsv"))
            if matches:
                found.append(f"{child.name!r} ({_LAYOUT_TITLES[fmt]})")
                break
    return found


def _detect(folder: Path, split: str) -> str:
    layouts = _layouts(split)
    found = [fmt for fmt, files in layouts.items() if all((folder / f).is_file() for f in files)]
    if len(found) == 1:
        return found[0]
    if found:
        raise BenchmarkFormatError(
            f"{folder}: the folder matches several benchmark formats ({', '.join(found)}); pass format="
        )
    lines = [f"{folder}: no benchmark found. Looked for:"]
    for fmt, files in layouts.items():
        missing = [f for f in files if not (folder / f).is_file()]
        lines.append(f"  - {_LAYOUT_TITLES[fmt]} (format={fmt!r}): {' + '.join(files)} (missing {', '.join(missing)})")
    compressed = [
        f"{f}{ext}" for f in _all_layout_files(layouts) for ext in _COMPRESSED if (folder / f"{f}{ext}").is_file()
    ]
    if compressed:
        lines.append(f"  found {', '.join(compressed)}: decompress first (the loaders read plain files only)")
    nested = _nested_benchmarks(folder, layouts)
    if nested:
        lines.append(f"  a subfolder holds a benchmark, load it instead: {', '.join(nested)}")
    qrels = folder / "qrels"
    if qrels.is_dir():
        splits = sorted(p.stem for p in qrels.glob("*.tsv"))
        if splits:
            lines.append(f"  qrels/ has the splits {splits}; pass split=")
    raise BenchmarkFormatError("\n".join(lines))


def _folder_manifest(folder: Path, manifest: Any) -> BenchmarkManifest:
    if manifest is not None:
        return _manifest(manifest, "manifest")
    path = folder / "manifest.json"
    if not path.is_file():
        raise BenchmarkFormatError(
            f"{folder}: a JSONL benchmark needs a manifest: pass manifest=BenchmarkManifest(name=..., "
            "version=..., split=..., task_type=...) or add a manifest.json to the folder"
        )
    value = _read_json(path, "manifest.json")
    if not isinstance(value, dict):
        raise BenchmarkFormatError(f"manifest.json: must contain a JSON object, got {json_type_name(value)}")
    unknown = sorted(set(value) - _MANIFEST_KEYS)
    if unknown:
        raise BenchmarkFormatError(
            f"manifest.json: unknown key(s) {unknown}; allowed: {', '.join(sorted(_MANIFEST_KEYS))}"
        )
    return _manifest(value, "manifest.json")


def load_benchmark(
    source: StrPath,
    *,
    format: str | None = None,  # noqa: A002 - the natural name
    manifest: BenchmarkManifest | Mapping[str, Any] | None = None,
    split: str = "test",
    evaluators: Sequence[Any] | None = None,
    allow_outside_paths: bool = False,
) -> Benchmark:
    """Load a benchmark folder, detecting its format from the files it holds.

    - Heta JSONL: ``documents.jsonl`` + ``cases.jsonl`` (+ optional ``manifest.json``
      with BenchmarkManifest fields; ``manifest=`` overrides it).
    - BEIR: ``corpus.jsonl`` + ``queries.jsonl`` + ``qrels/{split}.tsv``.
    - MultiHop-RAG: ``corpus.json`` + ``MultiHopRAG.json``.

    Args:
        source: the benchmark folder.
        format: ``"jsonl"``, ``"beir"`` or ``"multihop_rag"`` to skip detection.
        manifest: the manifest of a JSONL benchmark (BEIR and MultiHop-RAG have fixed ones).
        split: the BEIR qrels split (other formats ignore it).
        evaluators: default evaluators (default: the format's, see the module constants).
        allow_outside_paths: JSONL only, see :func:`load_jsonl_benchmark`.

    Raises:
        BenchmarkFormatError: no or several formats match, or the files are malformed.
        FileNotFoundError: the folder (or, with ``format=``, a file) does not exist.
    """
    folder = Path(source)
    if not folder.exists():
        raise FileNotFoundError(f"{folder}: no such benchmark folder")
    if not folder.is_dir():
        raise BenchmarkFormatError(f"{folder}: load_benchmark expects a benchmark folder, not a file")
    if format is None:
        fmt = _detect(folder, split.strip().lower())
    else:
        fmt = format.strip().lower().replace("-", "_")
        if fmt not in BENCHMARK_FORMATS:
            raise BenchmarkFormatError(f"format must be one of {', '.join(BENCHMARK_FORMATS)}, got {format!r}")
    if fmt == "jsonl":
        return load_jsonl_benchmark(
            folder / "documents.jsonl",
            folder / "cases.jsonl",
            manifest=_folder_manifest(folder, manifest),
            root_dir=folder,
            evaluators=evaluators,
            allow_outside_paths=allow_outside_paths,
        )
    if manifest is not None:
        raise BenchmarkFormatError(f"manifest= applies to JSONL benchmarks only; {fmt} has a fixed manifest")
    if fmt == "beir":
        return load_beir(folder, split=split, evaluators=evaluators)
    return load_multihop_rag(folder, evaluators=evaluators)


# --------------------------------------------------------------------------------------
# DataFrames
# --------------------------------------------------------------------------------------
def _is_missing(value: Any) -> bool:
    """None, NaN, ``pd.NA`` or ``pd.NaT`` (scalars only)."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    import pandas as pd

    try:
        return bool(pd.api.types.is_scalar(value) and pd.isna(value))
    except (TypeError, ValueError):
        return False


def _plain(value: Any) -> Any:
    """Turn numpy/pandas values into plain JSON-like Python values (missing → None)."""
    if isinstance(value, (str, bool, int)) or value is None:
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat") and not _is_missing(value):
        return value.isoformat()
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _plain(value.tolist())
    if _is_missing(value):
        return None
    return value


def _cell_list(value: Any) -> Any:
    """numpy arrays and tuples become lists; anything else is unchanged."""
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    return value


def _integral(value: Any) -> Any:
    """A float with an integer value (``42.0``) as an int, in a cell or one level of list.

    pandas stores an integer column that has a missing value as float64, so ids and
    answers such as ``42`` arrive as ``42.0``; ``str()`` would make the answer "42.0".
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


def _list_text(value: Any, where: str, column: str) -> None:
    """Refuse a string that holds a whole list (a list column read back from CSV)."""
    if not isinstance(value, str):
        return
    text = value.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return
    try:
        parsed = json.loads(text)
    except ValueError:
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return
    if isinstance(parsed, (list, tuple)):
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise _fail(
            where,
            f"column {column!r}",
            f"{shown!r} is a list stored as text (e.g. a DataFrame read back from CSV): convert the column "
            "with ast.literal_eval or json.loads first (to keep it as one text, put it in a list)",
        )


def _frame_id(value: Any, where: str, column: str) -> str:
    value = _integral(_plain(value))
    if _is_missing(value):
        raise _fail(where, f"column {column!r}", "is missing")
    return _required_text(value, where, f"column {column!r}", ints=True)


def _frame_evidence(
    value: Any, where: str, column: str, manifest: BenchmarkManifest
) -> tuple[tuple[BenchmarkEvidence, ...], list[str]]:
    """The evidence of one cell, and the document ids it gave as bare ids."""
    value = _integral(_plain(_cell_list(value)))
    if value is None:
        return (), []
    _list_text(value, where, column)
    if isinstance(value, (str, int, Mapping)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise _fail(
            where,
            f"column {column!r}",
            f"must be a list of document ids or evidence objects, got {json_type_name(value)}",
        )
    items = []
    bare = []
    prefix = f"raw/benchmarks/{manifest.name}/{manifest.split}/"
    for i, item in enumerate(value):
        field = f"column {column!r}[{i}]"
        if isinstance(item, Mapping):
            items.append(_evidence_item(item, where, field))
        else:
            document_id = _required_text(item, where, field, ints=True)
            bare.append(document_id)
            items.append(
                BenchmarkEvidence(reference_id=document_id, locator={"source_key_prefix": f"{prefix}{document_id}/"})
            )
    return tuple(items), bare


def _frame_documents(documents: Any) -> list[BenchmarkDocument]:
    import pandas as pd

    if documents is None:
        return []
    if isinstance(documents, pd.DataFrame):
        for column in ("document_id", "text"):
            if column not in documents.columns:
                raise BenchmarkFormatError(
                    f"documents: the frame has no column {column!r} (columns: {list(documents.columns)})"
                )
        if not documents.columns.is_unique:
            raise BenchmarkFormatError("documents: the frame has duplicate column names")
        result = []
        for index, row in zip(documents.index, documents.to_dict("records")):
            where = f"documents row {index!r}"
            document_id = _segment_check(
                _frame_id(row["document_id"], where, "document_id"), where, "column 'document_id'"
            )
            text = row["text"]
            if isinstance(text, bytes):
                data = text
            elif isinstance(text, str):
                try:
                    data = text.encode("utf-8", "strict")
                except UnicodeEncodeError:
                    raise _fail(
                        where, "column 'text'", "contains an unpaired surrogate and cannot be encoded as UTF-8"
                    ) from None
            else:
                raise _fail(where, "column 'text'", f"must be a string or bytes, got {json_type_name(_plain(text))}")
            name = row.get("name")
            name = f"{document_id}.txt" if _is_missing(name) else _required_text(name, where, "column 'name'")
            media_type = row.get("media_type")
            media_type = (
                "text/plain" if _is_missing(media_type) else _required_text(media_type, where, "column 'media_type'")
            )
            metadata = row.get("metadata")
            metadata = {} if not isinstance(metadata, Mapping) and _is_missing(metadata) else metadata
            try:
                result.append(
                    BenchmarkDocument(
                        document_id=document_id,
                        name=_segment_check(name, where, "column 'name'"),
                        media_type=media_type,
                        data=data,
                        metadata=_object(_plain(metadata), where, "column 'metadata'"),
                    )
                )
            except (TypeError, ValueError) as exc:
                if isinstance(exc, BenchmarkFormatError):
                    raise
                raise BenchmarkFormatError(f"{where}: {exc}") from None
        firsts: dict[str, Any] = {}
        for index, document in zip(documents.index, result):
            if document.document_id in firsts:
                raise _fail(
                    f"documents row {index!r}",
                    "column 'document_id'",
                    f"duplicate {document.document_id!r} (first in row {firsts[document.document_id]!r})",
                )
            firsts[document.document_id] = index
        return result
    items = list(documents)
    for i, item in enumerate(items):
        if not isinstance(item, BenchmarkDocument):
            raise BenchmarkFormatError(f"documents[{i}]: must be a BenchmarkDocument, got {type(item).__name__}")
    return items


def benchmark_from_frame(
    frame: pd.DataFrame,
    *,
    manifest: BenchmarkManifest | Mapping[str, Any] | Any,
    documents: pd.DataFrame | Iterable[BenchmarkDocument] | None = None,
    case_id: str = "case_id",
    query: str = "query",
    answers: str | None = "answers",
    evidence: str | None = "evidence",
    label_columns: Sequence[str] | None = None,
    evaluators: Sequence[Any] | None = None,
) -> Benchmark:
    """Build a benchmark from a DataFrame with one case per row.

    An answers cell holds a list of strings or one string (NaN/None: no answers). An
    evidence cell holds document ids (each becomes evidence with that ``reference_id``
    and a ``source_key_prefix`` locator for ``manifest``), evidence objects in the JSONL
    schema, or a mix. The answers and evidence columns may be absent when they keep
    their default names. Every other column is a label unless ``label_columns`` says
    which. Ids, answers and evidence ids that are floats with an integer value are read
    as integers (pandas stores an integer column with a missing value as float64, so
    ``42`` arrives as ``42.0``). A text cell holding a whole list (``"['a', 'b']"``, as
    ``read_csv`` gives back) is an error. Bare evidence ids missing from ``documents``
    (when given) give one :class:`BenchmarkDataWarning`.

    Args:
        frame: the cases.
        manifest: the benchmark manifest.
        documents: a DataFrame with ``document_id`` and ``text`` (and optional ``name``
            (default ``{id}.txt``), ``media_type`` (default ``text/plain``), ``metadata``),
            or a list of BenchmarkDocument.
        case_id, query, answers, evidence: column names (None: no such column).
        label_columns: the label columns (default: all other columns).
        evaluators: default evaluators (default ``("evidence_recall@5", "answer_contains")``).

    Raises:
        BenchmarkFormatError: naming the row index and column of a bad value.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise BenchmarkFormatError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if not frame.columns.is_unique:
        raise BenchmarkFormatError("frame has duplicate column names")
    bench_manifest = _manifest(manifest, "manifest")
    columns = list(frame.columns)
    for name in (case_id, query):
        if name not in columns:
            raise BenchmarkFormatError(f"frame has no column {name!r} (columns: {columns})")
    answers_col = answers if answers is not None and answers in columns else None
    evidence_col = evidence if evidence is not None and evidence in columns else None
    for given, default, found in ((answers, "answers", answers_col), (evidence, "evidence", evidence_col)):
        if given is not None and given != default and found is None:
            raise BenchmarkFormatError(f"frame has no column {given!r} (columns: {columns})")
    used = {case_id, query, answers_col, evidence_col}
    if label_columns is None:
        labels = [c for c in columns if c not in used]
    else:
        labels = list(label_columns)
        for name in labels:
            if name not in columns:
                raise BenchmarkFormatError(f"frame has no label column {name!r} (columns: {columns})")

    cases: list[BenchmarkCase] = []
    firsts: dict[str, Any] = {}
    bare_ids: list[tuple[str, str]] = []  # (where, id) of evidence given as a bare document id
    for index, row in zip(frame.index, frame.to_dict("records")):
        where = f"row {index!r}"
        cid = _frame_id(row[case_id], where, case_id)
        if cid in firsts:
            raise _fail(where, f"column {case_id!r}", f"duplicate case id {cid!r} (first in row {firsts[cid]!r})")
        firsts[cid] = index
        text = _plain(row[query])
        if _is_missing(text):
            raise _fail(where, f"column {query!r}", "is missing")
        query_text = _required_text(text, where, f"column {query!r}")
        answer_values: tuple[str, ...] = ()
        if answers_col is not None:
            cell = _integral(_plain(_cell_list(row[answers_col])))
            _list_text(cell, where, answers_col)
            if cell is not None:
                answer_values = _answers(cell, where, f"column {answers_col!r}")
        evidence_values: tuple[BenchmarkEvidence, ...] = ()
        if evidence_col is not None:
            evidence_values, bare = _frame_evidence(row[evidence_col], where, evidence_col, bench_manifest)
            bare_ids.extend((where, document_id) for document_id in bare)
        try:
            cases.append(
                BenchmarkCase(
                    case_id=cid,
                    query=query_text,
                    expected=BenchmarkExpected(answers=answer_values, evidence=evidence_values),
                    labels={str(name): _plain(row[name]) for name in labels},
                )
            )
        except (TypeError, ValueError) as exc:
            if isinstance(exc, BenchmarkFormatError):
                raise
            raise BenchmarkFormatError(f"{where}: {exc}") from None
    frame_documents = _frame_documents(documents)
    if frame_documents and bare_ids:
        known = {d.document_id for d in frame_documents}
        unknown = [f"{where} {ref!r}" for where, ref in bare_ids if ref not in known]
        if unknown:
            _warn(
                f"column {evidence_col!r}: {_dangling(len(unknown), unknown)} document id(s) are not in documents; "
                "they stay in the evidence but can never be retrieved",
            )
    return _benchmark(
        bench_manifest,
        frame_documents,
        cases,
        evaluators=_evaluators(evaluators, JSONL_DEFAULT_EVALUATORS),
        source="DataFrame",
    )
