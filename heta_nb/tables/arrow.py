"""Arrow tables and Parquet files of a report's cases and tidy scores, and reading them back as frames.

Needs the ``[parquet]`` extra (pyarrow). Columns keep their types: text as strings,
``status`` and ``kind`` as categories, scores as float64 or nullable booleans. A column
that mixes kinds (``scores.value``: numbers, bools and text; a score column mixing text and
numbers) is stored as JSON text and decoded by :func:`read_parquet`. The report's identity
is kept in the schema's metadata (``heta_nb``) and comes back as ``frame.attrs["heta_nb"]``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_nb._util.atomic import write_atomically
from heta_nb._util.optional import require
from heta_nb._version import __version__
from heta_nb.model.report import EvaluationReport
from heta_nb.tables.report import cases_frame, scores_frame

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

__all__ = ["TABLES", "read_parquet", "to_arrow", "to_parquet"]

TABLES = ("cases", "scores")
"""The tables of a report: one row per case × mode (``cases_frame``), one per score (``scores_frame``)."""
_KEY = b"heta_nb"


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


def _frame(report: EvaluationReport, table: str) -> pd.DataFrame:
    if table == "cases":
        return cases_frame(report)
    if table == "scores":
        return scores_frame(report)
    raise ValueError(f"table must be one of {', '.join(map(repr, TABLES))}, got {table!r}")


def to_arrow(report: EvaluationReport, table: str = "cases") -> pa.Table:
    """One table of ``report`` as a ``pyarrow.Table`` with typed columns.

    Args:
        report: The report.
        table: ``"cases"`` (:func:`~heta_nb.tables.cases_frame`) or ``"scores"``
            (:func:`~heta_nb.tables.scores_frame`).

    Returns:
        The table; its schema metadata ``heta_nb`` holds the report's identity and the
        columns stored as JSON text.
    """
    pa = _pyarrow("report.to_arrow()")
    frame = _frame(report, table)
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
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    identity = {
        "table": table,
        "report_id": report.report_id,
        "knowledge_base_name": report.knowledge_base_name,
        "benchmark": report.benchmark.key,
        "started_at": report.started_at,
        "json_columns": json_columns,
        "heta_nb_version": __version__,
    }
    metadata = dict(arrow.schema.metadata or {})
    metadata[_KEY] = json.dumps(identity, ensure_ascii=False).encode("utf-8")
    return arrow.replace_schema_metadata(metadata)


def to_parquet(
    report: EvaluationReport,
    path: str | os.PathLike[str],
    *,
    table: str | None = None,
    overwrite: bool = False,
) -> list[Path]:
    """Write the report's tables as Parquet: one file, or a folder with ``cases.parquet`` and ``scores.parquet``.

    Args:
        report: The report.
        path: A ``.parquet`` file (the ``cases`` table unless ``table`` says otherwise),
            or a folder (both tables; created if missing).
        table: ``"cases"`` or ``"scores"`` to write one table to ``path`` as a file.
        overwrite: Replace existing files (else ``FileExistsError``).

    Returns:
        The files written.
    """
    pa = _pyarrow("report.to_parquet()")
    parquet = require("pyarrow.parquet", extra="parquet", purpose="report.to_parquet()")
    target = Path(path)
    if table is None and target.suffix.lower() != ".parquet":
        files = [(name, target / f"{name}.parquet") for name in TABLES]
    else:
        files = [(table or "cases", target)]
    if not overwrite:
        for _, file in files:
            if file.exists():
                raise FileExistsError(f"{file}: already exists; pass overwrite=True to replace it")
    written = []
    for name, file in files:
        sink = pa.BufferOutputStream()
        parquet.write_table(to_arrow(report, name), sink)
        write_atomically(file, sink.getvalue().to_pybytes(), exclusive=not overwrite)
        written.append(file)
    return written


def _read_one(file: Path, parquet: Any) -> pd.DataFrame:
    arrow = parquet.read_table(file)
    raw = (arrow.schema.metadata or {}).get(_KEY)
    identity: dict[str, Any] = {}
    if raw is not None:
        try:
            loaded = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"{file}: schema metadata 'heta_nb' is not JSON ({exc})") from None
        identity = dict(loaded) if isinstance(loaded, Mapping) else {}
    frame = arrow.to_pandas()
    for name in identity.get("json_columns", []) or []:
        if name in frame.columns:
            frame[name] = frame[name].map(lambda v: None if v is None else json.loads(v)).astype(object)
    if identity:
        frame.attrs["heta_nb"] = dict(identity)
    return frame


def read_parquet(path: str | os.PathLike[str], table: str | None = None) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Frames back from :func:`to_parquet`'s files, with the same columns and types.

    Args:
        path: A ``.parquet`` file, or a folder ``to_parquet`` wrote.
        table: With a folder, the one table to read (``"cases"`` or ``"scores"``).

    Returns:
        A DataFrame for a file (or a folder and ``table``); for a folder alone, a dict
        ``{"cases": ..., "scores": ...}`` of the tables it holds. ``frame.attrs["heta_nb"]``
        has the report's identity.

    Raises:
        FileNotFoundError: Nothing at ``path``, or a folder without the tables.
    """
    parquet = require("pyarrow.parquet", extra="parquet", purpose="heta_nb.read_parquet()")
    source = Path(path)
    if table is not None and table not in TABLES:
        raise ValueError(f"table must be one of {', '.join(map(repr, TABLES))}, got {table!r}")
    if not source.exists():
        raise FileNotFoundError(f"{source}: no such file or folder")
    if source.is_file():
        return _read_one(source, parquet)
    names = [table] if table is not None else [n for n in TABLES if (source / f"{n}.parquet").is_file()]
    missing = [n for n in names if not (source / f"{n}.parquet").is_file()]
    if missing or not names:
        raise FileNotFoundError(
            f"{source}: no {' or '.join(f'{n}.parquet' for n in (missing or TABLES))} in this folder"
        )
    frames = {name: _read_one(source / f"{name}.parquet", parquet) for name in names}
    return frames[table] if table is not None else frames
