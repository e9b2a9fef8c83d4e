"""Heta's EvaluationReport (the whole ``report.json``, schema_version "1"), its benchmark
manifest and the per-mode counts derived from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from heta_nb.model.case import EvaluationCaseResult, EvaluationError, EvaluationScore
from heta_nb.model.collect import SKIPPED, RowCollector, collect_rows
from heta_nb.model.fields import Choice, Items, JsonObject, Nested, NumberMapping, Text, TextList
from heta_nb.model.json import copy_json
from heta_nb.model.lazy import LazyResults, encode_report_text
from heta_nb.model.parse import paused_gc
from heta_nb.model.record import Record, RichDisplay, _json_equal, _raw_slot, cached_on, rich_display
from heta_nb.model.summary import MetricSummary, heta_score_summary, heta_summary_of_rows, summarize_metrics
from heta_nb.model.views import view

if TYPE_CHECKING:  # pragma: no cover - only for type checkers
    import os
    from pathlib import Path

    import pandas as pd
    import pyarrow as pa

    from heta_nb.model.columns import ReportColumns

__all__ = [
    "EVALUATION_SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "BenchmarkManifest",
    "EvaluationCaseResult",  # re-exported: its import path before the split (``case``)
    "EvaluationError",  # re-exported, as above
    "EvaluationReport",
    "EvaluationScore",  # re-exported, as above
    "ModeCounts",
]

EVALUATION_SCHEMA_VERSION = "1"
"""The report schema version this heta_nb writes (Heta 0.1.2's ``EVALUATION_SCHEMA_VERSION``)."""

SUPPORTED_SCHEMA_VERSIONS: tuple[str, ...] = ("1",)
"""Report schema versions this heta_nb can read."""

BUILD_SCOPES = ("corpus", "group", "case")


class BenchmarkManifest(Record):
    """Identity and citation metadata of one benchmark split."""

    __slots__ = ()

    name: Text[str] = Text("Benchmark name.")
    version: Text[str] = Text("Benchmark version.")
    split: Text[str] = Text("Split, e.g. ``test``.")
    task_type: Text[str] = Text("Free-form task type, e.g. ``multihop_qa``.")
    build_scope: Choice = Choice(
        "How KBs are built: ``corpus``, ``group`` or ``case``.", BUILD_SCOPES, default="corpus"
    )
    homepage: Text[str | None] = Text("Homepage URL.", optional=True)
    license: Text[str | None] = Text("License of the benchmark data.", optional=True)
    citation: Text[str | None] = Text("How to cite the benchmark.", optional=True)
    metadata: JsonObject = JsonObject("Free-form metadata.")

    def __init__(
        self,
        *,
        name: str,
        version: str,
        split: str,
        task_type: str,
        build_scope: str = "corpus",
        homepage: str | None = None,
        license: str | None = None,  # noqa: A002 - Heta's field name
        citation: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._assign(
            {
                "name": name,
                "version": version,
                "split": split,
                "task_type": task_type,
                "build_scope": build_scope,
                "homepage": homepage,
                "license": license,
                "citation": citation,
                "metadata": metadata,
            }
        )

    @property
    def key(self) -> str:
        """``name:version:split``, Heta's stable benchmark key."""
        return f"{self.name}:{self.version}:{self.split}"


@dataclass(frozen=True)
class ModeCounts:
    """How many results one query mode has, by outcome."""

    mode: str
    cases: int
    errors: int
    skipped_scores: int

    @property
    def ok(self) -> int:
        """Cases with a response."""
        return self.cases - self.errors


class EvaluationReport(RichDisplay, Record):
    """Everything one evaluation run recorded: which recipe, benchmark and modes, every
    case result, and the score summary. Immutable and traceable: it embeds both the
    recipe manifest and the knowledge-base manifest(s).
    """

    __slots__ = ()

    schema_version: Text[str] = Text('Report schema version (``"1"``).', default=EVALUATION_SCHEMA_VERSION)
    report_id: Text[str] = Text("Report id (Heta's default is ``eval_<32 hex>``).")
    report_key: Text[str | None] = Text("Object-store key the report was written to, or null.", optional=True)
    benchmark: Nested[BenchmarkManifest] = Nested("The benchmark manifest.", BenchmarkManifest)
    knowledge_base_name: Text[str] = Text("Base KB name passed to the run (also in multi-unit runs).")
    knowledge_base_manifest: JsonObject = JsonObject(
        'One KB manifest, or ``{"knowledge_bases": [...]}`` with one per run unit.', heta_safe=True
    )
    recipe_manifest: JsonObject = JsonObject("``recipe.manifest().to_dict()``.", heta_safe=True)
    query_modes: TextList = TextList("Query modes, in the caller's order.")
    score_summary: NumberMapping = NumberMapping("``{mode.score: mean}`` with Heta's semantics, sorted keys.")
    case_results: Items[EvaluationCaseResult] = Items(
        "Case results in run order (unit, then case, then mode).", EvaluationCaseResult
    )
    started_at: Text[str] = Text("ISO-8601 start time (UTC).")
    finished_at: Text[str] = Text("ISO-8601 time after the last query.")
    metadata: JsonObject = JsonObject("Run metadata (``benchmark_document_keys``, ``run_units``, ...).")

    def __init__(
        self,
        *,
        report_id: str,
        benchmark: BenchmarkManifest | Mapping[str, Any],
        knowledge_base_name: str,
        knowledge_base_manifest: Mapping[str, Any] | None = None,
        recipe_manifest: Mapping[str, Any] | None = None,
        query_modes: Sequence[str] = (),
        case_results: Iterable[EvaluationCaseResult | Mapping[str, Any]] = (),
        started_at: str,
        finished_at: str,
        score_summary: Mapping[str, float] | None = None,
        schema_version: str = EVALUATION_SCHEMA_VERSION,
        report_key: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        results = [EvaluationCaseResult.coerce(item) for item in case_results]
        if score_summary is None:
            score_summary = heta_score_summary(results)
        self._assign(
            {
                "schema_version": schema_version,
                "report_id": report_id,
                "report_key": report_key,
                "benchmark": benchmark,
                "knowledge_base_name": knowledge_base_name,
                "knowledge_base_manifest": knowledge_base_manifest,
                "recipe_manifest": recipe_manifest,
                "query_modes": query_modes,
                "score_summary": score_summary,
                "case_results": results,
                "started_at": started_at,
                "finished_at": finished_at,
                "metadata": metadata,
            }
        )

    def __repr__(self) -> str:
        return (
            f"EvaluationReport(report_id={self.report_id!r}, benchmark={self.benchmark.key!r}, "
            f"knowledge_base_name={self.knowledge_base_name!r}, query_modes={list(self.query_modes)!r}, "
            f"case_results={self.case_count})"
        )

    # -- a report read from a file: its case results stay JSON until opened -----------
    @classmethod
    def _lazily(cls, top: dict[str, Any]) -> EvaluationReport:
        """A report whose ``top["case_results"]`` is :class:`~heta_nb.model.lazy.LazyResults`."""
        obj = object.__new__(cls)
        object.__setattr__(obj, "_cache", {_LAZY: top})
        return obj

    @classmethod
    def _from_data(cls, data: dict[str, Any]) -> EvaluationReport:
        return cls._lazily(data) if type(data["case_results"]) is LazyResults else cls.from_raw(data)

    def _lazy_top(self) -> dict[str, Any] | None:
        """The JSON object of a lazily read report, its case results unopened; else None."""
        cache = self._cache
        top: dict[str, Any] | None = cache.get(_LAZY) if cache is not None else None
        return top

    def _lazy_data(self) -> dict[str, Any]:
        top = self._lazy_top()
        return top if top is not None else self.raw

    def _materialize(self) -> dict[str, Any]:
        top = self._lazy_top()
        if top is None:
            return super()._materialize()
        with paused_gc():  # a parse of every case result
            return {**top, "case_results": [result.raw for result in self.case_results]}

    def case_result_json(self, index: int) -> dict[str, Any]:
        """Case result ``index``'s JSON object (read only), without keeping it open.

        For a report read from a file, a result that was not opened is parsed now and
        not kept (``case_results[index].raw`` keeps it); views that show a few results
        of a large report read them so.
        """
        top = self._lazy_top()
        if top is None:
            found: dict[str, Any] = self.raw["case_results"][index]
            return found
        opened = self._cache.get("case_results") if self._cache is not None else None
        if opened is not None:
            try:
                return _raw_slot(opened[index])
            except AttributeError:
                pass
        loaded: dict[str, Any] = top["case_results"].load(index)
        return loaded

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, EvaluationReport)
        if self._lazy_top() is None and other._lazy_top() is None:
            return super().__eq__(other)
        mine, theirs = self._data(), other._data()
        if mine.keys() != theirs.keys() or self.case_count != other.case_count:
            return False
        for key, value in mine.items():
            if key != "case_results" and not (value == theirs[key] or _json_equal(value, theirs[key])):
                return False
        same_blobs = _blobs(mine) is not None and _blobs(mine) == _blobs(theirs)
        for index in range(0 if same_blobs else self.case_count):
            a, b = self.case_result_json(index), other.case_result_json(index)
            if not (a == b or _json_equal(a, b)):
                return False
        return True

    __hash__ = None

    def __reduce__(self) -> tuple[Any, ...]:
        top = self._lazy_top()
        return (EvaluationReport._lazily, (top,)) if top is not None else super().__reduce__()

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the serialized form (Heta's ``to_dict()`` shape)."""
        top = self._lazy_top()
        if top is None:
            return super().to_dict()
        copied: dict[str, Any] = {}
        for key, value in top.items():
            if key == "case_results":
                opened = self._cache.get("case_results") if self._cache is not None else None
                copied[key] = [
                    copy_json(self.case_result_json(i)) if opened is not None else value.load(i)
                    for i in range(len(value))
                ]
            else:
                copied[key] = copy_json(value)
        return copied

    def to_json(self) -> str:
        """Heta's compact JSON encoding of this report (the file's text, for a file Heta wrote)."""
        top = self._lazy_top()
        if top is None:
            return super().to_json()
        return encode_report_text(top, self.case_count, self.case_result_json)

    def without_results(self) -> EvaluationReport:
        """This report with no case results: its manifests, settings, summary and metadata.

        For views of the run rather than of its cases; cheap, as nothing is opened or copied.
        """
        return EvaluationReport.from_raw({**self._data(), "case_results": []})

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """The text and HTML views, rendered once per renderer and kept (the report is immutable)."""
        try:
            renderer: tuple[Any, ...] = (view("repr_mimebundle"), view("report_context"))
        except Exception:  # noqa: BLE001 - a repr must never raise
            return rich_display(self, include, exclude)
        key = f"view:{sorted(include) if include else None!r}:{sorted(exclude) if exclude else None!r}"
        kept = self._cache.get(key) if self._cache is not None else None
        if kept is not None and kept[0] == renderer:
            return dict(kept[1])
        bundle = rich_display(self, include, exclude)
        if self._cache is None:
            object.__setattr__(self, "_cache", {})
        self._cache[key] = (renderer, dict(bundle))  # type: ignore[index]
        return bundle

    def _repr_html_(self) -> str | None:
        """The HTML view alone (or a short note if it could not be rendered)."""
        return self._repr_mimebundle_(("text/html",)).get("text/html")

    # -- derived views ---------------------------------------------------------------
    @property
    def knowledge_base_manifests(self) -> tuple[Mapping[str, Any], ...]:
        """The KB manifest(s) as a tuple, whichever of Heta's two shapes was stored."""
        manifest = self.knowledge_base_manifest
        nested = manifest.get("knowledge_bases")
        if len(manifest) == 1 and isinstance(nested, tuple):
            return tuple(item for item in nested if isinstance(item, Mapping))
        return (manifest,) if manifest else ()

    @property
    def recipe_steps(self) -> tuple[Mapping[str, Any], ...]:
        """The recipe's steps (``index``, ``name``, ``type``, ...), in order."""
        steps = self.recipe_manifest.get("steps")
        return tuple(s for s in steps if isinstance(s, Mapping)) if isinstance(steps, tuple) else ()

    @property
    def duration_s(self) -> float | None:
        """Seconds from ``started_at`` to ``finished_at``; None if either does not parse."""
        try:
            start = datetime.fromisoformat(self.started_at)
            end = datetime.fromisoformat(self.finished_at)
            return (end - start).total_seconds()
        except (TypeError, ValueError):
            return None

    @property
    def metric_names(self) -> tuple[str, ...]:
        """Every score name, in first-seen (evaluator) order."""
        return tuple(self.rows().metric_index)

    @property
    def modes(self) -> tuple[str, ...]:
        """The query modes: ``query_modes`` de-duplicated, then any mode only seen in results."""
        found: tuple[str, ...] = cached_on(self, "modes", lambda: self.rows().modes(self._data()["query_modes"]))
        return found

    def rows(self) -> RowCollector:
        """What every view reads of the case results, one entry per result (pure Python).

        Collected while a file is read, else on first use, and kept (the report is
        immutable); :attr:`columns` is the same as numpy arrays.
        """
        found: RowCollector = cached_on(self, "rows", self._collect_rows)
        return found

    def _collect_rows(self) -> RowCollector:
        results = self._data()["case_results"]
        return results.rows if type(results) is LazyResults else collect_rows(results)

    @property
    def columns(self) -> ReportColumns:
        """The case results as numpy columns (:class:`~heta_nb.model.columns.ReportColumns`):
        built once, on first use, and kept; every view reads them. Imports numpy."""
        from heta_nb.model.columns import ReportColumns

        found: ReportColumns = cached_on(self, "columns", lambda: ReportColumns(self.rows(), self.modes))
        return found

    def mode_counts(self) -> dict[str, ModeCounts]:
        """Per mode: number of case results, errors and skipped scores."""
        rows = self.rows()
        names = list(rows.mode_index)
        cases = dict.fromkeys(self.modes, 0)
        errors = dict.fromkeys(self.modes, 0)
        skipped = dict.fromkeys(self.modes, 0)
        for code, count in Counter(rows.mode_code).items():
            cases[names[code]] = count
        for row in rows.messages:
            errors[names[rows.mode_code[row]]] += 1
        for entries in rows.metrics:
            for entry, flags in enumerate(entries.flags):
                if flags & SKIPPED:
                    skipped[names[rows.mode_code[entries.rows[entry]]]] += 1
        return {m: ModeCounts(m, cases[m], errors[m], skipped[m]) for m in self.modes}

    @property
    def case_count(self) -> int:
        """Number of case results (``len(case_results)`` without wrapping each one)."""
        return len(self._data()["case_results"])

    @property
    def error_count(self) -> int:
        """Number of case results that ended in an error."""
        return self.rows().error_count()

    def errors(self) -> Iterator[EvaluationCaseResult]:
        """The case results that ended in an error, in report order."""
        results = self.case_results
        return (results[row] for row in sorted(self.rows().messages))

    def case(self, case_id: str, mode: str | None = None) -> EvaluationCaseResult:
        """The result for ``case_id`` in ``mode`` (``mode`` may be omitted with one mode).

        Raises:
            KeyError: with a message listing what exists instead.
        """
        if mode is None:
            if len(self.modes) != 1:
                raise KeyError(f"case {case_id!r}: give a mode, one of {list(self.modes)}")
            mode = self.modes[0]
        index: dict[tuple[int, int], int] = cached_on(self, "case_index", self._case_index)
        rows = self.rows()
        case_code, mode_code = rows.case_index.get(case_id), rows.mode_index.get(mode)
        if case_code is None:
            raise KeyError(f"no case {case_id!r} in report {self.report_id!r}")
        position = index.get((case_code, mode_code if mode_code is not None else -1))
        if position is None:
            raise KeyError(f"case {case_id!r} has no result for mode {mode!r} (modes: {list(self.modes)})")
        return self.case_results[position]

    def _case_index(self) -> dict[tuple[int, int], int]:
        rows = self.rows()
        index: dict[tuple[int, int], int] = {}
        for position, key in enumerate(zip(rows.case_code, rows.mode_code)):
            index.setdefault(key, position)
        return index

    def recomputed_score_summary(self) -> dict[str, float]:
        """Heta's score summary recomputed from ``case_results`` (equals ``score_summary``
        for any report Heta or heta_nb wrote)."""
        return heta_summary_of_rows(self.rows())

    def metric_summaries(self, *, confidence: float = 0.95) -> list[MetricSummary]:
        """Per mode × metric: n, Heta's mean, errors, skipped, std and a confidence interval.

        Computed once per confidence level and kept (the report is immutable); the list
        returned is a fresh copy of the frozen summaries.
        """
        return list(
            cached_on(self, f"metric_summaries@{confidence!r}", lambda: summarize_metrics(self, confidence=confidence))
        )

    # -- pandas views (pandas is imported only when called) ------------------------
    def cases_frame(self) -> pd.DataFrame:
        """One row per case × mode; see :func:`heta_nb.tables.cases_frame`."""
        frame: pd.DataFrame = view("cases_frame")(self)
        return frame

    def scores_frame(self) -> pd.DataFrame:
        """Tidy scores, one row per score; see :func:`heta_nb.tables.scores_frame`."""
        frame: pd.DataFrame = view("scores_frame")(self)
        return frame

    def summary_frame(self) -> pd.DataFrame:
        """Mode × metric statistics; see :func:`heta_nb.tables.summary_frame`."""
        frame: pd.DataFrame = view("summary_frame")(self)
        return frame

    def reviews(self, *, store: Any = None, path: Any = None, history: bool = False) -> pd.DataFrame:
        """This report's human reviews (beside it, never in it); see :func:`heta_nb.reviews.reviews_frame`."""
        frame: pd.DataFrame = view("reviews")(self, store=store, path=path, history=history)
        return frame

    def review(self, reviewer: str, **options: Any) -> Any:
        """Review its cases in the explorer, keyboard first; see :func:`heta_nb.explorer.review`."""
        return view("review")(self, reviewer, **options)

    def explore(self, *, benchmark: Any = None, **filters: Any) -> Any:
        """Search, filter, sort and open this report's cases in a widget (an
        :class:`~heta_nb.explorer.Explorer`); see :func:`heta_nb.explore`."""
        return view("explore")(self, benchmark=benchmark, **filters)

    def to_arrow(self, table: str = "cases") -> pa.Table:
        """The cases (or ``table="scores"``, ``"summary"``) as a typed ``pyarrow.Table``, after the
        columns ``report_id``, ``knowledge_base_name`` and ``benchmark``; see
        :func:`heta_nb.tables.arrow.to_arrow`."""
        arrow: pa.Table = view("to_arrow")(self, table)
        return arrow

    def to_parquet(
        self, path: str | os.PathLike[str], *, table: str | None = None, overwrite: bool = False
    ) -> list[Path | str]:
        """Parquet file(s) of the cases, tidy scores and summary, each row with the report's
        identity, to a local path or an fsspec URL; see :func:`heta_nb.tables.arrow.to_parquet`."""
        written: list[Path | str] = view("to_parquet")(self, path, table=table, overwrite=overwrite)
        return written


_LAZY = "_lazy"
"""The key of a lazily read report's JSON object (case results unopened) in its ``_cache``."""


def _blobs(top: dict[str, Any]) -> list[bytes] | None:
    """The case results' JSON documents of a lazily read report's JSON object, else None."""
    results = top["case_results"]
    return results.blobs if type(results) is LazyResults else None
