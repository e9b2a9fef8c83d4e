"""Benchmarks: Heta's benchmark types, loaders for common formats, and a lint."""

from __future__ import annotations

from heta_nb.benchmark.formats.beir import load_beir
from heta_nb.benchmark.formats.jsonl import load_jsonl_benchmark
from heta_nb.benchmark.formats.multihop_rag import load_multihop_rag
from heta_nb.benchmark.formats.parsing import BenchmarkDataWarning
from heta_nb.benchmark.load import load_benchmark
from heta_nb.benchmark.records import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkRunUnit,
)
from heta_nb.benchmark.types import Benchmark, benchmark_from_frame

__all__ = [
    "Benchmark",
    "BenchmarkCase",
    "BenchmarkDataWarning",
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
