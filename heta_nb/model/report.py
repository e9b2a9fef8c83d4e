"""Heta's EvaluationReport (the whole ``report.json``, schema_version "1"), its benchmark
manifest and the per-mode counts derived from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from heta_nb.model.case import EvaluationCaseResult, EvaluationError, EvaluationScore
from heta_nb.model.fields import Choice, Items, JsonObject, Nested, NumberMapping, Text, TextList
from heta_nb.model.record import Record, RichDisplay, cached_on
from heta_nb.model.summary import MetricSummary, heta_score_summary, summarize_metrics

if TYPE_CHECKING:  # pragma: no cover - only for type checkers
    import pandas as pd

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
            f"case_results={len(self.raw['case_results'])})"
        )

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

        def names() -> tuple[str, ...]:
            seen: dict[str, None] = {}
            for result in self.raw["case_results"]:
                for score in result["scores"]:
                    seen.setdefault(score["name"], None)
            return tuple(seen)

        metric_names: tuple[str, ...] = cached_on(self, "metric_names", names)
        return metric_names

    @property
    def modes(self) -> tuple[str, ...]:
        """The query modes: ``query_modes`` de-duplicated, then any mode only seen in results."""

        def modes() -> tuple[str, ...]:
            seen = dict.fromkeys(self.raw["query_modes"])
            for result in self.raw["case_results"]:
                seen.setdefault(result["query_mode"], None)
            return tuple(seen)

        found: tuple[str, ...] = cached_on(self, "modes", modes)
        return found

    def mode_counts(self) -> dict[str, ModeCounts]:
        """Per mode: number of case results, errors and skipped scores."""
        cases = dict.fromkeys(self.modes, 0)
        errors = dict.fromkeys(self.modes, 0)
        skipped = dict.fromkeys(self.modes, 0)
        for result in self.raw["case_results"]:
            mode = result["query_mode"]
            cases[mode] += 1
            if result["error"] is not None:
                errors[mode] += 1
            for score in result["scores"]:
                if score["metadata"].get("skipped") is True:
                    skipped[mode] += 1
        return {m: ModeCounts(m, cases[m], errors[m], skipped[m]) for m in self.modes}

    @property
    def case_count(self) -> int:
        """Number of case results (``len(case_results)`` without wrapping each one)."""
        return len(self.raw["case_results"])

    @property
    def error_count(self) -> int:
        """Number of case results that ended in an error."""
        return sum(1 for r in self.raw["case_results"] if r["error"] is not None)

    def errors(self) -> Iterator[EvaluationCaseResult]:
        """The case results that ended in an error, in report order."""
        return (r for r in self.case_results if not r.ok)

    def case(self, case_id: str, mode: str | None = None) -> EvaluationCaseResult:
        """The result for ``case_id`` in ``mode`` (``mode`` may be omitted with one mode).

        Raises:
            KeyError: with a message listing what exists instead.
        """
        if mode is None:
            if len(self.modes) != 1:
                raise KeyError(f"case {case_id!r}: give a mode, one of {list(self.modes)}")
            mode = self.modes[0]
        index: dict[tuple[str, str], int] = cached_on(self, "case_index", self._case_index)
        position = index.get((case_id, mode))
        if position is None:
            if not any(key[0] == case_id for key in index):
                raise KeyError(f"no case {case_id!r} in report {self.report_id!r}")
            raise KeyError(f"case {case_id!r} has no result for mode {mode!r} (modes: {list(self.modes)})")
        return self.case_results[position]

    def _case_index(self) -> dict[tuple[str, str], int]:
        index: dict[tuple[str, str], int] = {}
        for position, result in enumerate(self.raw["case_results"]):
            index.setdefault((result["case_id"], result["query_mode"]), position)
        return index

    def recomputed_score_summary(self) -> dict[str, float]:
        """Heta's score summary recomputed from ``case_results`` (equals ``score_summary``
        for any report Heta or heta_nb wrote)."""
        return heta_score_summary(self.case_results)

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
        from heta_nb.tables import cases_frame

        return cases_frame(self)

    def scores_frame(self) -> pd.DataFrame:
        """Tidy scores, one row per score; see :func:`heta_nb.tables.scores_frame`."""
        from heta_nb.tables import scores_frame

        return scores_frame(self)

    def summary_frame(self) -> pd.DataFrame:
        """Mode × metric statistics; see :func:`heta_nb.tables.summary_frame`."""
        from heta_nb.tables import summary_frame

        return summary_frame(self)
