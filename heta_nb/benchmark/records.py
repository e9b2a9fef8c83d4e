"""Benchmark records with Heta 0.1.2's fields and rules (spec section 2): cases, expected
answers and evidence, documents and run units. Unlike Heta, ids and names that would nest
or escape a raw key (``/``, ``\\``, ``..``) are refused, and mapping fields are read-only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from heta_nb._util.fs import read_regular_file
from heta_nb.model.json import heta_json_safe
from heta_nb.model.report import BenchmarkManifest
from heta_nb.model.summary import as_float

__all__ = [
    "CORPUS_UNIT",
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
            return read_regular_file(self.path)  # a regular file within the default limit, never a FIFO
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


#: The default run unit: every document and every case (as Heta's JSONL benchmark).
CORPUS_UNIT = BenchmarkRunUnit(unit_id="corpus")
