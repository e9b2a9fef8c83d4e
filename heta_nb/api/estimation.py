"""``heta_nb.estimate``: what judging a benchmark will take, from a small sample, before the run.

The sample is a real run (or rescore) of a stable subset of the cases (the ``shard=``
mechanism), with the same judges, model, cache and limits: its answers go into the
judges' cache, so the run that follows does not pay for them twice. Calls and tokens
per case are measured and scaled to every case × mode; the cost is those tokens at the
model's price (cached answers too: the estimate is what a fresh run costs); the time is
the slowest of the calls at the measured latency over the concurrency, and the rate
limits. A price or a latency that cannot be known reads "unknown", never 0.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from heta_nb.api.blocking import evaluate
from heta_nb.api.rescoring import rescore
from heta_nb.benchmark import Benchmark
from heta_nb.benchmark.load import load_benchmark
from heta_nb.llm_judges.costs import PriceTable
from heta_nb.llm_judges.limits import as_limits
from heta_nb.llm_judges.totals import judge_totals, money, overall
from heta_nb.model.report import EvaluationReport

__all__ = ["JudgeEstimate", "estimate"]


@dataclass(frozen=True)
class JudgeEstimate:
    """The expected judge calls, tokens, cost and minutes of a run, measured on a sample."""

    sampled: int
    """Case results judged in the sample."""
    total: int
    """Case results the run will judge (cases × modes)."""
    calls: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    """Dollars (None: no price for a model)."""
    minutes: float | None
    """At the limits and the sample's latency (None: the sample was all cached)."""
    models: str
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        cost = money(self.cost) if self.cost is not None else "unknown (no price: pass judge_prices=)"
        minutes = f"{self.minutes:,.1f} min" if self.minutes is not None else "unknown (the sample came from the cache)"
        lines = [
            f"judging {self.total:,} case results with {self.models} (measured on {self.sampled:,}):",
            f"  {self.calls:,} calls, {self.tokens_in:,} tokens in, {self.tokens_out:,} tokens out",
            f"  cost {cost}, time {minutes}",
            *(f"  note: {n}" for n in self.notes),
        ]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f"<pre class='heta-estimate'>{html.escape(str(self))}</pre>"


def estimate(
    benchmark: Any = None,
    *,
    evaluators: Sequence[Any],
    kb: Any = None,
    report: EvaluationReport | None = None,
    sample: int = 5,
    query_modes: Sequence[str] | str | None = None,
    **settings: Any,
) -> JudgeEstimate:
    """Estimate a judged run's calls, tokens, cost and minutes from ``sample`` cases.

    Args:
        benchmark: the benchmark to run (with ``kb=``), or, with ``report=``, the gold data
            of a rescore (optional).
        evaluators: the run's evaluators (its judges are what is estimated).
        kb: the knowledge base the run will query (the sample queries it).
        report: estimate a :func:`rescore` of this report instead (no KB queries).
        sample: about how many cases to measure (default 5).
        query_modes: the run's modes (``kb=`` only).
        **settings: ``judge_model``, ``judge_cache``, ``judge_limits``, ``judge_prices``...

    Returns:
        A :class:`JudgeEstimate` (its text says what is unknown and why).
    """
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise ValueError(f"sample must be a whole number >= 1, got {sample!r}")
    settings.setdefault("progress", False)
    settings.setdefault("store", None)
    started = time.perf_counter()
    if report is not None:
        cases = len({r["case_id"] for r in report.raw["case_results"]})
        total = len(report.raw["case_results"])
        shard = (0, max(1, math.ceil(cases / sample)))
        measured = rescore(report, evaluators, benchmark=benchmark, shard=shard, **settings)
    else:
        if kb is None or benchmark is None:
            raise TypeError("estimate() needs benchmark= and kb= (or report= to estimate a rescore)")
        modes = (
            ["full_text_search"]
            if query_modes is None
            else [query_modes]
            if isinstance(query_modes, str)
            else list(query_modes)
        )
        if not isinstance(benchmark, Benchmark):
            benchmark = load_benchmark(benchmark)
        cases = len(benchmark.cases)
        total = cases * len(modes)
        shard = (0, max(1, math.ceil(cases / sample)))
        measured = evaluate(benchmark, kb=kb, evaluators=list(evaluators), query_modes=modes, shard=shard, **settings)
    elapsed = time.perf_counter() - started
    return _scaled(measured, total, elapsed, settings)


def _scaled(measured: EvaluationReport, total: int, elapsed: float, settings: dict[str, Any]) -> JudgeEstimate:
    totals = judge_totals(measured)
    whole = overall(totals)
    sampled = len(measured.raw["case_results"])
    notes = []
    if sampled == 0 or not totals:
        return JudgeEstimate(sampled, total, 0, 0, 0, 0.0, 0.0, "no judge", ("no judge scored the sample",))
    scale = total / sampled
    prices = PriceTable(settings.get("judge_prices"))
    cost: float | None = 0.0
    for item in totals.values():
        price = prices.price(item.model or "")
        if price is None:
            cost = None
            notes.append(prices.why_unknown(item.model or ""))
            break
        part = price.cost(item.tokens_in, item.tokens_out)
        cost = None if part is None or cost is None else cost + part * scale
    limits = as_limits(settings.get("judge_limits"))
    calls = round(whole.calls * scale)
    minutes: float | None = None
    fresh = whole.calls - whole.cached_calls
    if fresh > 0:
        per_call = elapsed * min(limits.concurrency, fresh) / fresh
        bounds = [calls * per_call / limits.concurrency / 60]
        if limits.requests_per_minute:
            bounds.append(calls / limits.requests_per_minute)
        if limits.tokens_per_minute:
            bounds.append(whole.tokens_in * scale / limits.tokens_per_minute)
        minutes = max(bounds)
    else:
        notes.append("every call of the sample was answered from the cache: its latency says nothing")
    if whole.errors:
        notes.append(f"{whole.errors} judge score(s) of the sample failed (see the sample's scores)")
    return JudgeEstimate(
        sampled,
        total,
        calls,
        round(whole.tokens_in * scale),
        round(whole.tokens_out * scale),
        cost,
        minutes,
        whole.model or "?",
        tuple(notes),
    )
