"""Benchmark-side types with Heta 0.1.2's fields and rules (spec section 2).

A :class:`Benchmark` is documents + query cases (with expected answers and evidence)
+ run units + default evaluators. heta_nb's runner also accepts any Heta
``BenchmarkProtocol`` object as is; these classes are what heta_nb's own loaders
produce, and they are shaped so Heta's evaluators can score them unchanged.

Differences from Heta, all on the side of safety: document ids and names that
would nest or escape the raw key (``/``, ``\\``, ``..``) are refused, and mapping
fields are read-only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from heta_nb.model.json import heta_json_safe
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import BenchmarkManifest
from heta_nb.model.summary import as_float

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "Benchmark",
    "BenchmarkCase",
    "BenchmarkDocument",
    "BenchmarkEvidence",
    "BenchmarkExpected",
    "BenchmarkRunUnit",
]


def _required(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    stripped = value.strip()
    if not stripped:
        raise ValueError(f"{name} must not be empty")
    return stripped


def _optional(value: Any, name: str) -> str | None:
    return None if value is None else _required(value, name)


def _frozen(value: Mapping[str, Any] | None, name: str) -> Mapping[str, Any]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping, got {type(value).__name__}")
    return MappingProxyType(dict(value))


def _segment(value: Any, name: str) -> str:
    """A required text that must also be usable as one path segment of a raw key."""
    text = _required(value, name)
    if "/" in text or "\\" in text or text in (".", "..") or "\x00" in text:
        raise ValueError(f"{name} {text!r} cannot be used in an object key (no '/', '\\', '.', '..')")
    return text


def _set(obj: object, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class BenchmarkEvidence:
    """Gold evidence: a reference id, a locator (e.g. ``source_key_prefix``) and/or text."""

    reference_id: str | None = None
    locator: Mapping[str, Any] = field(default_factory=dict)
    text: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, "reference_id", _optional(self.reference_id, "evidence.reference_id"))
        _set(self, "locator", _frozen(self.locator, "evidence.locator"))
        _set(self, "text", _optional(self.text, "evidence.text"))
        _set(self, "metadata", _frozen(self.metadata, "evidence.metadata"))
        if self.reference_id is None and not self.locator and self.text is None:
            raise ValueError("evidence must set at least one of reference_id, locator, or text")

    @property
    def relevance(self) -> float:
        """Graded relevance from ``metadata.relevance`` (default 1)."""
        value = self.metadata.get("relevance", 1)
        try:
            return as_float(value)  # an integer beyond the float range is an infinity
        except (TypeError, ValueError):
            return 1.0

    def to_dict(self) -> dict[str, Any]:
        """Heta's serialized form."""
        return {
            "reference_id": self.reference_id,
            "locator": dict(self.locator),
            "text": self.text,
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class BenchmarkExpected:
    """Expected answers, evidence and (optionally) a structured value of a case."""

    answers: tuple[str, ...] = ()
    evidence: tuple[BenchmarkEvidence, ...] = ()
    value: Any | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.answers, str):
            raise TypeError("expected.answers must be a sequence of strings, not one string")
        _set(self, "answers", tuple(_required(a, "expected.answers[]") for a in self.answers))
        evidence = tuple(self.evidence)
        for item in evidence:
            if not isinstance(item, BenchmarkEvidence):
                raise TypeError(f"expected.evidence items must be BenchmarkEvidence, got {type(item).__name__}")
        _set(self, "evidence", evidence)
        _set(self, "metadata", _frozen(self.metadata, "expected.metadata"))

    def to_dict(self) -> dict[str, Any]:
        """Heta's serialized form (``value`` made JSON-safe as Heta does)."""
        return {
            "answers": list(self.answers),
            "evidence": [item.to_dict() for item in self.evidence],
            "value": heta_json_safe(self.value),
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class BenchmarkCase:
    """One query with its expected output, labels (for slicing) and metadata."""

    case_id: str
    query: str
    expected: BenchmarkExpected = field(default_factory=BenchmarkExpected)
    labels: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, "case_id", _required(self.case_id, "case_id"))
        _set(self, "query", _required(self.query, "query"))
        if not isinstance(self.expected, BenchmarkExpected):
            raise TypeError(f"expected must be a BenchmarkExpected, got {type(self.expected).__name__}")
        _set(self, "labels", _frozen(self.labels, "labels"))
        _set(self, "metadata", _frozen(self.metadata, "metadata"))

    def to_dict(self) -> dict[str, Any]:
        """Heta's serialized form."""
        return {
            "case_id": self.case_id,
            "query": self.query,
            "expected": self.expected.to_dict(),
            "labels": dict(self.labels),
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class BenchmarkDocument:
    """One source document, written to the KB's object store under its raw key.

    Exactly one of ``data`` (bytes), ``path`` (a local file) or ``source_uri`` is set.
    """

    document_id: str
    name: str
    media_type: str
    data: bytes | None = None
    path: Path | None = None
    source_uri: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, "document_id", _segment(self.document_id, "document_id"))
        _set(self, "name", _segment(self.name, "document name"))
        _set(self, "media_type", _required(self.media_type, "media_type"))
        _set(self, "path", Path(self.path) if self.path is not None else None)
        _set(self, "source_uri", _optional(self.source_uri, "source_uri"))
        _set(self, "metadata", _frozen(self.metadata, "metadata"))
        if sum(x is not None for x in (self.data, self.path, self.source_uri)) != 1:
            raise ValueError("exactly one of data, path, or source_uri must be set")

    def raw_key(self, manifest: BenchmarkManifest | Any) -> str:
        """Heta's raw key: ``raw/benchmarks/{name}/{split}/{document_id}/{name}``."""
        return f"raw/benchmarks/{manifest.name}/{manifest.split}/{self.document_id}/{self.name}"

    def read_bytes(self) -> bytes:
        """The document's content (``source_uri`` documents cannot be read offline)."""
        if self.data is not None:
            return self.data
        if self.path is not None:
            return self.path.read_bytes()
        raise NotImplementedError(f"document {self.document_id}: source_uri documents must be downloaded first")

    def to_dict(self) -> dict[str, Any]:
        """Heta's serialized form (``has_data`` instead of the bytes)."""
        return {
            "document_id": self.document_id,
            "name": self.name,
            "media_type": self.media_type,
            "has_data": self.data is not None,
            "path": str(self.path) if self.path is not None else None,
            "source_uri": self.source_uri,
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class BenchmarkRunUnit:
    """One KB build-and-query unit; empty id tuples mean "all documents / cases"."""

    unit_id: str
    document_ids: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, "unit_id", _required(self.unit_id, "unit_id"))
        _set(self, "document_ids", tuple(_required(i, "unit.document_ids[]") for i in self.document_ids))
        _set(self, "case_ids", tuple(_required(i, "unit.case_ids[]") for i in self.case_ids))
        _set(self, "metadata", _frozen(self.metadata, "unit.metadata"))

    @property
    def is_corpus_level(self) -> bool:
        """True when the unit uses every document and every case."""
        return not self.document_ids and not self.case_ids

    def to_dict(self) -> dict[str, Any]:
        """Heta's serialized form."""
        return {
            "unit_id": self.unit_id,
            "document_ids": list(self.document_ids),
            "case_ids": list(self.case_ids),
            "metadata": dict(self.metadata),
        }


CORPUS_UNIT = BenchmarkRunUnit(unit_id="corpus")


class Benchmark(RichDisplay):
    """Documents, cases, run units and default evaluators of one benchmark split.

    Args:
        manifest: identity (name, version, split, task type, license...).
        documents: the corpus.
        cases: query cases, in order (the report keeps this order).
        units: run units; default one corpus-level unit, as Heta's JSONL benchmark.
        evaluators: default evaluators (objects, functions or names such as
            ``"evidence_recall@5"``), used when a run does not pass its own.
        source: where it was loaded from, for messages.

    Raises:
        ValueError: duplicate document, case or unit ids, or units naming unknown ids.
    """

    def __init__(
        self,
        manifest: BenchmarkManifest | Mapping[str, Any],
        documents: Iterable[BenchmarkDocument] = (),
        cases: Iterable[BenchmarkCase] = (),
        *,
        units: Iterable[BenchmarkRunUnit] | None = None,
        evaluators: Sequence[Any] = (),
        source: str | None = None,
    ) -> None:
        self.manifest = BenchmarkManifest.coerce(manifest)
        self.documents: tuple[BenchmarkDocument, ...] = tuple(documents)
        self.cases: tuple[BenchmarkCase, ...] = tuple(cases)
        self.units: tuple[BenchmarkRunUnit, ...] = tuple(units) if units is not None else (CORPUS_UNIT,)
        self.default_evaluators: tuple[Any, ...] = tuple(evaluators)
        self.source = source
        where = f"{source}: " if source else ""
        for label, ids in (
            ("document_id", [d.document_id for d in self.documents]),
            ("case_id", [c.case_id for c in self.cases]),
            ("unit_id", [u.unit_id for u in self.units]),
        ):
            duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
            if duplicates:
                raise ValueError(f"{where}duplicate {label} values: {duplicates[:10]}")
        self._documents = {d.document_id: d for d in self.documents}
        self._cases = {c.case_id: c for c in self.cases}
        for unit in self.units:
            unknown_docs = [i for i in unit.document_ids if i not in self._documents]
            unknown_cases = [i for i in unit.case_ids if i not in self._cases]
            if unknown_docs or unknown_cases:
                raise ValueError(
                    f"{where}run unit {unit.unit_id!r} references unknown "
                    f"{'documents ' + str(unknown_docs[:10]) if unknown_docs else ''}"
                    f"{' and ' if unknown_docs and unknown_cases else ''}"
                    f"{'cases ' + str(unknown_cases[:10]) if unknown_cases else ''}"
                )

    def __repr__(self) -> str:
        return (
            f"Benchmark({self.manifest.key!r}, documents={len(self.documents)}, cases={len(self.cases)}, "
            f"units={len(self.units)})"
        )

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[BenchmarkCase]:
        return iter(self.cases)

    def case(self, case_id: str) -> BenchmarkCase:
        """The case with this id (KeyError naming the benchmark if absent)."""
        try:
            return self._cases[case_id]
        except KeyError:
            raise KeyError(f"benchmark {self.manifest.key!r} has no case {case_id!r}") from None

    def document(self, document_id: str) -> BenchmarkDocument:
        """The document with this id."""
        try:
            return self._documents[document_id]
        except KeyError:
            raise KeyError(f"benchmark {self.manifest.key!r} has no document {document_id!r}") from None

    def unit_documents(self, unit: BenchmarkRunUnit) -> tuple[BenchmarkDocument, ...]:
        """The documents of one run unit."""
        if not unit.document_ids:
            return self.documents
        return tuple(self._documents[i] for i in unit.document_ids)

    def unit_cases(self, unit: BenchmarkRunUnit) -> tuple[BenchmarkCase, ...]:
        """The cases of one run unit, in benchmark order."""
        if not unit.case_ids:
            return self.cases
        return tuple(self._cases[i] for i in unit.case_ids)

    def evaluators(self) -> tuple[Any, ...]:
        """Default evaluators (Heta's ``BenchmarkProtocol.evaluators()``)."""
        return self.default_evaluators

    def raw_keys(self) -> tuple[str, ...]:
        """Raw object keys of every document (where the runner writes them)."""
        return tuple(d.raw_key(self.manifest) for d in self.documents)

    def labels_frame(self) -> pd.DataFrame:
        """One row per case: ``case_id`` plus one column per label (for slicing reports)."""
        import pandas as pd

        rows = [{"case_id": c.case_id, **dict(c.labels)} for c in self.cases]
        return pd.DataFrame(rows)

    def cases_frame(self) -> pd.DataFrame:
        """One row per case: id, query, answers, evidence count and labels."""
        import pandas as pd

        rows = []
        for c in self.cases:
            rows.append(
                {
                    "case_id": c.case_id,
                    "query": c.query,
                    "answers": list(c.expected.answers),
                    "n_evidence": len(c.expected.evidence),
                    **{f"label.{k}": v for k, v in c.labels.items()},
                }
            )
        return pd.DataFrame(rows)

    @classmethod
    def from_frame(cls, frame: Any, **kwargs: Any) -> Benchmark:
        """Build a benchmark from a DataFrame; see :func:`heta_nb.benchmark.loaders.from_frame`."""
        from heta_nb.benchmark.loaders import benchmark_from_frame

        return benchmark_from_frame(frame, **kwargs)
