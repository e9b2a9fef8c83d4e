"""Readers of benchmark formats: Heta JSONL, BEIR, MultiHop-RAG and DataFrames, one module each,
with what they share in :mod:`~heta_nb.benchmark.formats.parsing`. Import from the modules:
this package imports nothing, so ``types`` can use ``frame`` while the other readers use ``types``."""

from __future__ import annotations

__all__: list[str] = []
