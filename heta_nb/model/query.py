"""A knowledge base's answer to one query (a case result's ``response``) and its results,
citations and trace events, as Heta serializes them in a report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from heta_nb.model.fields import Items, JsonObject, Number, Text
from heta_nb.model.record import Record, RichDisplay

__all__ = ["QueryCitation", "QueryResponse", "QueryResult", "QueryTraceEvent"]


class QueryTraceEvent(Record):
    """One step an engine reports while serving a query (when ``trace=True``)."""

    __slots__ = ()

    stage: Text[str] = Text("Pipeline stage that produced the event (non-blank).")
    message: Text[str] = Text("What happened (non-blank).")
    metadata: JsonObject = JsonObject("Free-form details (made JSON-safe as Heta does).", heta_safe=True)

    def __init__(self, *, stage: str, message: str, metadata: Mapping[str, Any] | None = None) -> None:
        self._assign({"stage": stage, "message": message, "metadata": metadata})


class QueryCitation(Record):
    """A citation or provenance item attached to a response."""

    __slots__ = ()

    id: Text[str] = Text("Citation id, e.g. ``citation_1`` (non-blank).")
    result_id: Text[str | None] = Text("Id of the result it cites, if any.", optional=True)
    source: JsonObject = JsonObject("Provenance of the cited text.", heta_safe=True)
    text: Text[str | None] = Text("The cited text, if any.", optional=True)
    metadata: JsonObject = JsonObject("Free-form details.", heta_safe=True)

    def __init__(
        self,
        *,
        id: str,  # noqa: A002 - Heta's field name
        result_id: str | None = None,
        source: Mapping[str, Any] | None = None,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._assign({"id": id, "result_id": result_id, "source": source, "text": text, "metadata": metadata})


class QueryResult(Record):
    """One ranked result (usually a chunk) returned by a query engine."""

    __slots__ = ()

    id: Text[str] = Text("Result id, e.g. a chunk id (non-blank).")
    text: Text[str] = Text("Result text (non-blank: Heta cannot return an empty result).")
    score: Number[float | None] = Number(
        "Engine score as produced (BM25, cosine...), or null.", optional=True, default=None
    )
    kind: Text[str] = Text("Result kind, ``chunk`` by default.", default="chunk")
    source: JsonObject = JsonObject(
        "Provenance: ``document_id`` (Heta's parsed id), ``object_key`` (raw key), ...",
        heta_safe=True,
    )
    metadata: JsonObject = JsonObject("Engine details (ranking, index, ...).", heta_safe=True)

    def __init__(
        self,
        *,
        id: str,  # noqa: A002 - Heta's field name
        text: str,
        score: float | None = None,
        kind: str = "chunk",
        source: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._assign({"id": id, "text": text, "score": score, "kind": kind, "source": source, "metadata": metadata})

    def source_keys(self) -> tuple[str, ...]:
        """Every raw object key this result points at (source, origin and metadata)."""
        keys: list[str] = []
        for mapping in _source_mappings(self):
            for name in ("object_key", "source_key"):
                value = mapping.get(name)
                if isinstance(value, str) and value.strip():
                    keys.append(value)
            for name in ("object_keys", "source_keys"):
                values = mapping.get(name)
                if isinstance(values, (list, tuple)):
                    keys.extend(v for v in values if isinstance(v, str) and v.strip())
        return tuple(dict.fromkeys(keys))


def _source_mappings(result: QueryResult) -> Iterable[Mapping[str, Any]]:
    source = result.source
    yield source
    origin = source.get("origin")
    if isinstance(origin, Mapping):
        yield origin
    metadata = result.metadata
    origin_key = metadata.get("origin_source_key")
    if isinstance(origin_key, str) and origin_key.strip():
        yield {"object_key": origin_key}
    yield metadata


class QueryResponse(RichDisplay, Record):
    """A knowledge base's response to one query in one mode.

    Field for field the ``response`` object of Heta 0.1.2's ``report.json``
    (``{mode, results, answer, citations, trace, metadata}``). Heta's in-memory
    ``QueryResponse`` also has ``insights``; Heta drops them from reports, and so do we.
    """

    __slots__ = ()

    mode: Text[str] = Text("Query mode that answered (non-blank).")
    results: Items[QueryResult] = Items("Ranked results, best first.", QueryResult)
    answer: Text[str | None] = Text("Generated answer, or null when the mode does not answer.", optional=True)
    citations: Items[QueryCitation] = Items("Citations derived from the results.", QueryCitation)
    trace: Items[QueryTraceEvent] = Items("Trace events (empty unless tracing was on).", QueryTraceEvent)
    metadata: JsonObject = JsonObject("Engine details (index, ranking, answer_generation...).", heta_safe=True)

    def __init__(
        self,
        *,
        mode: str,
        results: Iterable[QueryResult | Mapping[str, Any]] = (),
        answer: str | None = None,
        citations: Iterable[QueryCitation | Mapping[str, Any]] = (),
        trace: Iterable[QueryTraceEvent | Mapping[str, Any]] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._assign(
            {
                "mode": mode,
                "results": results,
                "answer": answer,
                "citations": citations,
                "trace": trace,
                "metadata": metadata,
            }
        )
