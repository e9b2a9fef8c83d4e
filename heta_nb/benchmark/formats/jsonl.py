"""Heta's JSONL benchmark format: ``documents.jsonl`` + ``cases.jsonl`` (``docs/heta-compat.md`` §2.1),
read as Heta 0.1.2's ``JsonlBenchmark`` reads it, minus its traps."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PureWindowsPath
from typing import Any

from heta_nb.benchmark.formats.parsing import (
    StrPath,
    chosen_evaluators,
    fail,
    file_label,
    jsonl_rows,
    key_segment,
    object_field,
    parse_answers,
    parse_evidence_list,
    parse_manifest,
    require_rows,
    required_text,
    row_text,
)
from heta_nb.benchmark.records import BenchmarkCase, BenchmarkDocument, BenchmarkExpected
from heta_nb.benchmark.types import Benchmark, build_benchmark
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.json import json_type_name
from heta_nb.model.report import BenchmarkManifest

__all__ = ["JSONL_DEFAULT_EVALUATORS", "load_jsonl_benchmark"]

#: Default evaluators of a Heta JSONL benchmark (Heta's ``JsonlBenchmark`` default).
JSONL_DEFAULT_EVALUATORS: tuple[str, ...] = ("evidence_recall@5", "answer_contains")
#: Where a document row's content comes from (exactly one is set).
_SOURCE_KEYS = ("text", "data_base64", "path", "source_uri")


def _resolve_document_path(value: str, root: Path, where: str, allow_outside: bool) -> Path:
    """Resolve a ``path`` row against ``root`` (symlinks included) and keep it inside."""
    if "\x00" in value:
        raise fail(where, "path", f"{value!r} contains a NUL character")
    is_absolute = Path(value).is_absolute() or value.startswith(("/", "\\")) or bool(PureWindowsPath(value).drive)
    if is_absolute and not allow_outside:
        raise fail(
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
        raise fail(where, "path", f"{value!r} cannot be resolved ({exc})") from None
    if not allow_outside and not resolved.is_relative_to(root_resolved):
        raise fail(
            where,
            "path",
            f"{value!r} is outside the benchmark folder (pass allow_outside_paths=True to allow it)",
        )
    if not resolved.exists():
        raise fail(where, "path", f"{value!r} does not exist (resolved to {resolved})")
    if not resolved.is_file():
        raise fail(where, "path", f"{value!r} is not a file (resolved to {resolved})")
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
        raise fail(where, "data_base64", f"is not valid base64 ({exc})") from None
    if base64.b64encode(data).decode("ascii") != compact:
        raise fail(where, "data_base64", "is not valid base64 (bad padding or trailing bits)")
    return data


def _document_from_row(row: Mapping[str, Any], where: str, root: Path, allow_outside: bool) -> BenchmarkDocument:
    document_id = key_segment(row_text(row, "document_id", where, ints=True), where, "document_id")
    name = key_segment(row_text(row, "name", where), where, "name")
    media_type = row_text(row, "media_type", where)
    # source_uri: null means "not set", as in Heta; the other source keys count when present.
    sources = [key for key in _SOURCE_KEYS if key in row and not (key == "source_uri" and row[key] is None)]
    if not sources:
        raise fail(where, "text", "a document needs exactly one of text, data_base64, path or source_uri")
    if len(sources) > 1:
        raise fail(where, ", ".join(sources), "a document must set only one of text, data_base64, path or source_uri")
    key = sources[0]
    value = row[key]
    data: bytes | None = None
    path: Path | None = None
    source_uri: str | None = None
    if key == "text":
        if not isinstance(value, str):
            raise fail(where, "text", f"must be a string, got {json_type_name(value)}")
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            raise fail(where, "text", "contains an unpaired surrogate and cannot be encoded as UTF-8") from None
    elif key == "data_base64":
        data = _decode_base64(required_text(value, where, "data_base64"), where)
    elif key == "path":
        path = _resolve_document_path(required_text(value, where, "path"), root, where, allow_outside)
    else:
        source_uri = required_text(value, where, "source_uri")
    metadata = object_field(row.get("metadata"), where, "metadata")
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
    case_id = row_text(row, "case_id", where, ints=True)
    query = row_text(row, "query", where)
    expected = row.get("expected")
    if expected is None:
        expected = {}
    elif not isinstance(expected, Mapping):
        raise fail(where, "expected", f"must be an object, got {json_type_name(expected)}")
    try:
        return BenchmarkCase(
            case_id=case_id,
            query=query,
            expected=BenchmarkExpected(
                answers=parse_answers(expected.get("answers"), where, "expected.answers"),
                evidence=parse_evidence_list(expected.get("evidence"), where, "expected.evidence"),
                value=expected.get("value"),
                metadata=object_field(expected.get("metadata"), where, "expected.metadata"),
            ),
            labels=object_field(row.get("labels"), where, "labels"),
            metadata=object_field(row.get("metadata"), where, "metadata"),
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
            raise fail(where, id_field, f"duplicate {id_field} {item_id!r} (first on line {first_line[item_id]})")
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
    bench_manifest = parse_manifest(manifest, "manifest")
    doc_label, case_label = file_label(documents_path, base), file_label(cases_path, base)
    documents = _read_unique(
        jsonl_rows(documents_path, doc_label),
        doc_label,
        "document_id",
        lambda row, where: _document_from_row(row, where, root, allow_outside_paths),
    )
    cases = _read_unique(jsonl_rows(cases_path, case_label), case_label, "case_id", _case_from_row)
    require_rows(documents, doc_label, "documents")
    require_rows(cases, case_label, "cases")
    return build_benchmark(
        bench_manifest,
        documents,
        cases,
        evaluators=chosen_evaluators(evaluators, JSONL_DEFAULT_EVALUATORS),
        source=str(base),
    )
