"""Which group each compared case belongs to: the clusters of ``compare(cluster_by=...)`` and the
slices of :meth:`~heta_nb.comparison.Comparison.slices`.

A grouping is named by ``by``:

* ``"document"``: the case's source document, the first document its expected evidence cites
  (the document the question was written from); a case without expected evidence has none.
* ``"linked_documents"``: cases linked through any shared evidence document are one group
  (connected components: a case citing documents 1 and 2 joins the cases of both). The most
  cautious clustering, but multi-hop benchmarks can collapse into one large group.

Both read the expected evidence, so they need the benchmark (reports do not store it).
* ``"labels.KEY"`` / ``"metadata.KEY"`` / ``"KEY"``: a case label or metadata field of the
  benchmark's case (``"KEY"`` looks in the labels, then the metadata). Needs the benchmark.
* a mapping ``{case_id: group}`` (no benchmark needed);
* a function of the benchmark case (or of the ``case_id`` without a benchmark).

A case the grouping says nothing about gets ``None`` (:data:`NO_GROUP` in a slice; its own
cluster when clustering: it shares nothing with the others).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

__all__ = ["NO_GROUP", "Grouping", "as_cluster_labels", "case_groups", "group_label", "grouping_name"]

NO_GROUP = "(none)"
"""The slice of the cases the grouping has no value for."""


def grouping_name(by: Any) -> str:
    """``by`` in words for the outputs: ``"document"``, ``"labels.topic"``, ``"a mapping"``..."""
    if isinstance(by, str):
        return by
    if isinstance(by, Mapping):
        return "a case_id mapping"
    return getattr(by, "__name__", "a function")


def group_label(value: Any) -> Hashable | None:
    """A group value as a hashable label (lists and dicts as JSON text); None / NaN / "" are no group."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return value
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def case_groups(by: Any, case_ids: Sequence[str], benchmark: Any = None) -> list[Hashable | None]:
    """Each case's group (None: the grouping has no value for it), in ``case_ids`` order.

    Raises:
        ValueError: ``by`` needs the benchmark and none was given, names a field no case has,
            or is neither a string, a mapping nor a function.
    """
    if isinstance(by, Mapping):
        return [group_label(by.get(case_id)) for case_id in case_ids]
    if callable(by) and not isinstance(by, str):
        if benchmark is None:
            return [group_label(by(case_id)) for case_id in case_ids]
        cases = _cases(benchmark)
        return [group_label(by(cases[c])) if c in cases else None for c in case_ids]
    if not isinstance(by, str) or not by.strip():
        raise ValueError(
            f"by must be 'document', 'linked_documents', a label or metadata field, a mapping or a function; got {by!r}"
        )
    if benchmark is None:
        raise ValueError(
            f"grouping by {by!r} reads the benchmark's cases (reports do not store labels or evidence): "
            "pass benchmark=, or a {case_id: group} mapping"
        )
    cases = _cases(benchmark)
    if by == "document":
        firsts = [_evidence_documents(cases[c])[:1] if c in cases else [] for c in case_ids]
        return [docs[0] if docs else None for docs in firsts]
    if by == "linked_documents":
        return _document_clusters(case_ids, cases)
    return _field_groups(by, case_ids, cases)


def _cases(benchmark: Any) -> dict[str, Any]:
    """``{case_id: case}`` of a benchmark (heta_nb's or Heta's: anything with ``cases``)."""
    return {str(case.case_id): case for case in getattr(benchmark, "cases", ())}


def _field_groups(by: str, case_ids: Sequence[str], cases: Mapping[str, Any]) -> list[Hashable | None]:
    """Each case's ``labels.KEY`` / ``metadata.KEY`` / ``KEY`` value."""
    place, dot, key = by.partition(".")
    places: tuple[str, ...] = (place,) if dot and place in ("labels", "metadata") else ("labels", "metadata")
    key = key if dot and place in ("labels", "metadata") else by
    found = False
    out: list[Hashable | None] = []
    for case_id in case_ids:
        case = cases.get(case_id)
        value = None
        for where in places:
            mapping = getattr(case, where, None) or {}
            if key in mapping:
                value, found = mapping[key], True
                break
        out.append(group_label(value))
    if not found:
        known = sorted({k for c in cases.values() for w in places for k in (getattr(c, w, None) or {})})
        raise ValueError(f"no case has {by!r}; the cases have {', '.join(map(repr, known)) or 'no such fields'}")
    return out


def _evidence_documents(case: Any) -> list[str]:
    """The documents a case's expected evidence cites (``reference_id``, else ``document_id``)."""
    expected = getattr(case, "expected", None)
    found = []
    for item in getattr(expected, "evidence", ()) or ():
        ref = getattr(item, "reference_id", None) or getattr(item, "document_id", None)
        if ref:
            found.append(str(ref))
    return found


def _document_clusters(case_ids: Sequence[str], cases: Mapping[str, Any]) -> list[Hashable | None]:
    """Connected components of cases linked by a shared evidence document (union-find on documents);
    each cluster is named by its smallest document id."""
    parent: dict[str, str] = {}

    def root(doc: str) -> str:
        while parent[doc] != doc:
            parent[doc] = parent[parent[doc]]
            doc = parent[doc]
        return doc

    per_case: list[list[str]] = []
    for case_id in case_ids:
        docs = _evidence_documents(cases[case_id]) if case_id in cases else []
        per_case.append(docs)
        for doc in docs:
            parent.setdefault(doc, doc)
        for doc in docs[1:]:
            a, b = root(docs[0]), root(doc)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return [root(docs[0]) if docs else None for docs in per_case]


def as_cluster_labels(groups: Sequence[Hashable | None]) -> list[Hashable]:
    """Groups as cluster labels: a case with no group is a cluster of its own."""
    return [("\0case", i) if g is None else g for i, g in enumerate(groups)]


Grouping = str | Mapping[str, Any] | Callable[[Any], Any]
"""What ``by`` may be."""
