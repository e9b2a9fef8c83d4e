"""A run's judges get their sessions: the run's model (or their own), one cache, shared limits.

:func:`bind_judges` is called once per run with the run's ``judge_*`` settings. Judges
that call one model share one :class:`JudgeSession`, so the concurrency, rate limits and
``max_cost`` hold for the whole run. :func:`judges_record` is what the report keeps of
them (``metadata.heta_nb.judges``): each judge's kind, model, template and versions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heta_nb.llm_judges.base import JudgeEvaluator
from heta_nb.llm_judges.cache import CACHE_MODES, JudgeCache, default_cache_folder
from heta_nb.llm_judges.costs import PriceTable
from heta_nb.llm_judges.limits import JudgeLimits, as_limits
from heta_nb.llm_judges.models import JudgeModel, as_judge_model
from heta_nb.llm_judges.session import JudgeSession

__all__ = ["JudgeSettings", "bind_judges", "judge_difference", "judges_of", "judges_record", "resolve_cache"]


@dataclass(frozen=True)
class JudgeSettings:
    """A run's ``judge_*`` settings, checked."""

    model: JudgeModel | None = None
    cache: Any = "auto"
    limits: JudgeLimits = JudgeLimits()
    prices: Mapping[str, Any] | None = None
    max_cost: float | None = None
    repeats: int = 1

    @classmethod
    def make(
        cls,
        *,
        model: Any = None,
        cache: Any = "auto",
        limits: Any = None,
        prices: Mapping[str, Any] | None = None,
        max_cost: float | None = None,
        repeats: int = 1,
    ) -> JudgeSettings:
        """Check the settings (a bad one raises ValueError or TypeError naming it)."""
        if max_cost is not None and (
            isinstance(max_cost, bool) or not isinstance(max_cost, (int, float)) or max_cost <= 0
        ):
            raise ValueError(f"max_cost must be a number of dollars > 0, got {max_cost!r}")
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats must be a whole number >= 1, got {repeats!r}")
        if not (
            cache is None
            or cache is False
            or cache == "auto"
            or cache in CACHE_MODES
            or isinstance(cache, (str, os.PathLike, JudgeCache))
        ):
            raise TypeError(
                f"judge_cache must be a folder, 'replay', 'refresh', a JudgeCache or None, not {type(cache).__name__}"
            )
        PriceTable(prices)  # (checks the table)
        return cls(as_judge_model(model), cache, as_limits(limits), prices, max_cost, repeats)


def judges_of(evaluators: Iterable[Any]) -> list[JudgeEvaluator]:
    """The LLM judges among a run's evaluators (prepared ones' ``original`` too)."""
    found = []
    for evaluator in evaluators:
        original = getattr(evaluator, "original", evaluator)
        if isinstance(original, JudgeEvaluator):
            found.append(original)
    return found


def resolve_cache(cache: Any, store_root: str | os.PathLike[str] | None) -> JudgeCache | None:
    """``judge_cache=`` as a cache: a folder, ``"auto"``/``"replay"``/``"refresh"`` (the default
    folder beside the store), a :class:`JudgeCache`, or None/False (no cache)."""
    if cache is None or cache is False:
        return None
    if isinstance(cache, JudgeCache):
        return cache
    if cache == "auto":
        return JudgeCache(default_cache_folder(store_root))
    if cache in ("replay", "refresh", "use"):
        return JudgeCache(default_cache_folder(store_root), mode=cache)
    return JudgeCache(Path(cache))


def bind_judges(
    evaluators: Iterable[Any],
    settings: JudgeSettings,
    *,
    store_root: str | os.PathLike[str] | None = None,
    on_exhausted: Callable[[str], None] | None = None,
) -> list[JudgeSession]:
    """Give each judge its session; the sessions (one per model).

    Raises:
        ValueError: a judge with no model (neither its own nor ``judge_model=``), or
            ``max_cost`` for a model with no known price.
    """
    judges = judges_of(evaluators)
    if not judges:
        return []
    cache = resolve_cache(settings.cache, store_root)
    prices = PriceTable(settings.prices)
    sessions: dict[str, JudgeSession] = {}
    for judge in judges:
        model = judge.model or settings.model
        if model is None:
            raise ValueError(
                f"judge {judge.name!r} has no model: pass judge_model= (Heta's LanguageModel, or a function "
                "from prompt to text), or model= to the judge"
            )
        key = repr(sorted(model.identity.items(), key=lambda item: item[0]))
        session = sessions.get(key)
        if session is None:
            session = JudgeSession(
                model, cache, settings.limits, prices, max_cost=settings.max_cost, on_exhausted=on_exhausted
            )
            sessions[key] = session
        judge.bind(session, settings.repeats)
    return list(sessions.values())


def judges_record(evaluators: Iterable[Any]) -> dict[str, Any]:
    """``{score name: judge.describe()}`` of a run's judges (the report's ``metadata.heta_nb.judges``)."""
    return {judge.name: judge.describe() for judge in judges_of(evaluators)}


def judge_difference(first: Any, second: Any, metric: str) -> str:
    """Why ``metric`` means different things in two reports' ``metadata.heta_nb.judges``, or ``""``.

    ``"judge differs: model 'a' vs 'b'"`` (or the template, or its settings); also when one
    report's metric is a judge and the other's is not. Two reports whose metric is no judge
    in either, or the same judge, give ``""``.
    """
    first_judge = _judge_of(first, metric)
    second_judge = _judge_of(second, metric)
    if first_judge is None and second_judge is None:
        return ""
    if first_judge is None or second_judge is None:
        return "judge differs: a language model's verdict in one report, another evaluator in the other"
    if first_judge.get("version") == second_judge.get("version"):
        return ""
    for field_name, label in (("model", "model"), ("template_version", "prompt template"), ("kind", "judge")):
        a, b = first_judge.get(field_name), second_judge.get(field_name)
        if a != b:
            return f"judge differs: {label} {a!r} vs {b!r}"
    changed = sorted(k for k in set(first_judge) | set(second_judge) if first_judge.get(k) != second_judge.get(k))
    changed = [k for k in changed if k != "version"]
    versions = f"version {first_judge.get('version')!r} vs {second_judge.get('version')!r}"
    return f"judge differs: {', '.join(changed) or 'its settings'} changed ({versions})"


def _judge_of(metadata: Any, metric: str) -> Mapping[str, Any] | None:
    """The judge record of ``metric`` in a report's metadata (the report itself, or its ``metadata``)."""
    metadata = getattr(metadata, "metadata", metadata)
    heta_nb = metadata.get("heta_nb") if isinstance(metadata, Mapping) else None
    judges = heta_nb.get("judges") if isinstance(heta_nb, Mapping) else None
    found = judges.get(metric) if isinstance(judges, Mapping) else None
    return found if isinstance(found, Mapping) else None
