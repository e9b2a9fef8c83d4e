"""Render contexts: plain dicts and lists built from model objects, ready for a template.

This is the first of the two rendering stages (as in pandas' Styler): everything a
view shows is decided, sorted, counted, truncated and formatted here, in pure and
testable functions; the templates only lay it out. Every string in a context is plain
text: escaping is the template's job (it autoescapes).

A large report is walked once (:func:`build_report_context` feeds the model's
:class:`~heta_nb.model.summary.MetricCollector` and keeps the worst cases per mode
with :func:`heapq.nsmallest`), and only the rows that are shown are looked at in
detail. :class:`RenderLimits` bounds everything that could grow with the data.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import re
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from heta_nb.model.report import EvaluationCaseResult, EvaluationReport, EvaluationScore
from heta_nb.model.summary import MetricCollector, MetricSummary, numeric_value
from heta_nb.render.env import format_count, format_number
from heta_nb.render.svg import histogram

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.benchmark.types import Benchmark
    from heta_nb.model.query import QueryResponse
    from heta_nb.runner.events import RunState

__all__ = [
    "RenderLimits",
    "benchmark_context",
    "build_report_context",
    "case_context",
    "clip",
    "default_id_prefix",
    "report_text",
    "response_context",
    "run_context",
    "safe_url",
    "score_context",
]


@dataclass(frozen=True)
class RenderLimits:
    """Upper bounds on what an HTML view shows, so output size does not grow with the data.

    Every list that is cut says so in the view ("showing 50 of 12,400 cases"); every
    string that is cut ends with a visible "… (+N chars)" marker.
    """

    max_cases_per_mode: int = 50
    """Rows of each per-mode case table (worst cases first)."""
    max_text_chars: int = 300
    """Queries, answers, result texts, messages."""
    max_results_per_case: int = 5
    """Ranked results shown in a case's drill-down."""
    max_error_groups: int = 20
    """(mode, error type) groups in the errors section."""
    max_details: int = 30
    """Case drill-downs per report (spread over the modes)."""
    max_cell_chars: int = 120
    """Query text in table cells."""
    max_name_chars: int = 80
    """Ids, names, modes, metric names, metadata keys."""
    max_error_ids: int = 10
    """Case ids listed per error group."""
    max_citations: int = 5
    """Citations shown per case."""
    max_trace_events: int = 20
    """Trace events shown per case."""
    max_metadata_items: int = 8
    """Entries shown of any metadata mapping."""
    max_key_chars: int = 40
    """Each metadata key."""
    max_value_chars: int = 100
    """Each metadata value (described in one line)."""
    max_traceback_chars: int = 4000
    """Traceback text (the end is kept: that is where the error is)."""
    max_modes: int = 20
    """Modes in the summary and case tables."""
    max_metrics: int = 16
    """Metric columns in the summary and case tables."""
    max_list_items: int = 30
    """Recipe steps, manifests, warnings, benchmark cases and other short lists."""
    max_benchmark_cases: int = 20
    """Cases listed by a benchmark view."""
    max_output_chars: int = 280_000
    """About how large the report view may get: drill-downs that would go beyond it are left out."""


DEFAULT_LIMITS = RenderLimits()

# -- small formatting helpers --------------------------------------------------------


def clip(value: Any, limit: int) -> dict[str, str]:
    """``{"text": ..., "more": ...}``: the text cut to ``limit`` characters.

    ``more`` is ``""`` when nothing was cut, else the number of characters left out
    with thousands separators (templates show ``… (+1,234 chars)``). Non-strings are
    shown with :func:`str` (None as ``""``).
    """
    text = "" if value is None else value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return {"text": text, "more": ""}
    return {"text": text[:limit], "more": f"{len(text) - limit:,}"}


_BREAKS = re.compile(r"(?<=[_./:])")


def _name(value: Any, limit: int) -> dict[str, Any]:
    """Like :func:`clip`, plus ``parts``: the text split after ``_ . / :`` (line-break hints)."""
    clipped: dict[str, Any] = clip(value, limit)
    clipped["parts"] = [part for part in _BREAKS.split(clipped["text"]) if part]
    return clipped


def _label(value: Any, limit: int) -> str:
    """A short plain string (id, name, key) cut to ``limit`` chars with a ``… (+N chars)`` marker."""
    text = "" if value is None else value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit:,} chars)"


def _tail(value: str, limit: int) -> dict[str, str]:
    """Like :func:`clip` but keeps the end (for tracebacks)."""
    if len(value) <= limit:
        return {"text": value, "more": ""}
    return {"text": value[-limit:], "more": f"{len(value) - limit:,}"}


def _short(value: Any, limit: int) -> str:
    """A one-line plain string of at most ``limit`` characters (``…`` when cut)."""
    text = "" if value is None else value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _errors_note(errors: int, groups: int, shown: int) -> str:
    if not errors:
        return "none"
    note = f"{_plural(errors, 'error')} in {_plural(groups, 'group')}"
    return note + (f", showing the {shown:,} largest" if groups > shown else "")


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "—"


def format_ms(value: Any) -> str:
    """A latency in milliseconds: ``0.03``, ``4.60``, ``12.3``, ``1,204``."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return format_number(value)
    if abs(value) < 10:
        return f"{value:.2f}"
    if abs(value) < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def format_duration(seconds: Any) -> str:
    """``0.53 s``, ``42 s``, ``5 min 03 s``, ``2 h 04 min``; ``—`` when unknown."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds):
        return "—"
    if seconds < 0:
        return "−" + format_duration(-seconds)
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        minutes, rest = divmod(int(round(seconds)), 60)
        return f"{minutes} min {rest:02d} s"
    hours, rest = divmod(int(round(seconds)) // 60, 60)
    return f"{hours:,} h {rest:02d} min"


def safe_url(value: Any, limit: int = 2000) -> str | None:
    """``value`` if it is a plain ``http(s)://host/...`` URL worth linking, else None."""
    if not isinstance(value, str) or not value or len(value) > limit:
        return None
    if any(ch.isspace() or ord(ch) < 32 or ch in "\"'<>`\\" for ch in value):
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return value


_ID_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def default_id_prefix(report_id: str) -> str:
    """``heta-<10 hex of sha1(report_id)>``: deterministic, valid as an HTML id."""
    return "heta-" + hashlib.sha1(report_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _clean_prefix(prefix: str) -> str:
    cleaned = _ID_SAFE.sub("-", prefix)[:64].strip("-")
    return cleaned if cleaned and cleaned[0].isalpha() else "heta-" + cleaned


def _brief(value: Any, budget: int, depth: int = 0) -> str:
    """A compact one-line description of a JSON-ish value, at most about ``budget`` chars.

    Lists and mappings are described without walking more than a few items, so a huge
    or deeply nested metadata value costs nothing.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format_number(value, 4) if isinstance(value, float) else f"{value:,}"
    if isinstance(value, str):
        return _short(value, budget)
    if depth >= 2:
        return "{…}" if isinstance(value, Mapping) else "[…]"
    if isinstance(value, Mapping):
        items = ((f"{_short(key, 40)}: ", item) for key, item in islice(value.items(), 8))
        return _brief_items(items, len(value), "{}", budget, depth)
    if isinstance(value, (list, tuple)):
        return _brief_items((("", item) for item in islice(value, 10)), len(value), "[]", budget, depth)
    return _short(type(value).__name__, 40)


def _brief_items(items: Iterable[tuple[str, Any]], total: int, brackets: str, budget: int, depth: int) -> str:
    """``(label, item)`` pairs of a container, described until ``budget`` runs out."""
    parts = []
    used = 2
    for label, item in items:
        part = label + _brief(item, max(budget - used, 8), depth + 1)
        parts.append(part)
        used += len(part) + 2
        if used >= budget:
            break
    more = total - len(parts)
    return brackets[0] + ", ".join(parts) + (f", … +{more:,}" if more > 0 else "") + brackets[1]


def _pairs(
    mapping: Any, limits: RenderLimits, *, skip: Iterable[str] = (), value_chars: int | None = None
) -> dict[str, Any]:
    """Up to ``max_metadata_items`` entries of a mapping as ``{"entries": [{key, value}], "more": n}``."""
    if not isinstance(mapping, Mapping):
        return {"entries": [], "more": 0}
    skipped = [key for key in skip if key in mapping]
    chars = value_chars or limits.max_value_chars
    entries: list[dict[str, str]] = []
    for key, item in mapping.items():
        if key in skipped:
            continue
        if len(entries) >= limits.max_metadata_items:
            break
        entries.append(
            {
                "key": _label(key, limits.max_key_chars),
                "value": _label(_brief(item, chars), chars),
            }
        )
    return {"entries": entries, "more": max(0, len(mapping) - len(skipped) - len(entries))}


def _as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# -- scores and cases ----------------------------------------------------------------


def _score_cell(score: Mapping[str, Any] | None, limits: RenderLimits) -> dict[str, str]:
    """One metric value of one case, for a table cell: ``{"text", "cls", "title"}``."""
    if score is None:
        return {"text": "—", "cls": "heta-na", "title": "no score"}
    value = score["value"]
    metadata = _as_mapping(score.get("metadata"))
    if metadata.get("skipped") is True:
        reason = metadata.get("reason")
        return {
            "text": "skipped",
            "cls": "heta-skip",
            "title": _short(f"skipped (counted as {format_number(numeric_value(value))}): {_brief(reason, 120)}", 200),
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
            "title": _short(f"{_brief(error.get('type'), 60)}: {_brief(error.get('message'), 200)}", 260),
        }
    return {"text": _short(value, 24), "cls": "heta-text", "title": _short(value, 200)}


def score_context(score: EvaluationScore | Mapping[str, Any], limits: RenderLimits | None = None) -> dict[str, Any]:
    """A score's name, formatted value, verdict, skipped reason and metadata entries."""
    limits = limits or DEFAULT_LIMITS
    data = score.raw if isinstance(score, EvaluationScore) else score
    metadata = _as_mapping(data.get("metadata"))
    value = data.get("value")
    passed = data.get("passed")
    cell = _score_cell(data, limits)
    if isinstance(value, bool):
        shown = "true" if value else "false"
        kind = "bool"
    elif isinstance(value, (int, float)):
        shown = format_number(value)
        kind = "number"
    else:
        shown = _short(value, limits.max_text_chars)
        kind = "text"
    error = metadata.get("error")
    note = ""
    if metadata.get("skipped") is True:
        note = "skipped: " + _brief(metadata.get("reason", "no reason given"), limits.max_text_chars)
    elif isinstance(error, Mapping):
        note = f"evaluator error {_brief(error.get('type'), 60)}: {_brief(error.get('message'), limits.max_text_chars)}"
    return {
        "name": _label(data.get("name"), limits.max_name_chars),
        "value": shown,
        "kind": kind,
        "cls": cell["cls"],
        "passed": "" if passed is None else ("✓ pass" if passed else "✗ fail"),
        "passed_mark": "" if passed is None else ("✓" if passed else "✗"),
        "passed_cls": "" if passed is None else ("heta-true" if passed else "heta-false"),
        "note": clip(note, limits.max_text_chars + 100),
        "meta": _pairs(metadata, limits, skip=("skipped", "reason", "error") if note else ()),
    }


def _benchmark_doc(key: str) -> str | None:
    """The benchmark document id in Heta's raw key ``raw/benchmarks/{name}/{split}/{id}/{file}``."""
    parts = key.split("/", 6)
    if len(parts) >= 6 and parts[0] == "raw" and parts[1] == "benchmarks":
        return parts[4]
    return None


def _result_row(rank: int, result: Mapping[str, Any], matched: set[str], limits: RenderLimits) -> dict[str, Any]:
    source = _as_mapping(result.get("source"))
    metadata = _as_mapping(result.get("metadata"))
    origin = _as_mapping(source.get("origin"))
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
        "id": _label(result.get("id"), limits.max_name_chars),
        "kind": _label(kind, 24) if kind != "chunk" else None,
        "key": _label(key, limits.max_text_chars) if key else None,
        "file": _label(key.rsplit("/", 1)[-1], limits.max_name_chars) if key else None,
        "document_id": _label(document_id, limits.max_name_chars) if document_id else None,
        "where": " · ".join(where),
        "doc": _label(doc, limits.max_name_chars) if doc else None,
        "match": bool(doc and doc in matched),
        "text": clip(result.get("text"), limits.max_text_chars),
    }


def _matched_ids(scores: Sequence[Mapping[str, Any]]) -> set[str]:
    """Benchmark document ids the evaluators reported as matched (Heta's metadata names)."""
    found: set[str] = set()
    for score in scores:
        metadata = _as_mapping(score.get("metadata"))
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
    """A response's answer, top results, citations, trace and metadata."""
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
                "id": _label(citation.get("id"), limits.max_name_chars),
                "result_id": _label(result_id, limits.max_name_chars) if result_id else None,
                "text": clip(text, limits.max_text_chars) if text and not repeat else None,
                "source": _label(_brief(citation.get("source"), 160), 160) if not repeat else None,
            }
        )
    events = []
    for event in islice(trace, limits.max_trace_events):
        metadata = event.get("metadata")
        events.append(
            {
                "stage": _label(event.get("stage"), limits.max_name_chars),
                "message": clip(event.get("message"), limits.max_text_chars),
                "meta": _label(_brief(metadata, 200), 200) if metadata else None,
            }
        )
    answer = data.get("answer")
    return {
        "mode": _label(data.get("mode"), limits.max_name_chars),
        "answer": clip(answer, limits.max_text_chars) if answer is not None else None,
        "results": rows,
        "results_total": format_count(len(results)),
        "results_more": max(0, len(results) - len(rows)),
        "citations": cites,
        "citations_more": max(0, len(citations) - len(cites)),
        "trace": events,
        "trace_more": max(0, len(trace) - len(events)),
        "meta": _pairs(data.get("metadata"), limits),
    }


def _error_context(error: Mapping[str, Any] | None, limits: RenderLimits) -> dict[str, Any] | None:
    if error is None:
        return None
    metadata = _as_mapping(error.get("metadata"))
    trace = metadata.get("traceback")
    return {
        "type": _label(error.get("error_type"), limits.max_name_chars),
        "message": clip(error.get("message"), limits.max_text_chars),
        "retryable": bool(error.get("retryable")),
        "traceback": _tail(trace, limits.max_traceback_chars) if isinstance(trace, str) and trace else None,
        "meta": _pairs(metadata, limits, skip=("traceback",)),
    }


def _first_numeric(scores: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
    """The first numeric score, as the one-line headline of a drill-down."""
    for score in scores:
        value = score.get("value")
        if isinstance(value, (int, float)):
            skipped = _as_mapping(score.get("metadata")).get("skipped") is True
            return {"name": _short(score.get("name"), 40), "value": "skipped" if skipped else format_number(value)}
    return None


def case_context(
    case: EvaluationCaseResult | Mapping[str, Any],
    limits: RenderLimits | None = None,
    *,
    anchor: str | None = None,
) -> dict[str, Any]:
    """Everything a case drill-down shows: query, answer, scores, results, error, trace."""
    limits = limits or DEFAULT_LIMITS
    data = case.raw if isinstance(case, EvaluationCaseResult) else case
    scores = data.get("scores") or []
    error = data.get("error")
    headline = _first_numeric(scores)
    response = data.get("response")
    return {
        "anchor": anchor,
        "case_id": _label(data.get("case_id"), limits.max_name_chars),
        "mode": _label(data.get("query_mode"), limits.max_name_chars),
        "query": clip(data.get("query"), limits.max_text_chars),
        "query_short": _short(data.get("query"), 90),
        "ok": error is None,
        "status": "ok" if error is None else "error",
        "status_text": "✓ ok" if error is None else "✗ " + _short(_as_mapping(error).get("error_type"), 40),
        "latency": format_ms(data.get("latency_ms")),
        "headline": headline,
        "scores": [score_context(score, limits) for score in islice(scores, limits.max_metrics * 4)],
        "scores_more": max(0, len(scores) - limits.max_metrics * 4),
        "response": response_context(response, limits, matched=_matched_ids(scores)) if response else None,
        "error": _error_context(error, limits),
        "meta": _pairs(data.get("metadata"), limits),
    }


# -- the report ----------------------------------------------------------------------


class _ModeScan:
    """What the single pass keeps of one mode: where its results are, and latencies."""

    __slots__ = ("errors", "latencies", "ok")

    def __init__(self) -> None:
        self.errors: list[int] = []
        self.ok: array[int] = array("q")
        self.latencies: array[float] = array("d")


def _scan(report: EvaluationReport, limits: RenderLimits) -> tuple[MetricCollector, dict[str, _ModeScan], dict, int]:
    """The one pass over every case result: metric summaries, positions per mode, error groups.

    Only result-level fields are read here; the scores are read once, by the collector.
    """
    data = report.raw
    results = data["case_results"]
    collector = MetricCollector(data["query_modes"])
    add = collector.add
    scans: dict[str, _ModeScan] = {}
    groups: dict[tuple[str, str], list[Any]] = {}
    max_ids = limits.max_error_ids
    case_ids: set[str] = set()
    seen = case_ids.add
    for index, result in enumerate(results):
        add(result)
        mode = result["query_mode"]
        scan = scans.get(mode)
        if scan is None:
            scan = scans[mode] = _ModeScan()
        seen(result["case_id"])
        latency = result["latency_ms"]
        if latency is not None:
            scan.latencies.append(latency)
        error = result["error"]
        if error is None:
            scan.ok.append(index)
            continue
        scan.errors.append(index)
        key = (mode, error["error_type"])
        group = groups.get(key)
        if group is None:
            groups[key] = [1, index, [result["case_id"]]]
        else:
            group[0] += 1
            if len(group[2]) < max_ids:
                group[2].append(result["case_id"])
    return collector, scans, groups, len(case_ids)


def _value_of(result: Mapping[str, Any], metric: str) -> tuple[float | None, bool]:
    """The numeric value of ``metric`` in one result (None if absent, text or NaN), and if it was skipped."""
    for score in result["scores"]:
        if score["name"] == metric:
            value = numeric_value(score["value"])
            skipped = _as_mapping(score.get("metadata")).get("skipped") is True
            return (value if value is not None and value == value else None), skipped
    return None, False


def _worst(
    results: list[dict[str, Any]],
    scan: _ModeScan,
    metric: str | None,
    values: Sequence[float],
    skipped: Sequence[int],
    count: int,
    all_finite: bool,
) -> list[int]:
    """Positions of the ``count`` worst results of a mode, in display order.

    Errors come first (report order), then results without a usable value of
    ``metric`` (missing, text or NaN), then the lowest values, then skipped scores
    (nothing to score: not a failure); ties keep report order. ``values`` and
    ``skipped`` are the collector's for ``metric`` in this mode; ``all_finite`` says
    none of the values is NaN or infinite.
    """
    chosen = scan.errors[:count]
    if len(chosen) >= count:
        return chosen
    wanted = count - len(chosen)
    ok = scan.ok
    if metric is None:
        return chosen + list(ok[:wanted])
    if len(values) == len(ok) and values and all_finite:
        # The usual case: every successful result has exactly one value, so the
        # k-th value belongs to the k-th successful result.
        keys = values
        if skipped:
            keys = array("d", values)
            for position in skipped:
                keys[position] = math.inf
        best = heapq.nsmallest(wanted, range(len(keys)), key=keys.__getitem__)
        picked = [ok[k] for k in best]
        if all(_value_of(results[i], metric)[0] == values[k] for i, k in zip(picked, best)):
            return chosen + picked
    missing: list[int] = []
    entries: list[tuple[float, int]] = []
    for index in ok:
        value, was_skipped = _value_of(results[index], metric)
        if value is None:
            missing.append(index)
        else:
            entries.append((math.inf if was_skipped else value, index))
    chosen.extend(missing[:wanted])
    if len(chosen) < count:
        chosen.extend(index for _, index in heapq.nsmallest(count - len(chosen), entries))
    return chosen


def _quantile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    below, above, fraction = sorted_values[low], sorted_values[high], position - low
    if not fraction:
        return below
    step = above - below
    if math.isfinite(step):
        return below + step * fraction
    return below * (1 - fraction) + above * fraction  # 1e308 and -1e308: their gap is not a float


def _manifests(manifest: Any) -> list[Mapping[str, Any]]:
    """The KB manifest(s) in either of Heta's shapes (as ``EvaluationReport.knowledge_base_manifests``)."""
    if not isinstance(manifest, Mapping) or not manifest:
        return []
    nested = manifest.get("knowledge_bases")
    if len(manifest) == 1 and isinstance(nested, (list, tuple)):
        return [item for item in nested if isinstance(item, Mapping)]
    return [manifest]


def _header(
    report: EvaluationReport,
    modes: Sequence[str],
    counts: dict[str, int],
    limits: RenderLimits,
) -> dict[str, Any]:
    data = report.raw
    benchmark = _as_mapping(data.get("benchmark"))
    name_chars = limits.max_name_chars
    # The raw JSON, not the frozen attribute views: a KB manifest lists every raw,
    # parsed and chunk key of the corpus, and freezing it would cost more than the view.
    metadata = _as_mapping(data.get("metadata"))
    run = _as_mapping(metadata.get("heta_nb"))
    status = run.get("status") if isinstance(run.get("status"), str) else None
    done, total = run.get("done"), run.get("total")
    banner = None
    if status is not None and status != "complete":
        if isinstance(done, int) and isinstance(total, int) and not isinstance(done, bool):
            progress = f"{done:,} of {total:,} results recorded ({_percent(done, total)})"
        else:
            progress = "progress unknown"
        banner = {
            "status": _short(status, 40),
            "problem": status in ("cancelled", "failed"),
            "progress": progress,
            "failure": clip(run.get("failure"), limits.max_text_chars) if run.get("failure") else None,
        }
    raw_warnings = run.get("warnings")
    warnings: Sequence[Any] = raw_warnings if isinstance(raw_warnings, (list, tuple)) else ()
    manifests = []
    all_manifests = _manifests(data.get("knowledge_base_manifest"))
    for manifest in all_manifests[: limits.max_list_items]:
        record = _as_mapping(manifest.get("run_record"))
        raw_records = record.get("step_records")
        records: Sequence[Any] = raw_records if isinstance(raw_records, (list, tuple)) else ()
        failed = [s for s in records if isinstance(s, Mapping) and s.get("status") == "failed"]
        manifests.append(
            {
                "name": _label(manifest.get("name"), name_chars),
                "status": _short(record.get("status"), 40) if record.get("status") else "",
                "created_at": _short(manifest.get("created_at"), 40) if manifest.get("created_at") else "",
                "failed_steps": ", ".join(_short(s.get("step_name"), 40) for s in failed[:5]),
            }
        )
    steps = []
    raw_steps = _as_mapping(data.get("recipe_manifest")).get("steps")
    recipe_steps = [step for step in raw_steps if isinstance(step, Mapping)] if isinstance(raw_steps, list) else []
    for position, step in enumerate(recipe_steps[: limits.max_list_items]):
        index = step.get("index")
        steps.append(
            {
                "index": str(index) if isinstance(index, int) else str(position),
                "name": _label(step.get("name"), name_chars),
                "type": _label(step.get("type"), name_chars),
            }
        )
    settings = []
    for key, label in (
        ("top_k", "top_k"),
        ("concurrency", "concurrency"),
        ("timeout_s", "timeout"),
        ("retries", "retries"),
        ("resumed", "resumed"),
        ("version", "heta_nb"),
    ):
        value = run.get(key)
        if key == "timeout_s" and isinstance(value, (int, float)) and not isinstance(value, bool):
            settings.append({"key": label, "value": f"{value:g} s"})  # 60 s, not 60.0000
        elif value is not None and not isinstance(value, (Mapping, list, tuple)):
            settings.append({"key": label, "value": _short(_brief(value, 40), 40)})
    options = run.get("query_options")
    if isinstance(options, Mapping) and options:
        settings.append({"key": "query_options", "value": _short(_brief(options, 80), 80)})
    shard = run.get("shard")
    if isinstance(shard, Mapping):
        settings.append(
            {"key": "shard", "value": f"{_brief(shard.get('index'), 12)} of {_brief(shard.get('count'), 12)}"}
        )
    raw_units = metadata.get("run_units")
    units: Sequence[Any] = raw_units if isinstance(raw_units, (list, tuple)) else ()
    documents = metadata.get("benchmark_document_keys")
    run_meta = _pairs(metadata, limits, skip=("heta_nb", "run_units", "benchmark_document_keys"))
    homepage = benchmark.get("homepage")
    results_total = counts["results"]
    return {
        "report_id": _label(data.get("report_id"), name_chars),
        "report_key": _label(data.get("report_key"), name_chars + 80) if data.get("report_key") else None,
        "schema_version": _short(data.get("schema_version"), 20),
        "benchmark": {
            "name": _label(benchmark.get("name"), name_chars),
            "version": _label(benchmark.get("version"), 40),
            "split": _label(benchmark.get("split"), 40),
            "task_type": _label(benchmark.get("task_type"), name_chars),
            "build_scope": _short(benchmark.get("build_scope"), 20),
            "homepage": _label(homepage, name_chars + 40) if homepage else None,
            "homepage_url": safe_url(homepage),
            "license": _label(benchmark.get("license"), name_chars) if benchmark.get("license") else None,
            "citation": clip(benchmark.get("citation"), limits.max_text_chars) if benchmark.get("citation") else None,
        },
        "knowledge_base_name": _label(data.get("knowledge_base_name"), name_chars),
        "manifests": manifests,
        "manifests_more": max(0, len(all_manifests) - len(manifests)),
        "steps": steps,
        "steps_more": max(0, len(recipe_steps) - len(steps)),
        "modes": [_label(mode, name_chars) for mode in modes[: limits.max_list_items]],
        "modes_more": max(0, len(modes) - limits.max_list_items),
        "started_at": _short(data.get("started_at"), 40),
        "finished_at": _short(data.get("finished_at"), 40),
        "duration": format_duration(report.duration_s),
        "cases": format_count(counts["cases"]),
        "results": format_count(results_total),
        "errors": format_count(counts["errors"]),
        "errors_pct": _percent(counts["errors"], results_total),
        "has_errors": counts["errors"] > 0,
        "status": _short(status, 40) if status else None,
        "banner": banner,
        "warnings": [clip(_brief(w, limits.max_text_chars), limits.max_text_chars) for w in warnings[:10]],
        "warnings_more": max(0, len(warnings) - 10),
        "settings": settings,
        "units": format_count(len(units)) if units else None,
        "unit_ids": ", ".join(_short(_as_mapping(u).get("unit_id"), 40) for u in units[:10])
        + (f", … +{len(units) - 10:,}" if len(units) > 10 else ""),
        "documents": format_count(len(documents)) if isinstance(documents, (list, tuple)) else None,
        "run_meta": run_meta,
    }


def _summary(
    report: EvaluationReport,
    collector: MetricCollector,
    summaries: list[MetricSummary],
    scans: dict[str, _ModeScan],
    modes: Sequence[str],
    metrics: Sequence[str],
    limits: RenderLimits,
) -> dict[str, Any]:
    by_key = {(s.mode, s.metric): s for s in summaries}
    stored = report.score_summary
    best: dict[str, float] = {}
    for metric in metrics:
        means = [
            s.mean
            for mode in modes
            if (s := by_key.get((mode, metric))) is not None and s.kind != "text" and math.isfinite(s.mean)
        ]
        if len(means) >= 2 and max(means) > min(means):
            best[metric] = max(means)
    footnotes: dict[str, str] = {}

    def footnote(text: str) -> str:
        if not text:
            return ""
        if text not in footnotes:
            footnotes[text] = str(len(footnotes) + 1)
        return footnotes[text]

    rows = []
    for mode in modes:
        scan = scans.get(mode)
        cases = collector.cases.get(mode, 0)
        errors = collector.errors.get(mode, 0)
        observed: Sequence[float] = scan.latencies if scan else ()
        if observed and not math.isfinite(sum(observed)):  # sum, not fsum: fsum raises on overflow
            observed = [v for v in observed if math.isfinite(v)]
        latencies = sorted(observed)
        cells: list[dict[str, Any] | None] = []
        skipped = 0
        for metric in metrics:
            s = by_key.get((mode, metric))
            if s is None:
                cells.append(None)
                continue
            skipped += s.skipped
            label = f"{_short(metric, 40)} in {_short(mode, 40)}"
            if s.kind == "text":
                failed = s.evaluator_errors
                title = f"{failed:,} evaluator error{'s' if failed != 1 else ''}, no mean" if failed else ""
                cells.append({"text": True, "title": title or "text values, no mean"})
                continue
            note = s.note
            heta = stored.get(s.key)
            if heta is None:
                note = "; ".join(filter(None, [note, "missing from the stored score_summary"]))
            elif not (heta == s.mean or (heta != heta and s.mean != s.mean)):
                note = "; ".join(filter(None, [note, f"stored score_summary says {format_number(heta, 4)}"]))
            ci = (
                f"[{format_number(s.ci_low)}, {format_number(s.ci_high)}]"
                if math.isfinite(s.ci_low) and math.isfinite(s.ci_high)
                else "[—]"
            )
            cells.append(
                {
                    "text": False,
                    "mean": format_number(s.mean),
                    "ci": ci,
                    "n": format_count(s.n),
                    "best": metric in best and s.mean == best[metric],
                    "note": footnote(note),
                    "spark": histogram(
                        s.values,
                        label=label,
                        kind=s.kind,
                        width=44,
                        height=14,
                        minimum=s.minimum,
                        maximum=s.maximum,
                        all_finite=math.isfinite(s.mean),
                    ),
                    "title": (
                        f"mean {format_number(s.mean, 4)}, {s.confidence:.0%} CI {ci}, n={s.n:,}, "
                        f"std {format_number(s.std, 4)}, min {format_number(s.minimum)}, "
                        f"max {format_number(s.maximum)}"
                    ),
                }
            )
        rows.append(
            {
                "mode": _label(mode, limits.max_name_chars),
                "cases": format_count(cases),
                "errors": _plural(errors, "error"),
                "error_count": format_count(errors),
                "errors_pct": _percent(errors, cases),
                "has_errors": errors > 0,
                "skipped": format_count(skipped),
                "all_errored": cases > 0 and errors == cases,
                "p50": format_ms(_quantile(latencies, 0.5)),
                "p95": format_ms(_quantile(latencies, 0.95)),
                "cells": cells,
            }
        )
    confidence = summaries[0].confidence if summaries else 0.95
    return {
        "metrics": [{"name": _name(m, limits.max_name_chars)} for m in metrics],
        "metrics_more": max(0, len(collector.metrics) - len(metrics)),
        "modes_more": max(0, len(collector.modes) - len(modes)),
        "rows": rows,
        "footnotes": [{"marker": marker, "text": clip(text, 600)} for text, marker in footnotes.items()],
        "has_best": bool(best),
        "confidence": f"{confidence:.0%}",
    }


def _row(result: Mapping[str, Any], metrics: Sequence[str], limits: RenderLimits, anchor: str | None) -> dict:
    scores: dict[str, Mapping[str, Any]] = {}
    for score in result["scores"]:
        scores.setdefault(score["name"], score)
    error = result["error"]
    return {
        "case_id": _label(result["case_id"], limits.max_name_chars),
        "query": clip(result["query"], limits.max_cell_chars),
        "ok": error is None,
        "status": "✓ ok" if error is None else "✗ " + _short(error["error_type"], 40),
        "latency": format_ms(result["latency_ms"]),
        "cells": [_score_cell(scores.get(metric), limits) for metric in metrics],
        "anchor": anchor,
    }


def build_report_context(
    report: EvaluationReport,
    limits: RenderLimits | None = None,
    *,
    id_prefix: str | None = None,
) -> dict[str, Any]:
    """The plain-data context of the report view (pure: same report, same context).

    Keys: ``id``, ``header``, ``summary``, ``modes`` (one case table each), ``errors``,
    ``details``; all strings are plain text, numbers are already formatted.
    """
    limits = limits or DEFAULT_LIMITS
    data = report.raw
    results = data["case_results"]
    prefix = _clean_prefix(id_prefix) if id_prefix else default_id_prefix(str(data.get("report_id")))
    collector, scans, groups, unique_cases = _scan(report, limits)
    summaries = collector.summaries()
    modes_all = list(collector.modes)
    modes = modes_all[: limits.max_modes]
    metrics_all = list(collector.metrics)
    metrics = metrics_all[: limits.max_metrics]
    total_errors = sum(collector.errors.values())
    numeric = {(s.mode, s.metric): s for s in summaries if s.kind != "text"}

    # Worst cases per mode, then the drill-downs: round-robin over the modes.
    chosen: dict[str, list[int]] = {}
    sort_metric: dict[str, str | None] = {}
    for mode in modes:
        scan = scans.get(mode)
        metric = next((m for m in metrics_all if (mode, m) in numeric), None)
        sort_metric[mode] = metric
        values = collector.values(mode, metric) if metric is not None else ()
        skipped = collector.skipped_positions(mode, metric) if metric is not None else ()
        finite = metric is not None and math.isfinite(numeric[(mode, metric)].mean)
        chosen[mode] = _worst(results, scan, metric, values, skipped, limits.max_cases_per_mode, finite) if scan else []
    anchors: dict[tuple[str, int], str] = {}
    order: list[tuple[str, int]] = []
    depth = 0
    while len(order) < limits.max_details:
        added = False
        for mode in modes:
            if depth < len(chosen[mode]) and len(order) < limits.max_details:
                order.append((mode, chosen[mode][depth]))
                added = True
        if not added:
            break
        depth += 1
    for number, key in enumerate(order, start=1):
        anchors[key] = f"{prefix}-case-{number}"

    tables: list[dict[str, Any]] = []
    present = {(s.mode, s.metric) for s in summaries}
    for position, mode in enumerate(modes):
        mode_metrics = [m for m in metrics if (mode, m) in present]
        total = collector.cases.get(mode, 0)
        rows = [_row(results[i], mode_metrics, limits, anchors.get((mode, i))) for i in chosen[mode]]
        metric = sort_metric[mode]
        shown = len(rows)
        note = (f"showing {shown:,} of {total:,} cases" if shown < total else f"all {total:,} cases") + (
            f" · worst first by {_short(metric, 40)} (errors first, skipped last)" if metric else " · errors first"
        )
        tables.append(
            {
                "mode": _label(mode, limits.max_name_chars),
                "testid": "heta-cases-" + _short(mode, limits.max_name_chars),
                "anchor": f"{prefix}-mode-{position + 1}",
                "metrics": [{"name": _name(m, limits.max_name_chars)} for m in mode_metrics],
                "rows": rows,
                "shown": shown,
                "total": format_count(total),
                "note": note,
            }
        )

    ranked = sorted(groups.items(), key=lambda item: (-item[1][0], item[1][1]))
    error_groups = []
    for (mode, error_type), (count, first, ids) in ranked[: limits.max_error_groups]:
        message = results[first]["error"]["message"]
        error_groups.append(
            {
                "mode": _label(mode, limits.max_name_chars),
                "error_type": _label(error_type, limits.max_name_chars),
                "count": format_count(count),
                "share": _percent(count, collector.cases.get(mode, 0)),
                "message": clip(message, limits.max_text_chars),
                "case_ids": [_label(i, limits.max_name_chars) for i in ids],
                "ids_more": max(0, count - len(ids)),
            }
        )

    listed = sum(len(rows) for rows in chosen.values())
    counts = {"cases": unique_cases, "results": len(results), "errors": total_errors}
    context: dict[str, Any] = {
        "id": prefix,
        "header": _header(report, modes_all, counts, limits),
        "summary": _summary(report, collector, summaries, scans, modes, metrics, limits),
        "modes": tables,
        "errors": {
            "groups": error_groups,
            "total": format_count(total_errors),
            "count": total_errors,
            "groups_total": len(groups),
            "note": _errors_note(total_errors, len(groups), len(error_groups)),
        },
    }

    # Drill-downs, in round-robin order, while the view stays within its size budget.
    budget = limits.max_output_chars - _STATIC_CHARS - sum(_weight(part) for part in context.values())
    details_by_mode: dict[str, list[dict[str, Any]]] = {}
    shown = 0
    for mode, index in order:
        detail = case_context(EvaluationCaseResult.from_raw(results[index]), limits, anchor=anchors[(mode, index)])
        budget -= _weight(detail)
        if budget < 0:
            break
        details_by_mode.setdefault(mode, []).append(detail)
        shown += 1
    if shown < len(order):
        kept = {detail["anchor"] for cases in details_by_mode.values() for detail in cases}
        for table in tables:
            for row in table["rows"]:
                if row["anchor"] not in kept:
                    row["anchor"] = None
    if shown < len(order):
        note = (
            f"details of {shown:,} of the {listed:,} listed cases (the worst of each mode; "
            f"more would take this view over about {limits.max_output_chars // 1000:,} KB)"
        )
    elif listed > shown:
        note = f"details of {shown:,} of the {listed:,} listed cases (the worst of each mode)"
    else:
        note = f"details of all {listed:,} listed cases"
    context["details"] = {
        "modes": [
            {"mode": _label(mode, limits.max_name_chars), "cases": details_by_mode[mode]}
            for mode in modes
            if mode in details_by_mode
        ],
        "shown": shown,
        "note": note,
    }
    return context


_STATIC_CHARS = 14_000
"""About what the stylesheet and fixed markup of the report view take."""


_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(",", ":")).encode


def _weight(value: Any) -> int:
    """Roughly the characters a context becomes in HTML: its JSON size (C speed) with the
    escapes HTML adds, scaled for the markup around each item (calibrated on the fixtures)."""
    text = _ENCODE(value)
    escaped = len(text) + 3 * (text.count("<") + text.count(">") + text.count("&")) + 4 * text.count("'")
    return escaped * 13 // 10


def report_text(context: Mapping[str, Any]) -> str:
    """The concise ``text/plain`` summary of a report, made from its render context."""
    header = context["header"]
    bench = header["benchmark"]

    lines = [
        f"EvaluationReport {_short(header['report_id'], 60)}: "
        f"{_short(bench['name'], 40)} {_short(bench['version'], 20)}/{_short(bench['split'], 20)}"
        f" ({_short(bench['task_type'], 30)})",
        f"KB {_short(header['knowledge_base_name'], 50)} · {header['cases']} cases · "
        f"{header['results']} results · {header['errors']} errors · {header['duration']}",
    ]
    banner = header["banner"]
    if banner:
        lines.append(f"status: {banner['status']} ({banner['progress']})")
    summary = context["summary"]
    metrics = [_short(m["name"]["text"] + ("…" if m["name"]["more"] else ""), 22) for m in summary["metrics"][:4]]
    if summary["rows"]:
        width = min(24, max(4, *(len(_short(r["mode"], 24)) for r in summary["rows"])))
        head = f"{'mode':<{width}}  {'results':>7}  {'errors':>6}" + "".join(
            f"  {m:>{max(len(m), 6)}}" for m in metrics
        )
        lines.append(head)
        for row in summary["rows"][:8]:
            cells = []
            for name, cell in zip(metrics, row["cells"][:4]):
                value = (
                    "—" if cell is None else "text" if cell["text"] else cell["mean"] + ("*" if cell["best"] else "")
                )
                cells.append(f"  {value:>{max(len(name), 6)}}")
            lines.append(
                f"{_short(row['mode'], width):<{width}}  {row['cases']:>7}  {row['error_count']:>6}" + "".join(cells)
            )
        extra = []
        if len(summary["rows"]) > 8:
            extra.append(f"+{len(summary['rows']) - 8} modes")
        hidden = len(summary["metrics"]) - len(metrics) + summary["metrics_more"]
        if hidden > 0:
            extra.append(f"+{hidden} metrics")
        if summary["has_best"]:
            extra.append("* best mean")
        if extra:
            lines.append("(" + "; ".join(extra) + ")")
    return "\n".join(lines)


# -- benchmark and run ---------------------------------------------------------------


def benchmark_context(benchmark: Benchmark, limits: RenderLimits | None = None) -> dict[str, Any]:
    """Manifest, counts, label distributions and the first cases of a benchmark."""
    limits = limits or DEFAULT_LIMITS
    manifest = benchmark.manifest
    cases = benchmark.cases
    label_values: dict[str, dict[str, int]] = {}
    answers = evidence = 0
    for case in cases:
        for key, value in islice(case.labels.items(), 50):
            if len(label_values) >= 50 and key not in label_values:
                continue
            shown = _short(_brief(value, 60), 60)
            bucket = label_values.setdefault(key, {})
            if shown in bucket or len(bucket) < 1000:
                bucket[shown] = bucket.get(shown, 0) + 1
        answers += bool(case.expected.answers)
        evidence += bool(case.expected.evidence)
    labels = []
    for key, bucket in islice(label_values.items(), limits.max_metadata_items):
        top = sorted(bucket.items(), key=lambda item: (-item[1], item[0]))[:10]
        labels.append(
            {
                "key": _label(key, limits.max_name_chars),
                "values": [
                    {"value": _label(v, 60), "count": format_count(n), "share": _percent(n, len(cases))} for v, n in top
                ],
                "more": max(0, len(bucket) - len(top)),
            }
        )
    media: dict[str, int] = {}
    for document in benchmark.documents:
        media[document.media_type] = media.get(document.media_type, 0) + 1
    rows = []
    for case in cases[: limits.max_benchmark_cases]:
        first = case.expected.answers[0] if case.expected.answers else None
        rows.append(
            {
                "case_id": _label(case.case_id, limits.max_name_chars),
                "query": clip(case.query, limits.max_cell_chars),
                "answer": clip(first, limits.max_cell_chars) if first is not None else None,
                "answers_more": max(0, len(case.expected.answers) - 1),
                "evidence": format_count(len(case.expected.evidence)),
                "labels": _label(_brief(dict(case.labels), 120), 120) if case.labels else None,
            }
        )
    evaluators = []
    for evaluator in benchmark.default_evaluators[: limits.max_list_items]:
        name = evaluator if isinstance(evaluator, str) else getattr(evaluator, "name", None)
        if not isinstance(name, str):
            name = getattr(evaluator, "__name__", type(evaluator).__name__)
        evaluators.append(_label(name, limits.max_name_chars))
    homepage = manifest.homepage
    return {
        "name": _label(manifest.name, limits.max_name_chars),
        "version": _label(manifest.version, 40),
        "split": _label(manifest.split, 40),
        "task_type": _label(manifest.task_type, limits.max_name_chars),
        "build_scope": _short(manifest.build_scope, 20),
        "homepage": _label(homepage, limits.max_name_chars + 40) if homepage else None,
        "homepage_url": safe_url(homepage),
        "license": _label(manifest.license, limits.max_name_chars) if manifest.license else None,
        "citation": clip(manifest.citation, limits.max_text_chars) if manifest.citation else None,
        "meta": _pairs(manifest.metadata, limits, value_chars=limits.max_text_chars),
        "source": _label(benchmark.source, limits.max_name_chars + 80) if benchmark.source else None,
        "documents": format_count(len(benchmark.documents)),
        "cases": format_count(len(cases)),
        "units": format_count(len(benchmark.units)),
        "with_answers": format_count(answers),
        "with_evidence": format_count(evidence),
        "media": [
            {"type": _label(t, 60), "count": format_count(n)}
            for t, n in sorted(media.items(), key=lambda item: -item[1])[:10]
        ],
        "evaluators": evaluators,
        "labels": labels,
        "labels_more": max(0, len(label_values) - len(labels)),
        "rows": rows,
        "note": (
            f"showing {len(rows):,} of {len(cases):,} cases" if len(cases) > len(rows) else f"all {len(cases):,} cases"
        ),
    }


_RUN_STATUSES = ("pending", "running", "complete", "cancelled", "failed")


def run_context(state: RunState, limits: RenderLimits | None = None) -> dict[str, Any]:
    """A static snapshot of a run's progress: counts, rate, ETA, errors, running means."""
    limits = limits or DEFAULT_LIMITS
    status = state.status if state.status in _RUN_STATUSES else "unknown"
    total, done = state.total, state.done
    rate = state.rate
    eta = state.eta_s
    modes = list(state.modes)[: limits.max_modes]
    metrics = list(state.metrics)[: limits.max_metrics]
    rows = []
    for mode in modes:
        progress = state.per_mode.get(mode)
        rows.append(
            {
                "mode": _label(mode, limits.max_name_chars),
                "done": format_count(progress.done if progress else 0),
                "errors": format_count(progress.errors if progress else 0),
                "has_errors": bool(progress and progress.errors),
                "means": [format_number(progress.mean(m) if progress else None) for m in metrics],
            }
        )
    by_type = sorted(state.errors_by_type.items(), key=lambda item: (-item[1], item[0]))
    benchmark = state.benchmark
    name = " ".join(
        _short(benchmark.get(k), 40) for k in ("name", "version", "split") if isinstance(benchmark.get(k), str)
    )
    return {
        "status": status,
        "problem": status in ("cancelled", "failed"),
        "report_id": _label(state.report_id, limits.max_name_chars),
        "knowledge_base_name": _label(state.knowledge_base_name, limits.max_name_chars),
        "benchmark": _label(name, limits.max_name_chars * 2),
        "done": format_count(done),
        "total": format_count(total),
        "value": done,
        "max": max(total, 1),
        "percent": _percent(done, total) if total else ("100.0%" if state.finished else "0.0%"),
        "resumed": format_count(state.resumed) if state.resumed else None,
        "rate": f"{rate:,.1f} results/s" if rate else "—",
        "eta": format_duration(eta) if eta is not None and not state.finished else None,
        "elapsed": format_duration(state.elapsed_s),
        "errors": _plural(state.errors, "error"),
        "has_errors": state.errors > 0,
        "errors_by_type": [
            {"type": _label(t, limits.max_name_chars), "count": format_count(n)} for t, n in by_type[:10]
        ],
        "last_errors": [
            {
                "mode": _label(mode, limits.max_name_chars),
                "case_id": _label(case_id, limits.max_name_chars),
                "type": _label(error_type, limits.max_name_chars),
                "message": clip(message, limits.max_text_chars),
            }
            for mode, case_id, error_type, message in state.last_errors[-5:]
        ],
        "metrics": [{"name": _label(m, limits.max_name_chars)} for m in metrics],
        "rows": rows,
        "build_steps": [
            {"name": _label(step, limits.max_name_chars), "status": _short(step_status, 20)}
            for step, step_status in state.build_steps[: limits.max_list_items]
        ],
        "build_status": _short(state.build_status, 20) if state.build_status else None,
        "unit": (
            f"unit {state.unit_index + 1:,} of {state.units:,}" if state.units > 1 and state.unit_index >= 0 else None
        ),
        "warnings": [clip(w, limits.max_text_chars) for w in state.warnings[:10]],
        "error": clip(state.error, limits.max_text_chars) if state.error else None,
        "report_key": _label(state.report_key, limits.max_name_chars + 80) if state.report_key else None,
    }
