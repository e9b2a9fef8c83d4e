"""Render contexts of one case result and its parts: a score, a query response (ranked
results, citations, trace) and the case drill-down (query, scores, answer, error)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from heta_nb._util.text import clip, clip_label, clip_tail, shorten
from heta_nb.model import EvaluationCaseResult, EvaluationScore
from heta_nb.model.summary import numeric_value
from heta_nb.render.context.formatting import as_mapping, describe, format_ms, mapping_entries
from heta_nb.render.env import format_count, format_number
from heta_nb.render.limits import DEFAULT_LIMITS, RenderLimits

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.model import QueryResponse

__all__ = ["case_context", "response_context", "score_cell", "score_context"]


def score_cell(score: Mapping[str, Any] | None, limits: RenderLimits) -> dict[str, str]:
    """One metric value of one case, for a table cell: ``{"text", "cls", "title"}``."""
    if score is None:
        return {"text": "—", "cls": "heta-na", "title": "no score"}
    value = score["value"]
    metadata = as_mapping(score.get("metadata"))
    if metadata.get("skipped") is True:
        reason = metadata.get("reason")
        return {
            "text": "skipped",
            "cls": "heta-skip",
            "title": shorten(
                f"skipped (counted as {format_number(numeric_value(value))}): {describe(reason, 120)}", 200
            ),
        }
    if isinstance(value, bool):
        return {"text": "✓" if value else "✗", "cls": "heta-true" if value else "heta-false", "title": str(value)}
    if isinstance(value, (int, float)):
        return {"text": format_number(value), "cls": "heta-num", "title": ""}
    if isinstance(metadata.get("error"), Mapping):
        error = metadata["error"]
        return {
            "text": "error",
            "cls": "heta-bad",
            "title": shorten(f"{describe(error.get('type'), 60)}: {describe(error.get('message'), 200)}", 260),
        }
    return {"text": shorten(value, 24), "cls": "heta-text", "title": shorten(value, 200)}


def score_context(score: EvaluationScore | Mapping[str, Any], limits: RenderLimits | None = None) -> dict[str, Any]:
    """A score's name, formatted value, verdict, skipped reason and metadata entries.

    Args:
        score: the score (or its JSON dict).
        limits: what to show at most (default :class:`~heta_nb.render.limits.RenderLimits`).

    Returns:
        Plain data for ``score.html.j2`` and the drill-downs.
    """
    limits = limits or DEFAULT_LIMITS
    data = score.raw if isinstance(score, EvaluationScore) else score
    metadata = as_mapping(data.get("metadata"))
    value = data.get("value")
    passed = data.get("passed")
    cell = score_cell(data, limits)
    if isinstance(value, bool):
        shown = "true" if value else "false"
        kind = "bool"
    elif isinstance(value, (int, float)):
        shown = format_number(value)
        kind = "number"
    else:
        shown = shorten(value, limits.max_text_chars)
        kind = "text"
    error = metadata.get("error")
    note = ""
    if metadata.get("skipped") is True:
        note = "skipped: " + describe(metadata.get("reason", "no reason given"), limits.max_text_chars)
    elif isinstance(error, Mapping):
        message = describe(error.get("message"), limits.max_text_chars)
        note = f"evaluator error {describe(error.get('type'), 60)}: {message}"
    return {
        "name": clip_label(data.get("name"), limits.max_name_chars),
        "value": shown,
        "kind": kind,
        "cls": cell["cls"],
        "passed": "" if passed is None else ("✓ pass" if passed else "✗ fail"),
        "passed_mark": "" if passed is None else ("✓" if passed else "✗"),
        "passed_cls": "" if passed is None else ("heta-true" if passed else "heta-false"),
        "note": clip(note, limits.max_text_chars + 100),
        "meta": mapping_entries(metadata, limits, skip=("skipped", "reason", "error") if note else ()),
    }


def _benchmark_doc(key: str) -> str | None:
    """The benchmark document id in Heta's raw key ``raw/benchmarks/{name}/{split}/{id}/{file}``."""
    parts = key.split("/", 6)
    if len(parts) >= 6 and parts[0] == "raw" and parts[1] == "benchmarks":
        return parts[4]
    return None


def _result_row(rank: int, result: Mapping[str, Any], matched: set[str], limits: RenderLimits) -> dict[str, Any]:
    source = as_mapping(result.get("source"))
    metadata = as_mapping(result.get("metadata"))
    origin = as_mapping(source.get("origin"))
    key = next(
        (
            v
            for v in (source.get("object_key"), origin.get("object_key"), metadata.get("source_key"))
            if isinstance(v, str) and v
        ),
        None,
    )
    document_id = source.get("document_id") or metadata.get("document_id")
    where = []
    for name, label in (("page_index", "page"), ("chunk_index", "chunk")):
        value = source.get(name, metadata.get(name))
        if isinstance(value, int) and not isinstance(value, bool):
            where.append(f"{label} {value:,}")
    doc = _benchmark_doc(key) if key else None
    kind = result.get("kind")
    return {
        "rank": str(rank),
        "score": format_number(result.get("score"), 3),
        "id": clip_label(result.get("id"), limits.max_name_chars),
        "kind": clip_label(kind, 24) if kind != "chunk" else None,
        "key": clip_label(key, limits.max_text_chars) if key else None,
        "file": clip_label(key.rsplit("/", 1)[-1], limits.max_name_chars) if key else None,
        "document_id": clip_label(document_id, limits.max_name_chars) if document_id else None,
        "where": " · ".join(where),
        "doc": clip_label(doc, limits.max_name_chars) if doc else None,
        "match": bool(doc and doc in matched),
        "text": clip(result.get("text"), limits.max_text_chars),
    }


def _matched_ids(scores: Sequence[Mapping[str, Any]]) -> set[str]:
    """Benchmark document ids the evaluators reported as matched (Heta's metadata names)."""
    found: set[str] = set()
    for score in scores:
        metadata = as_mapping(score.get("metadata"))
        for name in ("matched_reference_ids", "matched_documents", "matched_document_ids"):
            ids = metadata.get(name)
            if isinstance(ids, (list, tuple)):
                found.update(i for i in islice(ids, 1000) if isinstance(i, str))
    return found


def response_context(
    response: QueryResponse | Mapping[str, Any] | None,
    limits: RenderLimits | None = None,
    *,
    matched: set[str] | None = None,
) -> dict[str, Any] | None:
    """A response's answer, top results, citations, trace and metadata.

    Args:
        response: the response (or its JSON dict); None gives None.
        limits: what to show at most.
        matched: benchmark document ids the evaluators matched (their results are marked).

    Returns:
        Plain data for ``response.html.j2`` and the drill-downs.
    """
    if response is None:
        return None
    limits = limits or DEFAULT_LIMITS
    data = response if isinstance(response, Mapping) else response.raw
    results = data.get("results") or []
    citations = data.get("citations") or []
    trace = data.get("trace") or []
    matched = matched or set()
    shown_ids = set()
    rows = []
    for rank, result in enumerate(islice(results, limits.max_results_per_case), start=1):
        rows.append(_result_row(rank, result, matched, limits))
        if isinstance(result.get("id"), str):
            shown_ids.add(result["id"])
    cites = []
    for citation in islice(citations, limits.max_citations):
        result_id = citation.get("result_id")
        text = citation.get("text")
        # Heta derives citations from the results: repeat the text only when it is new.
        repeat = isinstance(result_id, str) and result_id in shown_ids
        cites.append(
            {
                "id": clip_label(citation.get("id"), limits.max_name_chars),
                "result_id": clip_label(result_id, limits.max_name_chars) if result_id else None,
                "text": clip(text, limits.max_text_chars) if text and not repeat else None,
                "source": clip_label(describe(citation.get("source"), 160), 160) if not repeat else None,
            }
        )
    events = []
    for event in islice(trace, limits.max_trace_events):
        metadata = event.get("metadata")
        events.append(
            {
                "stage": clip_label(event.get("stage"), limits.max_name_chars),
                "message": clip(event.get("message"), limits.max_text_chars),
                "meta": clip_label(describe(metadata, 200), 200) if metadata else None,
            }
        )
    answer = data.get("answer")
    return {
        "mode": clip_label(data.get("mode"), limits.max_name_chars),
        "answer": clip(answer, limits.max_text_chars) if answer is not None else None,
        "results": rows,
        "results_total": format_count(len(results)),
        "results_more": max(0, len(results) - len(rows)),
        "citations": cites,
        "citations_more": max(0, len(citations) - len(cites)),
        "trace": events,
        "trace_more": max(0, len(trace) - len(events)),
        "meta": mapping_entries(data.get("metadata"), limits),
    }


def _error_context(error: Mapping[str, Any] | None, limits: RenderLimits) -> dict[str, Any] | None:
    if error is None:
        return None
    metadata = as_mapping(error.get("metadata"))
    trace = metadata.get("traceback")
    return {
        "type": clip_label(error.get("error_type"), limits.max_name_chars),
        "message": clip(error.get("message"), limits.max_text_chars),
        "retryable": bool(error.get("retryable")),
        "traceback": clip_tail(trace, limits.max_traceback_chars) if isinstance(trace, str) and trace else None,
        "meta": mapping_entries(metadata, limits, skip=("traceback",)),
    }


def _first_numeric(scores: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
    """The first numeric score, as the one-line headline of a drill-down."""
    for score in scores:
        value = score.get("value")
        if isinstance(value, (int, float)):
            skipped = as_mapping(score.get("metadata")).get("skipped") is True
            return {"name": shorten(score.get("name"), 40), "value": "skipped" if skipped else format_number(value)}
    return None


def case_context(
    case: EvaluationCaseResult | Mapping[str, Any],
    limits: RenderLimits | None = None,
    *,
    anchor: str | None = None,
) -> dict[str, Any]:
    """Everything a case drill-down shows: query, answer, scores, results, error, trace.

    Args:
        case: the case result (or its JSON dict).
        limits: what to show at most.
        anchor: the drill-down's element id in a report view (None on its own).

    Returns:
        Plain data for ``case.html.j2`` and the report's drill-downs.
    """
    limits = limits or DEFAULT_LIMITS
    data = case.raw if isinstance(case, EvaluationCaseResult) else case
    scores = data.get("scores") or []
    error = data.get("error")
    headline = _first_numeric(scores)
    response = data.get("response")
    return {
        "anchor": anchor,
        "case_id": clip_label(data.get("case_id"), limits.max_name_chars),
        "mode": clip_label(data.get("query_mode"), limits.max_name_chars),
        "query": clip(data.get("query"), limits.max_text_chars),
        "query_short": shorten(data.get("query"), 90),
        "ok": error is None,
        "status": "ok" if error is None else "error",
        "status_text": "✓ ok" if error is None else "✗ " + shorten(as_mapping(error).get("error_type"), 40),
        "latency": format_ms(data.get("latency_ms")),
        "headline": headline,
        "scores": [score_context(score, limits) for score in islice(scores, limits.max_metrics * 4)],
        "scores_more": max(0, len(scores) - limits.max_metrics * 4),
        "response": response_context(response, limits, matched=_matched_ids(scores)) if response else None,
        "error": _error_context(error, limits),
        "meta": mapping_entries(data.get("metadata"), limits),
    }
