"""The demo's fixed settings (modes, evaluators, recipe chunk sizes) and its bundled benchmark."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.benchmark import Benchmark

__all__ = ["DATA", "DEMO_EVALUATORS", "DEMO_MODES", "RECIPE_CHUNKS", "load_benchmark"]

DATA = Path(str(resources.files("heta_nb") / "demo" / "data"))
"""Folder of the bundled benchmark (Heta's JSONL layout plus ``manifest.json``)."""

DEMO_MODES = ("full_text_search", "extractive_answer")
DEMO_EVALUATORS = ("evidence_recall@5", "recall@5", "ndcg@5", "mrr@5", "answer_contains", "answer_f1")
RECIPE_CHUNKS = {"small-chunks": (160, 20), "large-chunks": (700, 60)}
"""Recipe name -> (chunk size in characters, overlap)."""


def load_benchmark() -> Benchmark:
    """The Saltmarsh Isles benchmark: 80 fictional documents, 95 multi-hop QA cases."""
    from heta_nb.benchmark.load import load_benchmark as load

    return load(DATA)
