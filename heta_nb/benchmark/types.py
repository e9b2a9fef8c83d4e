"""The :class:`Benchmark` container of Heta 0.1.2 (spec section 2): documents, query cases, run
units and default evaluators of one split, and how loaders and DataFrames become one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from heta_nb._util.frames import frame as frame_of
from heta_nb.benchmark.formats.frame import read_frame
from heta_nb.benchmark.records import CORPUS_UNIT, BenchmarkCase, BenchmarkDocument, BenchmarkRunUnit
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import BenchmarkManifest

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Benchmark", "benchmark_from_frame", "build_benchmark"]


class Benchmark(RichDisplay):
    """Documents, cases, run units and default evaluators of one benchmark split.

    heta_nb's runner also accepts any Heta ``BenchmarkProtocol`` object as is; this class
    is what heta_nb's own loaders produce, shaped so Heta's evaluators score it unchanged.

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

        rows = [{"case_id": c.case_id, **dict(c.labels)} for c in self.cases]
        return frame_of(rows)

    def cases_frame(self) -> pd.DataFrame:
        """One row per case: id, query, answers, evidence count and labels."""

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
        return frame_of(rows)

    @classmethod
    def from_frame(cls, frame: Any, **kwargs: Any) -> Benchmark:
        """Build a benchmark from a DataFrame; see :func:`benchmark_from_frame`."""
        return benchmark_from_frame(frame, **kwargs)


def build_benchmark(
    manifest: BenchmarkManifest,
    documents: list[BenchmarkDocument],
    cases: list[BenchmarkCase],
    *,
    evaluators: tuple[Any, ...],
    source: str,
    units: Iterable[BenchmarkRunUnit] | None = None,
) -> Benchmark:
    """A :class:`Benchmark` for loaders: duplicate or unknown ids are a :class:`BenchmarkFormatError`.

    Heta's loaders accept them and its runner fails later; heta_nb reports them when loading.
    """
    try:
        return Benchmark(manifest, documents, cases, units=units, evaluators=evaluators, source=source)
    except (TypeError, ValueError) as exc:
        raise BenchmarkFormatError(str(exc)) from None


def benchmark_from_frame(
    frame: pd.DataFrame,
    *,
    manifest: BenchmarkManifest | Mapping[str, Any] | Any,
    documents: pd.DataFrame | Iterable[BenchmarkDocument] | None = None,
    case_id: str = "case_id",
    query: str = "query",
    answers: str | None = "answers",
    evidence: str | None = "evidence",
    label_columns: Sequence[str] | None = None,
    evaluators: Sequence[Any] | None = None,
) -> Benchmark:
    """Build a benchmark from a DataFrame with one case per row.

    An answers cell holds a list of strings or one string (NaN/None: no answers). An
    evidence cell holds document ids (each becomes evidence with that ``reference_id``
    and a ``source_key_prefix`` locator for ``manifest``), evidence objects in the JSONL
    schema, or a mix. The answers and evidence columns may be absent when they keep
    their default names. Every other column is a label unless ``label_columns`` says
    which. Ids, answers and evidence ids that are floats with an integer value are read
    as integers (pandas stores an integer column with a missing value as float64, so
    ``42`` arrives as ``42.0``). A text cell holding a whole list (``"['a', 'b']"``, as
    ``read_csv`` gives back) is an error. Bare evidence ids missing from ``documents``
    (when given) give one :class:`BenchmarkDataWarning`.

    Args:
        frame: the cases.
        manifest: the benchmark manifest.
        documents: a DataFrame with ``document_id`` and ``text`` (and optional ``name``
            (default ``{id}.txt``), ``media_type`` (default ``text/plain``), ``metadata``),
            or a list of BenchmarkDocument.
        case_id, query, answers, evidence: column names (None: no such column).
        label_columns: the label columns (default: all other columns).
        evaluators: default evaluators (default ``("evidence_recall@5", "answer_contains")``).

    Raises:
        BenchmarkFormatError: naming the row index and column of a bad value.
    """
    contents = read_frame(
        frame,
        manifest=manifest,
        documents=documents,
        case_id=case_id,
        query=query,
        answers=answers,
        evidence=evidence,
        label_columns=label_columns,
        evaluators=evaluators,
    )
    return build_benchmark(
        contents.manifest, contents.documents, contents.cases, evaluators=contents.evaluators, source="DataFrame"
    )
