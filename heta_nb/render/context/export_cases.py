"""Every case of a standalone export as compact JSON: what its details panel shows on click.

A standalone file opens any case from this data (``explorer.js`` builds the panel with
``textContent``, never markup): the query, the expected answers and evidence, the answer,
the top retrieved chunks marked relevant / not relevant / not judged, citations, every
score with its metadata, the error and the trace. Texts are cut (``CaseDataLimits``) so
the file stays smaller than the report.json it comes from.
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
from heta_nb.render.context.formatting import as_mapping, describe
from heta_nb.render.env import format_number

__all__ = ["CaseDataLimits", "case_data", "comparison_pairs", "expected_data", "judge_marks", "pair_data"]


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


def judge_marks(data: Mapping[str, Any], gold: Any, limit: int) -> list[str]:
    """``r`` (relevant), ``n`` (not relevant) or ``u`` (not judged) for each of the first results.

    The explorer's rule (:func:`~heta_nb.evaluators.judge.judge_results`): with the
    benchmark's case, Heta's evidence rule and the graded document judgements; without it,
    the evaluators' matched ids, every other result not judged.
    """
    return [MARK_CODES[j.mark] for j in judge_results(data, gold, limit)]


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


def _score(score: Mapping[str, Any], limits: CaseDataLimits) -> list[Any]:
    value = score.get("value")
    metadata = score.get("metadata")
    if type(metadata) is not dict:
        metadata = as_mapping(metadata)
    if metadata and metadata.get("skipped") is True:
        text, cls = "skipped", "s"
    elif type(value) is float or type(value) is int:  # (exact types first: a bool is not an int here)
        text, cls = format_number(value), "v"
    elif isinstance(value, bool):
        text, cls = ("✓ true", "t") if value else ("✗ false", "f")
    elif isinstance(value, (int, float)):
        text, cls = format_number(value), "v"
    elif isinstance(metadata.get("error"), Mapping):
        text, cls = "error", "e"
    else:
        text, cls = shorten(value, 40), "x"
    meta = _described_metadata(metadata, limits.meta_chars) if metadata else ""
    name = score.get("name")
    return [name if type(name) is str and len(name) <= 80 else shorten(name, 80), text, cls, meta]


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


def case_data(data: Mapping[str, Any], gold: Any, limits: CaseDataLimits) -> dict[str, Any]:
    """One case result's details (its JSON ``data``; ``gold``: the benchmark's case or None)."""
    response = data.get("response")
    out: dict[str, Any] = {"q": shorten(data.get("query"), limits.text_chars)}
    if type(response) is dict or isinstance(response, Mapping):
        answer = response.get("answer")
        results = response.get("results") or []
        marks = judge_marks(data, gold, limits.results)
        out["a"] = None if answer is None else shorten(answer, limits.text_chars)
        chars = limits.result_chars
        rows = []
        ids = []
        for result, mark in zip(results, marks):  # (marks: one per shown result)
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
                ]
            )
            ids.append(rid)
        out["r"] = rows
        out["rn"] = len(results)
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
            [
                shorten(as_mapping(e).get("stage"), 40),
                shorten(as_mapping(e).get("message"), limits.meta_chars),
                describe(as_mapping(e).get("metadata"), limits.meta_chars) if as_mapping(e).get("metadata") else "",
            ]
            for e in islice(trace, limits.trace_events)
        ]
        out["tn"] = len(trace)
    out["s"] = [
        _score(score if type(score) is dict else as_mapping(score), limits) for score in data.get("scores") or []
    ]
    error = data.get("error")
    if isinstance(error, Mapping):
        trace_text = as_mapping(error.get("metadata")).get("traceback")
        tail = trace_text[-limits.traceback_chars :] if isinstance(trace_text, str) else ""
        out["e"] = [shorten(error.get("error_type"), 80), shorten(error.get("message"), limits.text_chars), tail]
    return out


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


def pair_data(sides: Sequence[tuple[str, Mapping[str, Any] | None]], limits: CaseDataLimits) -> list[Any]:
    """A comparison's case, side by side: per system its name, answer and top chunks."""
    out: list[list[Any]] = []
    for name, data in sides:
        if data is None:
            out.append([name])  # no result for this case
            continue
        details = case_data(data, None, limits)
        out.append([name, details.get("a"), details.get("r", []), details.get("e")])
    return out


def comparison_pairs(comparison: Any, case_ids: Sequence[str], limits: CaseDataLimits) -> dict[str, Any]:
    """Each case of a comparison side by side: ``{case_id: {"q", "d" (answers differ), "s"}}``."""
    pair_limits = replace(limits, results=3)
    reports = comparison.reports
    systems = [(s.name, reports[s.report_index], s.mode) for s in comparison.system_info] if reports else []
    pairs: dict[str, Any] = {}
    for case_id in dict.fromkeys(case_ids):
        sides: list[tuple[str, Mapping[str, Any] | None]] = []
        query = ""
        for name, report, mode in systems:
            try:
                data: Mapping[str, Any] | None = report.case(case_id, mode).raw
            except (KeyError, LookupError, ValueError):
                data = None
            if data is not None and not query:
                query = shorten(data.get("query"), limits.text_chars)
            sides.append((name, data))
        shown = pair_data(sides, pair_limits)
        answers = {side[1] for side in shown if len(side) > 1 and side[1] is not None}
        pairs[case_id] = {"q": query, "d": len(answers) > 1, "s": shown}
    return pairs
