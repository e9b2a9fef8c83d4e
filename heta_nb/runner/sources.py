"""One view of a benchmark for the engine, whatever was passed as ``benchmark=``.

Accepted: a heta_nb :class:`~heta_nb.benchmark.Benchmark`; a path to a benchmark
folder (see :func:`heta_nb.benchmark.load_benchmark`); or any Heta
``BenchmarkProtocol`` object (async ``prepare`` / ``documents`` / ``cases`` /
``run_units``, sync ``evaluators``), used as is.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heta_nb.benchmark.types import Benchmark
from heta_nb.model.report import BenchmarkManifest

__all__ = ["BenchmarkSource", "load_source"]


@dataclass
class BenchmarkSource:
    """Manifest, documents, cases, run units and default evaluators, all in memory."""

    manifest: BenchmarkManifest
    documents: tuple[Any, ...]
    cases: tuple[Any, ...]
    units: tuple[Any, ...]
    evaluators: tuple[Any, ...]
    original: Any = None

    def __post_init__(self) -> None:
        self._cases = {c.case_id: c for c in self.cases}
        self._documents = {d.document_id: d for d in self.documents}

    def unit_cases(self, unit: Any) -> list[Any]:
        """The unit's cases in benchmark order (all of them for a corpus-level unit)."""
        ids = tuple(getattr(unit, "case_ids", ()))
        if not ids:
            return list(self.cases)
        missing = [i for i in ids if i not in self._cases]
        if missing:
            raise ValueError(f"run unit {unit.unit_id!r} references unknown cases: {missing[:10]}")
        return [self._cases[i] for i in ids]

    def unit_documents(self, unit: Any) -> list[Any]:
        """The unit's documents."""
        ids = tuple(getattr(unit, "document_ids", ()))
        if not ids:
            return list(self.documents)
        missing = [i for i in ids if i not in self._documents]
        if missing:
            raise ValueError(f"run unit {unit.unit_id!r} references unknown documents: {missing[:10]}")
        return [self._documents[i] for i in ids]

    def raw_keys(self) -> list[str]:
        """Raw keys of every document."""
        return [d.raw_key(self.manifest) for d in self.documents]


def _unique(label: str, values: Sequence[str]) -> None:
    duplicates = sorted(v for v, n in Counter(values).items() if n > 1)
    if duplicates:
        raise ValueError(f"benchmark produced duplicate {label} values: {duplicates[:10]}")


def _workspace(root: Any) -> Any:
    user = getattr(os, "getuid", lambda: 0)()
    base = Path(root) if root is not None else Path(tempfile.gettempdir()) / f"heta_nb-workspace-{user}"
    try:
        from heta_framework.evaluation import BenchmarkWorkspace

        workspace = BenchmarkWorkspace(root_dir=base, cache_dir=base / "cache")
    except ImportError:  # a non-Heta protocol object: any object with the same fields will do

        @dataclass(frozen=True)
        class _Workspace:
            root_dir: Path
            cache_dir: Path
            output_dir: Path | None = None

        workspace = _Workspace(base, base / "cache")
    Path(workspace.cache_dir).mkdir(parents=True, exist_ok=True)
    return workspace


async def load_source(benchmark: Any, *, workspace: Any = None) -> BenchmarkSource:
    """Gather everything the engine needs from ``benchmark`` (see the module docstring)."""
    if isinstance(benchmark, (str, os.PathLike)):
        from heta_nb.benchmark.load import load_benchmark

        benchmark = load_benchmark(benchmark)
    if isinstance(benchmark, Benchmark):
        return BenchmarkSource(
            manifest=benchmark.manifest,
            documents=benchmark.documents,
            cases=benchmark.cases,
            units=benchmark.units,
            evaluators=benchmark.default_evaluators,
            original=benchmark,
        )
    needed = ("prepare", "documents", "cases", "run_units")
    if not all(callable(getattr(benchmark, name, None)) for name in needed) or not hasattr(benchmark, "manifest"):
        raise TypeError(
            f"benchmark must be a heta_nb Benchmark, a benchmark folder, or a Heta BenchmarkProtocol "
            f"object; got {type(benchmark).__name__}"
        )
    prepared = await benchmark.prepare(_workspace(workspace))
    documents = tuple([d async for d in benchmark.documents(prepared)])
    cases = tuple([c async for c in benchmark.cases(prepared)])
    units = tuple([u async for u in benchmark.run_units(prepared)])
    if not cases:
        raise ValueError("benchmark produced no cases")
    if not units:  # Heta's runner refuses it too (a corpus unit would be a guess)
        raise ValueError("benchmark produced no run units (yield BenchmarkRunUnit(unit_id='corpus') for one corpus)")
    _unique("document_id", [d.document_id for d in documents])
    _unique("case_id", [c.case_id for c in cases])
    _unique("unit_id", [u.unit_id for u in units])
    evaluators = tuple(benchmark.evaluators()) if callable(getattr(benchmark, "evaluators", None)) else ()
    return BenchmarkSource(
        manifest=BenchmarkManifest.coerce(benchmark.manifest),
        documents=documents,
        cases=cases,
        units=units,
        evaluators=evaluators,
        original=benchmark,
    )
