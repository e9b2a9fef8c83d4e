"""Benchmark records from pandas DataFrames: one case per row, documents from a second frame.

It stops at the records, which ``benchmark_from_frame`` and ``Benchmark.from_frame`` (in
:mod:`heta_nb.benchmark.types`) assemble: the container imports this module, never the reverse."""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from heta_nb._util.text import shorten
from heta_nb.benchmark.formats.parsing import (
    chosen_evaluators,
    dangling,
    fail,
    key_segment,
    object_field,
    parse_answers,
    parse_evidence,
    parse_manifest,
    required_text,
    warn_data,
)
from heta_nb.benchmark.records import BenchmarkCase, BenchmarkDocument, BenchmarkEvidence, BenchmarkExpected
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.json import json_type_name
from heta_nb.model.report import BenchmarkManifest

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["FRAME_DEFAULT_EVALUATORS", "FrameContents", "read_frame"]

#: Default evaluators of a benchmark built from a DataFrame (those of Heta's ``JsonlBenchmark``).
FRAME_DEFAULT_EVALUATORS: tuple[str, ...] = ("evidence_recall@5", "answer_contains")


class FrameContents(NamedTuple):
    """What :func:`read_frame` found: a benchmark's parts, checked row by row."""

    manifest: BenchmarkManifest
    documents: list[BenchmarkDocument]
    cases: list[BenchmarkCase]
    evaluators: tuple[Any, ...]


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
        shown = shorten(text, 60, ellipsis="...")
        raise fail(
            where,
            f"column {column!r}",
            f"{shown!r} is a list stored as text (e.g. a DataFrame read back from CSV): convert the column "
            "with ast.literal_eval or json.loads first (to keep it as one text, put it in a list)",
        )


def _frame_id(value: Any, where: str, column: str) -> str:
    value = _integral(_plain(value))
    if _is_missing(value):
        raise fail(where, f"column {column!r}", "is missing")
    return required_text(value, where, f"column {column!r}", ints=True)


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
        raise fail(
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
            items.append(parse_evidence(item, where, field))
        else:
            document_id = required_text(item, where, field, ints=True)
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
            document_id = key_segment(
                _frame_id(row["document_id"], where, "document_id"), where, "column 'document_id'"
            )
            text = row["text"]
            if isinstance(text, bytes):
                data = text
            elif isinstance(text, str):
                try:
                    data = text.encode("utf-8", "strict")
                except UnicodeEncodeError:
                    raise fail(
                        where, "column 'text'", "contains an unpaired surrogate and cannot be encoded as UTF-8"
                    ) from None
            else:
                raise fail(where, "column 'text'", f"must be a string or bytes, got {json_type_name(_plain(text))}")
            name = row.get("name")
            name = f"{document_id}.txt" if _is_missing(name) else required_text(name, where, "column 'name'")
            media_type = row.get("media_type")
            media_type = (
                "text/plain" if _is_missing(media_type) else required_text(media_type, where, "column 'media_type'")
            )
            metadata = row.get("metadata")
            metadata = {} if not isinstance(metadata, Mapping) and _is_missing(metadata) else metadata
            try:
                result.append(
                    BenchmarkDocument(
                        document_id=document_id,
                        name=key_segment(name, where, "column 'name'"),
                        media_type=media_type,
                        data=data,
                        metadata=object_field(_plain(metadata), where, "column 'metadata'"),
                    )
                )
            except (TypeError, ValueError) as exc:
                if isinstance(exc, BenchmarkFormatError):
                    raise
                raise BenchmarkFormatError(f"{where}: {exc}") from None
        firsts: dict[str, Any] = {}
        for index, document in zip(documents.index, result):
            if document.document_id in firsts:
                raise fail(
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


def read_frame(
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
) -> FrameContents:
    """The parts of :func:`~heta_nb.benchmark.types.benchmark_from_frame`'s benchmark (see there).

    Raises:
        BenchmarkFormatError: naming the row index and column of a bad value.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise BenchmarkFormatError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if not frame.columns.is_unique:
        raise BenchmarkFormatError("frame has duplicate column names")
    bench_manifest = parse_manifest(manifest, "manifest")
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
            raise fail(where, f"column {case_id!r}", f"duplicate case id {cid!r} (first in row {firsts[cid]!r})")
        firsts[cid] = index
        text = _plain(row[query])
        if _is_missing(text):
            raise fail(where, f"column {query!r}", "is missing")
        query_text = required_text(text, where, f"column {query!r}")
        answer_values: tuple[str, ...] = ()
        if answers_col is not None:
            cell = _integral(_plain(_cell_list(row[answers_col])))
            _list_text(cell, where, answers_col)
            if cell is not None:
                answer_values = parse_answers(cell, where, f"column {answers_col!r}")
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
            warn_data(
                f"column {evidence_col!r}: {dangling(len(unknown), unknown)} document id(s) are not in documents; "
                "they stay in the evidence but can never be retrieved",
            )
    return FrameContents(
        bench_manifest, frame_documents, cases, chosen_evaluators(evaluators, FRAME_DEFAULT_EVALUATORS)
    )
