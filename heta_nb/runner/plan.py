"""What a run will do, decided before its first query: :class:`RunTarget` and :class:`RunPlan`.

The target (KB, names, store) is checked against the world when the engine is made; the plan
(benchmark, shard, evaluators, recipe builder, results taken over by a resume) once it starts.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from heta_nb.errors import ReportExistsError
from heta_nb.evaluators import PreparedEvaluator, as_evaluator
from heta_nb.llm_judges import JudgeEvaluator
from heta_nb.model.report import BenchmarkManifest, EvaluationCaseResult
from heta_nb.runner.checkpoint import checkpoint_exists, read_checkpoint
from heta_nb.runner.config import RunConfig
from heta_nb.runner.errors import RunError
from heta_nb.runner.events import Event
from heta_nb.runner.kb import KnowledgeBaseAdapter, kb_attribute, registered_modes
from heta_nb.store import ReportStore, safe_slug

if TYPE_CHECKING:
    from heta_nb.runner.recipe import RecipeBuilder
    from heta_nb.runner.sources import BenchmarkSource

__all__ = [
    "CaseTask",
    "ResultKey",
    "RunPlan",
    "RunTarget",
    "check_header",
    "checkpoint_header",
    "make_plan",
    "prepared_evaluators",
    "shard_of",
]

ResultKey = tuple[int, int, int]
"""``(unit index, case index, mode index)``: a result's place in Heta's report order."""
CaseTask = tuple[int, Any, int, str]
"""``(case index, case, mode index, mode)``: one query still to run."""

_HETA_KB_NAME = re.compile(r"[A-Za-z0-9 _-]{1,80}")


def shard_of(unit_id: str, case_id: str, count: int) -> int:
    """The stable shard (0..count-1) a case belongs to: a hash of unit and case id."""
    digest = hashlib.sha1(f"{unit_id}\x00{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def _shard_report_id(report_id: str, shard: tuple[int, int] | None) -> str:
    return report_id if shard is None else f"{report_id}__shard-{shard[0]}-of-{shard[1]}"


@dataclass(frozen=True)
class RunTarget:
    """The KB a run queries and where its report goes, checked before anything runs."""

    kb_adapter: KnowledgeBaseAdapter | None
    """The ``kb=`` knowledge base, wrapped (None with ``recipe=``: a KB is built per unit)."""
    knowledge_base_name: str
    base_report_id: str
    """The report id without its shard suffix."""
    report_id: str
    store: ReportStore | None
    given_evaluators: list[PreparedEvaluator] | None
    """The ``evaluators=`` setting, prepared (None: the benchmark's own, known once it is loaded)."""

    @classmethod
    def resolve(cls, config: RunConfig) -> RunTarget:
        """Check ``config`` against the world: mode names, evaluators, the KB, names and store.

        Raises:
            RunError: a misspelled mode, duplicate evaluator names, a missing or bad name,
                or ``resume`` without a store.
            ReportExistsError: a report or checkpoint under this id (without resume or overwrite).
        """
        _check_mode_spelling(config.modes, registered_modes(config.kb, config.recipe, config.query_engines))
        given = prepared_evaluators(config.evaluators) if config.evaluators is not None else None
        adapter = KnowledgeBaseAdapter(config.kb, threads=config.concurrency) if config.kb is not None else None
        base = config.knowledge_base_name or (adapter.name if adapter else None)
        if base is None and config.kb is not None:
            base = kb_attribute(config.kb, "__name__")
        if not isinstance(base, str) or not base.strip():
            raise RunError("pass knowledge_base_name= (the KB has no name to use)")
        name = base.strip()
        if config.recipe is not None and not _HETA_KB_NAME.fullmatch(name):
            # KnowledgeBase.create refuses these, but only after the documents were written
            raise RunError(
                f"knowledge_base_name {name!r}: Heta allows at most 80 letters, digits, "
                "spaces, '_' and '-' for a knowledge base built from a recipe"
            )
        base_report_id = (config.report_id or f"eval_{uuid.uuid4().hex}").strip()
        report_id = _shard_report_id(base_report_id, config.shard)
        store = _store_from(config)
        if store is not None:
            store.check_usable()
            safe_slug(name, "knowledge_base_name")
            safe_slug(report_id, "report_id")
            if not config.resume and not config.overwrite:
                if store.exists(name, report_id):
                    raise ReportExistsError(
                        f"{store.location}: a report {report_id!r} for {name!r} exists; "
                        "pass resume=True to finish it, overwrite=True to replace it, or another report_id"
                    )
                if checkpoint_exists(store, name, report_id):  # a killed run
                    raise ReportExistsError(
                        f"{store.location}: an unfinished run of report {report_id!r} for "
                        f"{name!r} left a checkpoint; pass resume=True to finish it, "
                        "overwrite=True to discard it, or another report_id"
                    )
        elif config.resume:
            raise RunError("resume=True needs a store (the checkpoint lives next to the report)")
        return cls(adapter, name, base_report_id, report_id, store, given)


def _store_from(config: RunConfig) -> ReportStore | None:
    value = config.store
    if value is None:
        return None
    if isinstance(value, str) and value == "auto":
        objects = None
        if config.recipe is not None:
            objects = getattr(getattr(config.recipe, "stores", None), "objects", None)
        elif config.kb is not None:
            recipe = kb_attribute(config.kb, "recipe")
            stores = kb_attribute(recipe, "stores", owner="the knowledge base's recipe")
            objects = kb_attribute(stores, "objects", owner="the knowledge base's recipe stores")
        return ReportStore(objects) if objects is not None else None
    return ReportStore(value)


def _check_mode_spelling(modes: Sequence[str], known: frozenset[str] | None) -> None:
    """Refuse a mode that looks like a misspelling of one the Heta registry knows.

    Such a mode would fail on every query, after the KB was built; a name close to a
    registered one is almost surely a typo. Other unregistered modes are warned about
    and their cases recorded as errors, as Heta does.
    """
    if not known:
        return
    for mode in modes:
        if mode in known:
            continue
        close = difflib.get_close_matches(mode, sorted(known), n=1, cutoff=0.8)
        if close:
            raise RunError(
                f"query_modes: {mode!r} is not a registered query mode; did you mean {close[0]!r}? "
                f"(registered: {', '.join(sorted(known))})"
            )


def prepared_evaluators(chosen: Sequence[Any]) -> list[PreparedEvaluator]:
    """The evaluators as the case loop calls them; their names must be unique.

    One evaluator given alone (a name, a function, an object) counts as a list of one.
    """
    if isinstance(chosen, str) or not hasattr(chosen, "__iter__"):
        chosen = [chosen]
    prepared = [PreparedEvaluator(_own_copy(as_evaluator(e))) for e in chosen]
    names = [e.name for e in prepared]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise RunError(f"evaluator names must be unique (they are the report's score names): {duplicates}")
    return prepared


def _own_copy(evaluator: Any) -> Any:
    """An LLM judge copied, so that the run binds its own copy to its session (a judge object
    may serve two runs at once, in a sweep); any other evaluator as it is."""
    return copy.copy(evaluator) if isinstance(evaluator, JudgeEvaluator) else evaluator


@dataclass(frozen=True)
class RunPlan:
    """The loaded benchmark and the work left, made by :func:`make_plan` when the run starts."""

    source: BenchmarkSource
    cases_by_unit: list[list[tuple[int, Any]]]
    """Per unit, ``(position in the unit, case)``: positions are kept through sharding,
    so shard reports merge back into the order of a single run."""
    evaluators: list[PreparedEvaluator]
    builder: RecipeBuilder | None
    """With ``recipe=``: writes each unit's documents and builds its KB."""
    pending: list[list[CaseTask]]
    """Per unit, the queries still to run."""
    resumed: dict[ResultKey, EvaluationCaseResult]
    """Results taken over from the checkpoint (or stored report) of a resumed run."""
    total: int
    """Case × mode results the report has when complete (resumed ones included)."""
    started_at: str
    """When the run started (a resumed run keeps its first start)."""
    header: dict[str, Any]
    """The checkpoint's header: the settings a resume must match."""

    @property
    def manifest(self) -> BenchmarkManifest:
        """The benchmark's manifest."""
        return self.source.manifest

    @property
    def units(self) -> tuple[Any, ...]:
        """The benchmark's run units."""
        return self.source.units


async def make_plan(
    config: RunConfig,
    target: RunTarget,
    *,
    started_at: str,
    warn: Callable[[str, str], None],
    builder_events: Callable[[Event], None],
    clock: Callable[[], float],
) -> RunPlan:
    """Load the benchmark and decide every query of the run (see :class:`RunPlan`).

    Args:
        config: the run's settings.
        target: the run's KB, names and store.
        started_at: the run's start time (kept unless a resumed checkpoint has one).
        warn: records and emits a warning (``code``, ``message``).
        builder_events: the recipe builder's event sink.
        clock: seconds since the run started.

    Returns:
        The plan.

    Raises:
        RunError: a resume whose checkpoint or report has other settings.
    """
    from heta_nb.runner.sources import load_source

    source = await load_source(config.benchmark, workspace=config.workspace)
    units = source.units
    cases_by_unit = [list(enumerate(source.unit_cases(unit))) for unit in units]
    if config.shard is not None:
        index, count = config.shard
        cases_by_unit = [
            [(i, case) for i, case in cases if shard_of(unit.unit_id, case.case_id, count) == index]
            for unit, cases in zip(units, cases_by_unit)
        ]
    evaluators = target.given_evaluators
    if evaluators is None:  # the benchmark's own, known once it is loaded
        evaluators = prepared_evaluators(source.evaluators)
    if target.kb_adapter is not None:
        available = target.kb_adapter.available_modes
        if available is not None:
            for mode in config.modes:
                if mode not in available:
                    warn(
                        "unknown_mode",
                        f"mode {mode!r} is not available in this KB (available: {', '.join(sorted(available))}); "
                        "its cases will be recorded as errors",
                    )
    if config.lint:
        from heta_nb.benchmark.lint import lint_benchmark

        for issue in lint_benchmark(source.cases, [e.original for e in evaluators], manifest=source.manifest):
            warn(issue.code, issue.message)
    builder = None
    if config.recipe is not None:
        from heta_nb.runner.recipe import RecipeBuilder

        builder = RecipeBuilder(
            config.recipe, emit=builder_events, clock=clock, query_engines=config.query_engines, reuse=config.reuse_kb
        )
        builder.raw_keys(source.manifest, source.documents)  # refuse unsafe keys before any write
    header = checkpoint_header(config, target, source.manifest, evaluators, started_at)
    # resume: take over finished results from the checkpoint
    taken: dict[tuple[str, str, str], EvaluationCaseResult] = {}
    if target.store is not None and config.resume:
        checkpoint = read_checkpoint(target.store, target.knowledge_base_name, target.report_id)
        if checkpoint is not None:
            check_header(checkpoint.header, header, target.report_id)
            taken = checkpoint.results
            if checkpoint.header.get("started_at"):
                started_at = str(checkpoint.header["started_at"])
                header["started_at"] = started_at
            if checkpoint.skipped_lines:
                warn(
                    "checkpoint_damaged",
                    f"{checkpoint.skipped_lines} damaged checkpoint line(s) ignored; those cases run again",
                )
        else:
            taken = _results_from_partial_report(target, header)
    resumed: dict[ResultKey, EvaluationCaseResult] = {}
    pending: list[list[CaseTask]] = []
    total = 0
    mode_index = {m: i for i, m in enumerate(config.modes)}
    for unit_index, (unit, cases) in enumerate(zip(units, cases_by_unit)):
        unit_pending = []
        for case_index, case in cases:
            for mode in config.modes:
                total += 1
                done = taken.get((unit.unit_id, case.case_id, mode))
                if done is not None:
                    resumed[(unit_index, case_index, mode_index[mode])] = done
                else:
                    unit_pending.append((case_index, case, mode_index[mode], mode))
        pending.append(unit_pending)
    return RunPlan(source, cases_by_unit, evaluators, builder, pending, resumed, total, started_at, header)


def checkpoint_header(
    config: RunConfig,
    target: RunTarget,
    manifest: BenchmarkManifest,
    evaluators: Sequence[PreparedEvaluator],
    started_at: str,
) -> dict[str, Any]:
    """The checkpoint's first line: the run's identity and the settings a resume must match."""
    return {
        "report_id": target.report_id,
        "knowledge_base_name": target.knowledge_base_name,
        "benchmark": manifest.key,
        "modes": list(config.modes),
        "evaluators": [e.name for e in evaluators],
        "top_k": config.top_k,
        "query_options": config.recorded_options,
        "trace": config.trace,
        "shard": list(config.shard) if config.shard else None,
        "started_at": started_at,
    }


def check_header(
    header: Mapping[str, Any], mine: Mapping[str, Any], report_id: str, source: str = "checkpoint"
) -> None:
    """Refuse to resume a run whose ``header`` (from its ``source``) has other settings than ``mine``."""
    for key in ("benchmark", "modes", "evaluators", "top_k", "query_options", "trace", "shard"):
        if key in header and header[key] != mine[key]:  # (older checkpoints lack query_options and trace)
            raise RunError(
                f"cannot resume report {report_id!r}: its {source} has {key}={header[key]!r}, "
                f"this run has {mine[key]!r} (use a new report_id, or overwrite=True without resume)"
            )


def _results_from_partial_report(
    target: RunTarget, mine: Mapping[str, Any]
) -> dict[tuple[str, str, str], EvaluationCaseResult]:
    """A report whose checkpoint is gone (cancelled, or complete) still holds its finished cases.

    It must come from the same run settings, as a checkpoint must: resuming a report
    with other modes or evaluators would replace it with a mix of both.
    """
    store = target.store
    assert store is not None
    if not store.exists(target.knowledge_base_name, target.report_id):
        return {}
    report = store.load(target.knowledge_base_name, target.report_id)
    recorded = report.metadata.get("heta_nb")
    settings = recorded if isinstance(recorded, Mapping) else {}
    header: dict[str, Any] = {"benchmark": report.benchmark.key, "modes": list(report.query_modes)}
    if isinstance(settings.get("evaluators"), (list, tuple)):
        header["evaluators"] = list(settings["evaluators"])
    for key in ("top_k", "query_options", "trace"):
        if key in settings:
            header[key] = settings[key]
    if "shard" in settings:
        shard = settings["shard"]
        header["shard"] = [shard.get("index"), shard.get("count")] if isinstance(shard, Mapping) else None
    check_header(header, mine, target.report_id, "stored report")
    return {(r.unit_id or "corpus", r.case_id, r.query_mode): r for r in report.case_results}
