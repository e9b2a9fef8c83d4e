"""The bundled demo: the Saltmarsh Isles benchmark and two real Heta recipes.

``heta_nb.demo.load_benchmark()`` needs nothing but heta_nb. ``recipes()`` and
``run_demo()`` need the ``[heta]`` extra: they build two full-text (BM25) knowledge
bases that differ only in chunk size, add a small extractive answer mode so answer
metrics mean something, and evaluate both on the benchmark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from heta_nb.demo.settings import DATA, DEMO_EVALUATORS, DEMO_MODES, RECIPE_CHUNKS, load_benchmark

__all__ = [
    "DATA",
    "DEMO_EVALUATORS",
    "DEMO_MODES",
    "RECIPE_CHUNKS",
    "demo_query_engines",
    "load_benchmark",
    "recipes",
    "run_demo",
]


def recipes(root: str | Path) -> dict[str, Any]:
    """Two Heta recipes (fresh object stores under ``root``), keyed by name."""
    from heta_nb.demo.heta_recipes import demo_recipe

    return {name: demo_recipe(Path(root) / name, chunk, overlap) for name, (chunk, overlap) in RECIPE_CHUNKS.items()}


def demo_query_engines() -> Any:
    """Heta's default query engines plus the demo's ``extractive_answer`` mode."""
    from heta_nb.demo.heta_recipes import demo_query_engines as engines

    return engines()


def run_demo(*args: Any, **kwargs: Any) -> Any:
    """Evaluate both recipes and write the demo outputs; see :func:`heta_nb.demo.main.run_demo`."""
    from heta_nb.demo.main import run_demo as run

    return run(*args, **kwargs)
