"""Benchmarks: Heta's benchmark types, loaders for common formats, and a lint."""

from __future__ import annotations

from heta_nb.benchmark.loaders import (
    benchmark_from_frame,
    load_beir,
    load_benchmark,
    load_jsonl_benchmark,
    load_multihop_rag,
)
from heta_nb.benchmark.types import (
    Benchmark,
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkRunUnit,
)

__all__ = [
    "Benchmark",
    "BenchmarkCase",
    "BenchmarkDocument",
    "BenchmarkEvidence",
    "BenchmarkExpected",
    "BenchmarkRunUnit",
    "benchmark_from_frame",
    "load_beir",
    "load_benchmark",
    "load_jsonl_benchmark",
    "load_multihop_rag",
]
