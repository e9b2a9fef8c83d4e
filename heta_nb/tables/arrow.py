"""Arrow tables and Parquet files of a report's cases, tidy scores and summary, and reading them back as frames.

Needs the ``[parquet]`` extra (pyarrow). A report has three tables (:data:`TABLES`):

- ``cases``: one row per case × query mode (:func:`~heta_nb.tables.cases_frame`): query,
  status, latency, error, answer, run unit, then one column per score name.
- ``scores``: one row per score (:func:`~heta_nb.tables.scores_frame`): the raw value, the
  number Heta counts (``numeric``), ``kind``, ``passed`` and ``skipped``.
- ``summary``: one row per query mode × metric, exactly the columns of
  :func:`~heta_nb.tables.summary_frame` (built from it): the one summary every view reads,
  ``status``, ``mean`` of the scored values over ``n``, ``ci_low``/``ci_high``, ``reason``,
  ``evaluator_errors``, Heta's own ``heta_mean``/``heta_n``...

Every table starts with the report's identity as columns: ``report_id``,
``knowledge_base_name`` and ``benchmark`` (``name:version:split``), dictionary-encoded
strings (one value per file costs next to nothing), so a query over many reports' files
(DuckDB's ``'reports/*/scores.parquet'``, a polars scan) groups by report instead of
averaging several reports together. :func:`read_parquet` returns them as categorical
columns; the identity is also in the schema's metadata (``heta_nb``), read back as
``frame.attrs["heta_nb"]``. (A ``cases`` table cannot be written for a report with a score
named like an identity column: its values are in the ``scores`` table.)

Columns otherwise keep their types: text as strings, ``status`` and ``kind`` as
dictionaries (pandas categories), counts as int64, numbers as float64, booleans as
(nullable) booleans. A column that mixes kinds (``scores.value``: numbers, bools and
text; a score column mixing text and numbers) is stored as JSON text (``large_string``,
with rows or without) and decoded by :func:`read_parquet`. No number is rounded: a score
column holding an integer beyond 2**53 is int64 when all its values are integers within
int64, else JSON text (an integer beyond int64, or ints mixed with floats), read back as
the exact Python ints; ``scores.value`` is JSON text, exact however large.

No number is null, in all three tables: a float that is NaN in the frame (a case without
that score, text's ``numeric``, a NaN score value, and in ``summary`` the ``mean`` and
interval of a row with no number, or an interval with too few values) is stored as
Parquet null, which SQL's ``avg``/``count`` and polars leave out, and reads back as NaN.
Why a summary row has no number is in its ``status`` (``"n/a"``, ``"errored"``,
``"skipped"``, ``"labels"``; ``"scored"`` when there is one, its ``n`` then 0) and
``reason`` (``""`` on scored rows) columns: a text column is never null.

Paths are local paths or fsspec URLs (``memory://``, ``s3://``...; ``file://`` is local).
Local files are written atomically, and only regular files are read (a FIFO or a device
is refused). Without ``overwrite=True`` no existing file is replaced: a local file is
created exclusively; on an fsspec file system the files are checked first and written
with fsspec's create mode where it has one.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from heta_nb._util.atomic import write_atomically, write_target
from heta_nb._util.fs import filesystem, read_regular_file, read_url
from heta_nb._util.optional import require
from heta_nb._util.unicode import valid_text
from heta_nb._version import __version__
from heta_nb.errors import StoreError
from heta_nb.model.io import local_path
from heta_nb.model.report import EvaluationReport
from heta_nb.store.fsspec_backend import is_local_filesystem
from heta_nb.tables.report import cases_frame, scores_frame, summary_frame

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

__all__ = ["IDENTITY_COLUMNS", "TABLES", "read_parquet", "to_arrow", "to_parquet"]

TABLES = ("cases", "scores", "summary")
"""The tables of a report: one row per case × mode (``cases_frame``), one per score
(``scores_frame``), one per mode × metric (``summary_frame``)."""
IDENTITY_COLUMNS = ("report_id", "knowledge_base_name", "benchmark")
"""The leading columns of every table: which report a row is of (``benchmark`` is ``name:version:split``)."""
_KEY = b"heta_nb"
_RAISE_LIMIT = "read_parquet(..., max_bytes={size})"


def _pyarrow(purpose: str) -> Any:
    return require("pyarrow", extra="parquet", purpose=purpose)


def _json_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)  # NaN / Infinity: Python's JSON reads them back
    return json.dumps(value, ensure_ascii=False)


def _score_values_as_json(frame: pd.DataFrame) -> Any:
    """The ``value`` column of a scores frame as JSON text, by kind, without a Python call per finite number or bool."""
    import numpy as np

    values = frame["value"].to_numpy(dtype=object)
    kinds = frame["kind"].astype(object).to_numpy()
    numeric = frame["numeric"].to_numpy(dtype=float)
    out = np.empty(len(values), dtype=object)
    flags = kinds == "bool"
    out[flags] = np.where(values[flags].astype(bool), "true", "false")
    plain = (kinds == "number") & np.isfinite(numeric)
    out[plain] = values[plain].astype(str)  # str() of an int or a finite float is its JSON
    rest = ~(flags | plain)
    out[rest] = [_json_value(v) for v in values[rest]]  # text, and NaN/Infinity as Python's JSON writes them
    return out


def _check_table(table: str) -> None:
    if table not in TABLES:
        raise ValueError(f"table must be one of {', '.join(map(repr, TABLES))}, got {table!r}")


def _frame(report: EvaluationReport, table: str) -> pd.DataFrame:
    _check_table(table)
    if table == "cases":
        return cases_frame(report)
    if table == "scores":
        return scores_frame(report)
    return summary_frame(report)


def _identity(report: EvaluationReport) -> dict[str, str]:
    return {
        "report_id": report.report_id,
        "knowledge_base_name": report.knowledge_base_name,
        "benchmark": report.benchmark.key,
    }


def _with_identity(frame: pd.DataFrame, identity: Mapping[str, str], table: str) -> pd.DataFrame:
    """``frame`` with the identity columns first, each a one-category categorical (an Arrow dictionary)."""
    import numpy as np
    import pandas as pd

    clash = [name for name in IDENTITY_COLUMNS if name in frame.columns]
    if clash:
        raise ValueError(
            f"the {table} table has a column {clash[0]!r}, the name of a column every table starts with "
            f"({', '.join(IDENTITY_COLUMNS)}); a score of that name is in the 'scores' table"
        )
    codes = np.zeros(len(frame), dtype=np.int8)
    for position, name in enumerate(IDENTITY_COLUMNS):
        frame.insert(position, name, pd.Categorical.from_codes(codes, categories=[identity[name]]))
    return frame


def to_arrow(report: EvaluationReport, table: str = "cases") -> pa.Table:
    """One table of ``report`` as a ``pyarrow.Table`` with typed columns.

    Args:
        report: The report.
        table: ``"cases"`` (:func:`~heta_nb.tables.cases_frame`), ``"scores"``
            (:func:`~heta_nb.tables.scores_frame`) or ``"summary"``
            (:func:`~heta_nb.tables.summary_frame`).

    Returns:
        The table: the identity columns :data:`IDENTITY_COLUMNS` (dictionary-encoded),
        then the frame's columns, NaN stored as null (see the module docstring). Its schema
        metadata ``heta_nb`` holds the report's identity and the columns stored as JSON text.

    Raises:
        ValueError: An unknown table; a ``cases`` table with a score named like an identity
            column; text Parquet cannot store (a lone surrogate).
    """
    pa = _pyarrow("report.to_arrow()")
    frame = _frame(report, table)
    confidence = frame.attrs.get("confidence")
    json_columns = []
    if table == "scores":
        frame["value"] = _score_values_as_json(frame)
        json_columns.append("value")
    for name in frame.columns:
        column = frame[name]
        if column.dtype != object or name in json_columns:
            continue
        present = [v for v in column if v is not None]
        if all(isinstance(v, str) for v in present):
            continue
        frame[name] = column.map(_json_value).astype(object)
        json_columns.append(str(name))
    identity = _identity(report)
    try:
        arrow = pa.Table.from_pandas(_with_identity(frame.copy(deep=False), identity, table), preserve_index=False)
    except UnicodeEncodeError:  # a lone surrogate: UTF-8 (so Arrow) cannot hold it; said, never silent
        frame, replaced = _valid_frame(frame)
        identity = {name: valid_text(value) for name, value in identity.items()}
        warnings.warn(
            f"report {valid_text(report.report_id)!r}: {replaced:,} text(s) of the {table} table held a lone "
            "surrogate, which UTF-8 cannot encode: written with U+FFFD (\ufffd) in its place",
            UserWarning,
            stacklevel=2,
        )
        arrow = pa.Table.from_pandas(_with_identity(frame, identity, table), preserve_index=False)
    for name in json_columns:  # one type, with rows or without (a 0-case report's column is all null)
        at = arrow.schema.get_field_index(name)
        arrow = arrow.set_column(at, pa.field(name, pa.large_string()), arrow.column(at).cast(pa.large_string()))
    meta: dict[str, Any] = {
        "table": table,
        **identity,
        "started_at": report.started_at,
        "json_columns": json_columns,
        "heta_nb_version": __version__,
    }
    if table == "summary" and confidence is not None:
        meta["confidence"] = confidence
    metadata = dict(arrow.schema.metadata or {})
    metadata[_KEY] = json.dumps(meta, ensure_ascii=False).encode("utf-8")
    return arrow.replace_schema_metadata(metadata)


def _valid_frame(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` with every lone surrogate of its text (values, categories, column names) as U+FFFD,
    and how many strings changed."""
    import pandas as pd

    changed = 0

    def valid(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, str):
            fixed = valid_text(value)
            changed += fixed is not value  # (valid_text returns the same str when nothing changed)
            return fixed
        return value

    out = {}
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.cat.rename_categories([valid(c) for c in column.cat.categories])
        elif column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
            column = pd.Series([valid(v) for v in column.astype(object)], index=frame.index, dtype=object)
        out[valid(name)] = column
    fixed = pd.DataFrame(out, index=frame.index)
    fixed.attrs.update(frame.attrs)
    return fixed, changed


class _Place:
    """A file or folder: on the local disk (atomic writes, regular files only) or on an fsspec file system."""

    def __init__(self, location: str | os.PathLike[str], *, fs: Any = None, url: str = "") -> None:
        self.fs = fs
        self.url = url
        if fs is not None:
            self.path = os.fspath(location)
            return
        text = os.fspath(location)
        local = local_path(text)
        if local is None:
            found, path = filesystem(text)
            if is_local_filesystem(found):
                local = Path(path)
            else:
                self.fs, self.path, self.url = found, path.rstrip("/") or path, text.rstrip("/") or text
                return
        self.path = os.fspath(local)

    def __str__(self) -> str:
        return self.url if self.fs is not None else self.path

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.path).suffix if self.fs is not None else Path(self.path).suffix

    def child(self, name: str) -> _Place:
        if self.fs is None:
            return _Place(Path(self.path) / name)
        return _Place(f"{self.path}/{name}", fs=self.fs, url=f"{self.url}/{name}")

    def result(self) -> Path | str:
        """What :func:`to_parquet` returns for this file: a ``Path``, or the URL."""
        return self.url if self.fs is not None else Path(self.path)

    def exists(self) -> bool:
        if self.fs is None:
            return os.path.lexists(self.path)
        return bool(self.fs.exists(self.path))

    def is_dir(self) -> bool:
        if self.fs is None:
            return os.path.isdir(self.path)
        return bool(self.fs.isdir(self.path))

    def write(self, data: bytes, *, exclusive: bool) -> None:
        if self.fs is None:
            try:
                write_atomically(self.path, data, exclusive=exclusive)
            except FileExistsError:  # created by another writer since the check
                raise _exists(self) from None
            return
        parent = self.path.rsplit("/", 1)[0]
        try:
            if parent and parent != self.path:
                self.fs.makedirs(parent, exist_ok=True)
            if not exclusive:
                self.fs.pipe_file(self.path, data)
                return
            try:
                self.fs.pipe_file(self.path, data, mode="create")
            except TypeError as exc:  # fsspec before 2025 has no create mode: checked just before
                if "mode" not in str(exc):
                    raise
                if self.fs.exists(self.path):
                    raise FileExistsError(self.path) from None
                self.fs.pipe_file(self.path, data)
        except FileExistsError:
            raise _exists(self) from None
        except OSError as exc:
            raise StoreError(f"{self}: cannot write ({exc})") from None

    def read(self, max_bytes: int | None) -> bytes:
        if self.fs is None:
            return read_regular_file(self.path, max_bytes=max_bytes, hint=_RAISE_LIMIT)
        return read_url(self.url, max_bytes=max_bytes, hint=_RAISE_LIMIT)


def _exists(place: _Place) -> FileExistsError:
    return FileExistsError(f"{place}: already exists; pass overwrite=True to replace it")


def to_parquet(
    report: EvaluationReport,
    path: str | os.PathLike[str],
    *,
    table: str | None = None,
    overwrite: bool = False,
) -> list[Path | str]:
    """Write the report's tables as Parquet: one file, or a folder of ``cases.parquet``,
    ``scores.parquet`` and ``summary.parquet``.

    Every table starts with the columns ``report_id``, ``knowledge_base_name`` and
    ``benchmark``, so files of many reports can be queried together (see the module
    docstring).

    Args:
        report: The report.
        path: A ``.parquet`` file (the ``cases`` table unless ``table`` says otherwise),
            or a folder (all three tables; created if missing). A local path, or an fsspec
            URL (``memory://``, ``s3://bucket/reports/one``...).
        table: ``"cases"``, ``"scores"`` or ``"summary"`` to write one table to ``path`` as a file.
        overwrite: Replace existing files (else ``FileExistsError``, and nothing is written).

    Returns:
        The files written: ``Path`` objects for local files, URLs for an fsspec target.

    Raises:
        FileExistsError: A file exists and ``overwrite`` is false.
        ValueError: See :func:`to_arrow`.
        StoreError: The fsspec file system failed.
    """
    pa = _pyarrow("report.to_parquet()")
    parquet = require("pyarrow.parquet", extra="parquet", purpose="report.to_parquet()")
    if table is not None:
        _check_table(table)
    target = _Place(path)
    if table is None and target.suffix.lower() != ".parquet":
        files = [(name, target.child(f"{name}.parquet")) for name in TABLES]
    else:
        files = [(table or "cases", target)]
    if not overwrite:
        for _, file in files:
            if file.exists():
                raise _exists(file)
    for _, file in files:  # a FIFO or a device among them: refused before any table is written
        if file.fs is None:
            write_target(file.path)
    blobs = []
    for name, _ in files:  # every table built before any is written: an error leaves no half folder
        sink = pa.BufferOutputStream()
        parquet.write_table(to_arrow(report, name), sink)
        blobs.append(sink.getvalue().to_pybytes())
    written: list[Path | str] = []
    for (_, file), data in zip(files, blobs):
        file.write(data, exclusive=not overwrite)
        written.append(file.result())
    return written


def _decoded(column: Any) -> Any:
    """A JSON text column as Python objects, one by one (``Series.map`` would make ints and floats
    one float64 column, rounding an integer beyond 2**53); missing (None, or a string dtype's NaN) is None."""
    import numpy as np

    out = np.empty(len(column), dtype=object)
    for at, text in enumerate(column.astype(object).tolist()):
        out[at] = json.loads(text) if isinstance(text, str) else None
    return out


def _read_one(place: _Place, parquet: Any, max_bytes: int | None) -> pd.DataFrame:
    pa = _pyarrow("heta_nb.read_parquet()")
    arrow = parquet.read_table(pa.BufferReader(place.read(max_bytes)))
    raw = (arrow.schema.metadata or {}).get(_KEY)
    identity: dict[str, Any] = {}
    if raw is not None:
        try:
            loaded = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"{place}: schema metadata 'heta_nb' is not JSON ({exc})") from None
        identity = dict(loaded) if isinstance(loaded, Mapping) else {}
    frame = arrow.to_pandas()
    json_columns = identity.get("json_columns", [])
    for name in json_columns if isinstance(json_columns, list) else []:
        if name in frame.columns:
            frame[name] = _decoded(frame[name])
    if identity:
        frame.attrs["heta_nb"] = dict(identity)
        if identity.get("table") == "summary" and isinstance(identity.get("confidence"), (int, float)):
            frame.attrs["confidence"] = identity["confidence"]
    return frame


def read_parquet(
    path: str | os.PathLike[str], table: str | None = None, *, max_bytes: int | None = None
) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Frames back from :func:`to_parquet`'s files, with the same columns and types.

    Args:
        path: A ``.parquet`` file, or a folder ``to_parquet`` wrote; a local path or an
            fsspec URL (``memory://``, ``s3://``...).
        table: With a folder, the one table to read (``"cases"``, ``"scores"`` or ``"summary"``).
        max_bytes: The largest file read (None: 4 GiB, or ``HETA_NB_MAX_BYTES``).

    Returns:
        A DataFrame for a file (or a folder and ``table``); for a folder alone, a dict
        ``{"cases": ..., "scores": ..., "summary": ...}`` of the tables it holds. Each
        frame is the table's frame (``cases_frame``...) after the identity columns
        ``report_id``, ``knowledge_base_name`` and ``benchmark`` (categoricals);
        ``frame.attrs["heta_nb"]`` has the report's identity.

    Raises:
        FileNotFoundError: Nothing at ``path``, or a folder without the tables.
        NotARegularFileError: A local path that is a FIFO, a device or a socket.
    """
    parquet = require("pyarrow.parquet", extra="parquet", purpose="heta_nb.read_parquet()")
    if table is not None:
        _check_table(table)
    source = _Place(path)
    if not source.exists():
        raise FileNotFoundError(f"{source}: no such file or folder")
    if not source.is_dir():
        return _read_one(source, parquet, max_bytes)
    names = [table] if table is not None else [n for n in TABLES if source.child(f"{n}.parquet").exists()]
    missing = [n for n in names if not source.child(f"{n}.parquet").exists()]
    if missing or not names:
        raise FileNotFoundError(
            f"{source}: no {' or '.join(f'{n}.parquet' for n in (missing or TABLES))} in this folder"
        )
    frames = {name: _read_one(source.child(f"{name}.parquet"), parquet, max_bytes) for name in names}
    return frames[table] if table is not None else frames
