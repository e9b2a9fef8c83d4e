"""One case as compact JSON: what the explorer's case panel shows, in the notebook and in a page.

The kernel sends it for the case a user opens; a standalone page embeds it for every case.
Either way the one panel (``assets/explorer.js``) builds it with ``textContent``, never
markup: the query, the expected answers and evidence, the answer, the retrieved chunks
marked relevant / not relevant / not judged (and why), citations, every score with its
metadata (n/a where the mode cannot produce it), the error and the trace, the run's facts.
A comparison's case is both systems' cases and the metrics' deltas
(:func:`pair_case_data`). Texts are cut (:class:`CaseDataLimits`) so a page stays smaller
than the report.json it comes from.

Keys (short: a page holds one per case): ``q`` query, ``x`` expected (``a`` answers,
``ev`` evidence ``[reference, locator, text, grade]``, ``l`` labels), ``f`` facts
``[latency, query ms, attempts, retries]``, ``a`` answer (None: the mode returns results
only; absent: no response), ``e`` error ``[type, message, traceback tail, facts]``, ``s`` scores
``[name, text, class, metadata, n/a reason]`` (class ``v`` number, ``t``/``f`` bool, ``s``
skipped, ``e`` evaluator error, ``x`` text, ``n`` n/a), ``r`` results ``[id, score, mark,
source, text, why]`` (mark ``r``/``n``/``u``; a not-judged result's why is the case's ``uw``),
``rn`` results in all, ``c`` citations, ``t`` trace events, ``tn`` events in all, ``j`` the
LLM judges' blocks (their verdicts, claims and the results they cite, model, usage and
cost: :mod:`heta_nb.explorer.judge_data`; a judge score's own metadata text in ``s`` is
then just its reason).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from heta_nb._util.text import shorten

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    orjson = None  # type: ignore[assignment]
from heta_nb.evaluators.judge import MARK_CODES, judge_results
from heta_nb.explorer.judge_data import is_judge_score, judge_block, judge_reason
from heta_nb.render.context.formatting import as_mapping, describe, format_ms
from heta_nb.render.env import format_number

__all__ = [
    "OPEN_CASE_LIMITS",
    "CaseDataLimits",
    "benchmark_case",
    "case_data",
    "expected_data",
    "pair_case_data",
    "run_facts",
]


@dataclass(frozen=True)
class CaseDataLimits:
    """How much of one case the embedded data keeps."""

    text_chars: int = 600
    """Characters of the query, answer and error message."""
    result_chars: int = 240
    """Characters of each retrieved chunk."""
    results: int = 5
    """Retrieved chunks per case result."""
    citations: int = 5
    """Citations per case result."""
    trace_events: int = 12
    """Trace events per case result."""
    meta_chars: int = 160
    """Characters of each score's (and event's) metadata."""
    traceback_chars: int = 1200
    """Last characters of an error's traceback."""
    claims: int = 20
    """Claims (and judged chunks) per LLM judge score; a case's judges share twice as many."""
    claim_chars: int = 240
    """Characters of each claim, verdict reason and judge reason."""


OPEN_CASE_LIMITS = CaseDataLimits(
    text_chars=1500,
    result_chars=1200,
    results=20,
    citations=20,
    trace_events=50,
    meta_chars=300,
    traceback_chars=8000,
    claims=50,
    claim_chars=600,
)
"""How much of the open case the kernel sends (a page embeds less of every case)."""

_MAX_JUDGES = 20
"""LLM judge blocks per case result."""


def benchmark_case(benchmark: Any, case_id: str) -> Any:
    """The benchmark's case ``case_id``, or None (no benchmark, or it lacks the case)."""
    if benchmark is None:
        return None
    lookup = getattr(benchmark, "case", None)
    if callable(lookup):
        try:
            return lookup(case_id)
        except (KeyError, LookupError):
            return None
    return next((c for c in getattr(benchmark, "cases", ()) if c.case_id == case_id), None)


def _marks(data: Mapping[str, Any], gold: Any, limit: int) -> list[tuple[str, str]]:
    """``(mark, why)`` of each of the first results: ``r`` (relevant), ``n`` (not relevant) or
    ``u`` (not judged), by the explorer's rule (:func:`~heta_nb.evaluators.judge.judge_results`):
    with the benchmark's case, Heta's evidence rule and the graded document judgements; without
    it, the evaluators' matched ids, every other result not judged."""
    return [(MARK_CODES[j.mark], shorten(j.why, 160)) for j in judge_results(data, gold, limit)]


def run_facts(data: Mapping[str, Any]) -> list[str]:
    """``[latency, query ms, attempts, retries]`` of a case result, as text (``""`` where unknown)."""
    run = as_mapping(as_mapping(data.get("metadata")).get("heta_nb"))
    error = as_mapping(data.get("error"))
    attempts = run.get("attempts")
    if attempts is None:
        attempts = as_mapping(error.get("metadata")).get("attempts")
    count = attempts if isinstance(attempts, int) and not isinstance(attempts, bool) else None
    query_ms = run.get("query_ms")
    return [
        format_ms(data.get("latency_ms")),
        format_ms(query_ms) if isinstance(query_ms, (int, float)) and not isinstance(query_ms, bool) else "",
        f"{count:,}" if count is not None else "",
        f"{max(count - 1, 0):,}" if count is not None else "",
    ]


def _source(result: Mapping[str, Any]) -> str:
    source = result.get("source")
    if type(source) is not dict:
        source = as_mapping(source)
    metadata = result.get("metadata")
    if type(metadata) is not dict:
        metadata = as_mapping(metadata)
    key = source.get("object_key") or metadata.get("source_key") or source.get("document_id") or ""
    chunk = source.get("chunk_index", metadata.get("chunk_index"))
    return _source_text(key if type(key) is str else str(key), chunk if type(chunk) is int else None)


@functools.lru_cache(maxsize=65_536)
def _source_text(key: str, chunk: int | None) -> str:
    """A result's file name (and chunk), by its raw key (the same chunks recur across cases)."""
    return shorten(key.rsplit("/", 1)[-1], 60) + ("" if chunk is None else f" · chunk {chunk}")


def _score(score: Mapping[str, Any], limits: CaseDataLimits, not_applicable: Mapping[str, str]) -> list[Any]:
    value = score.get("value")
    metadata = score.get("metadata")
    if type(metadata) is not dict:
        metadata = as_mapping(metadata)
    name = score.get("name")
    reason = not_applicable.get(name) if type(name) is str and not_applicable else None
    if reason:
        shown = format_number(value) if isinstance(value, (int, float)) else shorten(value, 40)
        meta = _described_metadata(metadata, limits.meta_chars) if metadata else ""
        return [_name(name), "n/a", "n", meta, f"{reason} (Heta scores it {shown})"]
    if metadata and metadata.get("skipped") is True:
        reason = metadata.get("reason")
        shown = format_number(value) if isinstance(value, (int, float)) else shorten(value, 40)
        why = f"skipped: {shorten(reason, limits.meta_chars)}" if isinstance(reason, str) and reason else "skipped"
        return [_name(name), "skipped", "s", f"{why} (Heta counts it as {shown})"]
    elif type(value) is float or type(value) is int:  # (exact types first: a bool is not an int here)
        text, cls = format_number(value), "v"
    elif isinstance(value, bool):
        text, cls = ("✓ true", "t") if value else ("✗ false", "f")
    elif isinstance(value, (int, float)):
        text, cls = format_number(value), "v"
    elif isinstance(metadata.get("error"), Mapping):
        error = metadata["error"]
        kind = error.get("type") or error.get("error_type") or "error"
        return [
            _name(name),
            "error",
            "e",
            f"evaluator error {shorten(kind, 80)}: {shorten(error.get('message'), limits.meta_chars)}",
        ]
    else:
        text, cls = shorten(value, 40), "x"
    if is_judge_score(score):  # (the judge's block says the rest)
        return [_name(name), text, cls, judge_reason(score, min(limits.meta_chars, 120))]
    meta = _described_metadata(metadata, limits.meta_chars) if metadata else ""
    return [_name(name), text, cls, meta]


def _name(name: Any) -> str:
    return name if type(name) is str and len(name) <= 80 else shorten(name, 80)


def _described_metadata(metadata: Mapping[str, Any], budget: int) -> str:
    """:func:`describe` of a score's metadata, memoized by its JSON: a metric's metadata repeats
    across a report's cases (``{"matched": 1, "expected": 2, ...}``), and an export describes
    every score of every case. ``null`` in the JSON (a None, or a NaN orjson wrote as null)
    and what orjson cannot write are described directly."""
    if orjson is not None:
        try:
            key = orjson.dumps(metadata)
        except TypeError:
            pass
        else:
            if b"null" not in key and len(key) <= 2048:
                return _describe_json(key, budget)
    return describe(dict(metadata), budget)


@functools.lru_cache(maxsize=8192)
def _describe_json(key: bytes, budget: int) -> str:
    return describe(orjson.loads(key), budget)


def case_data(
    data: Mapping[str, Any],
    gold: Any,
    limits: CaseDataLimits,
    *,
    not_applicable: Mapping[str, str] | None = None,
    expected: bool = False,
) -> dict[str, Any]:
    """One case result's panel data (see the module's keys).

    Args:
        data: the case result's JSON object.
        gold: the benchmark's case, or None (relevance then from the evaluators' matches).
        limits: how much to keep.
        not_applicable: ``{metric: reason}`` of the metrics the case's mode cannot produce.
        expected: include the gold data (``x``) in the case (a page shares it per case id).
    """
    response = data.get("response")
    out: dict[str, Any] = {"q": shorten(data.get("query"), limits.text_chars), "f": run_facts(data)}
    if expected and gold is not None:
        out["x"] = expected_data(gold, limits)
    if type(response) is dict or isinstance(response, Mapping):
        answer = response.get("answer")
        results = response.get("results") or []
        marks = _marks(data, gold, limits.results)
        out["a"] = None if answer is None else shorten(answer, limits.text_chars)
        chars = limits.result_chars
        rows = []
        ids = []
        unjudged = ""
        for result, (mark, why) in zip(results, marks):  # (marks: one per shown result)
            if mark == "u":  # the same reason for every result of a case: said once ("uw")
                unjudged, why = unjudged or why, ""
            if type(result) is not dict:
                result = as_mapping(result)
            rid, text, score = result.get("id"), result.get("text"), result.get("score")
            if type(score) is float and -1e6 < score < 1e6:  # (format_number's common case, inline)
                shown_score = f"{score:.3f}"
                if shown_score == "-0.000":
                    shown_score = "0.000"
            else:
                shown_score = format_number(score, 3)
            rows.append(
                [
                    rid if type(rid) is str and len(rid) <= 40 else shorten(rid, 40),
                    shown_score,
                    mark,
                    _source(result),
                    text if type(text) is str and len(text) <= chars else shorten(text, chars),
                    *((why,) if why else ()),
                ]
            )
            ids.append(rid)
        out["r"] = rows
        out["rn"] = len(results)
        if unjudged and gold is not None:  # without gold data the panel says the one reason itself
            out["uw"] = unjudged
        citations = response.get("citations")
        shown = {i if type(i) is str else str(i) for i in ids} if citations else ()
        cited = []
        for c in islice(citations or (), limits.citations):
            if type(c) is not dict:
                c = as_mapping(c)
            result_id = c.get("result_id")
            cited.append(
                [
                    shorten(c.get("id"), 40),
                    shorten(result_id or "", 40),
                    "" if str(result_id) in shown else shorten(c.get("text") or "", chars),
                ]
            )
        out["c"] = cited
        trace = response.get("trace") or []
        out["t"] = [
            _event(e if type(e) is dict else as_mapping(e), limits.meta_chars)
            for e in islice(trace, limits.trace_events)
        ]
        out["tn"] = len(trace)
    scores = [score if type(score) is dict else as_mapping(score) for score in data.get("scores") or []]
    out["s"] = [_score(score, limits, not_applicable or {}) for score in scores]
    judges = _judge_blocks(scores, limits)
    if judges:
        out["j"] = judges
    error = data.get("error")
    if isinstance(error, Mapping):
        trace_text = as_mapping(error.get("metadata")).get("traceback")
        tail = trace_text[-limits.traceback_chars :] if isinstance(trace_text, str) else ""
        facts = (
            [f"attempts {attempts}"]
            if type(attempts := as_mapping(error.get("metadata")).get("attempts")) is int
            else []
        )
        if error.get("retryable") is True:
            facts.append("retryable")
        elif error.get("retryable") is False:
            facts.append("not retryable")
        out["e"] = [
            shorten(error.get("error_type"), 80),
            shorten(error.get("message"), limits.text_chars),
            tail,
            " · ".join(facts),
        ]
    return out


def _judge_blocks(scores: list[Mapping[str, Any]], limits: CaseDataLimits) -> list[dict[str, Any]]:
    """The LLM judge scores' blocks: at most :data:`_MAX_JUDGES`, their claims and judged
    chunks together at most twice ``limits.claims`` (the later judges get what is left)."""
    blocks: list[dict[str, Any]] = []
    budget = 2 * limits.claims
    for score in islice(filter(is_judge_score, scores), _MAX_JUDGES):
        block = judge_block(score, limits if budget >= limits.claims else replace(limits, claims=max(budget, 0)))
        budget -= sum(len(block.get(key, ())) for key in ("cl", "rc", "ch"))
        blocks.append(block)
    return blocks


def _event(event: Mapping[str, Any], chars: int) -> list[str]:
    """A trace event: ``[stage, message, metadata described]`` (the metadata memoized: it repeats)."""
    metadata = event.get("metadata")
    return [
        shorten(event.get("stage"), 40),
        shorten(event.get("message"), chars),
        (_described_metadata(metadata, chars) if isinstance(metadata, Mapping) else describe(metadata, chars))
        if metadata
        else "",
    ]


def expected_data(gold: Any, limits: CaseDataLimits) -> dict[str, Any]:
    """A benchmark case's expected answers, evidence and labels (shared by its results)."""
    expected = gold.expected
    evidence = []
    for item in islice(expected.evidence, 12):
        locator = dict(item.locator or {})
        relevance = (item.metadata or {}).get("relevance")
        evidence.append(
            [
                shorten(item.reference_id or "", 60),
                describe(locator, 120) if locator else "",
                shorten(item.text or "", limits.result_chars),
                "" if relevance is None else describe(relevance, 20),
            ]
        )
    labels = "; ".join(f"{k}={describe(v, 40)}" for k, v in islice((gold.labels or {}).items(), 12))
    return {"a": [shorten(a, 200) for a in islice(expected.answers, 12)], "ev": evidence, "l": labels}


def pair_case_data(
    sides: Sequence[tuple[str, Mapping[str, Any] | None]],
    deltas: Sequence[Sequence[str]],
    gold: Any,
    limits: CaseDataLimits,
) -> dict[str, Any]:
    """A comparison's case: both systems' case data, side by side, and each metric's delta.

    Args:
        sides: ``(system name, its case result's JSON or None)``, the baseline first.
        deltas: per metric ``[metric, baseline value, system value, delta, class]`` as text
            (class ``hx-up``, ``hx-down``, ``hx-level`` or ``hx-na``).
        gold: the benchmark's case, or None.
        limits: how much to keep.

    Returns:
        ``{"q", "d" (the answers differ), "x" (expected), "m" (deltas), "s": [[name, case or None]...]}``.
    """
    query = ""
    shown: list[list[Any]] = []
    for name, data in sides:
        if data is None:
            shown.append([name, None])
            continue
        details = case_data(data, gold, limits)
        details.pop("j", None)  # (a side shows its answer and chunks; the judges' verdicts are the report's)
        query = query or details["q"]
        shown.append([name, details])
    answers = {side[1].get("a") for side in shown if side[1] is not None and "a" in side[1]}
    out: dict[str, Any] = {"q": query, "d": len(answers) > 1, "m": [list(row) for row in deltas], "s": shown}
    if gold is not None:
        out["x"] = expected_data(gold, limits)
    return out
