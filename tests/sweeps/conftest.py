"""Knowledge bases and benchmarks for the sweep tests: real heta_nb runs of small toy benchmarks.

The KBs differ on purpose (one ranks the right document first, one second, one at a
seeded random place), so the leaderboard has real differences and real ties to show.
"""

from __future__ import annotations

import random
import sys
from types import SimpleNamespace
from typing import Any

import cloudpickle
import pytest
from runner_support import MANIFEST, toy_benchmark

from heta_nb.benchmark import Benchmark

# functions defined here travel to worker processes by value (this module is not importable there)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _result(doc: int, rank: int) -> dict[str, Any]:
    key = f"raw/benchmarks/toy/test/d{doc}/d{doc}.txt"
    return {"id": f"chunk_{doc}_{rank}", "text": f"Document {doc} says answer{doc}.", "score": 1.0 / (rank + 1),
            "source": {"object_key": key}}  # fmt: skip


def _doc(query: str) -> int:
    return int(query.rstrip("?").split()[-1])


def first_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """The right document first, and the right answer."""
    doc = _doc(query)
    order = [doc, (doc + 1) % 6, (doc + 2) % 6]
    return {"mode": mode, "results": [_result(d, r) for r, d in enumerate(order[:top_k])], "answer": f"answer{doc}"}


def second_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """The right document second, no answer."""
    doc = _doc(query)
    order = [(doc + 1) % 6, doc, (doc + 2) % 6]
    return {"mode": mode, "results": [_result(d, r) for r, d in enumerate(order[:top_k])], "answer": None}


def random_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """The right document at a seeded random rank (0-2), or missing."""
    doc = _doc(query)
    rng = random.Random(f"{query}|{mode}")
    order = [(doc + 1) % 6, (doc + 2) % 6, (doc + 3) % 6]
    spot = rng.randrange(4)
    if spot < 3:
        order[spot] = doc
    answer = f"answer{doc}" if rng.random() < 0.5 else "no idea"
    return {"mode": mode, "results": [_result(d, r) for r, d in enumerate(order[:top_k])], "answer": answer}


KBS = {"first": first_kb, "second": second_kb, "random": random_kb}
EVALUATORS = ["recall@1", "ndcg@3", "answer_contains"]


def toy_pair() -> dict[str, Benchmark]:
    """Two benchmarks: the toy one (30 cases) and another version of it with other queries (24 cases)."""
    small = toy_benchmark(30)
    other = toy_benchmark(24)
    other = Benchmark(
        {**MANIFEST, "version": "2"}, other.documents, other.cases[::-1], evaluators=other.default_evaluators
    )
    return {"toy-a": small, "toy-b": other}


@pytest.fixture(scope="session")
def kit() -> SimpleNamespace:
    """What the sweep tests share (this conftest is not importable by name from them)."""
    return SimpleNamespace(KBS=KBS, EVALUATORS=EVALUATORS, first_kb=first_kb, toy_pair=toy_pair)


@pytest.fixture(scope="module")
def toy_board_reports(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A sweep of the three KBs over the two toy benchmarks (threads): its store and leaderboard."""
    import heta_nb

    store = tmp_path_factory.mktemp("sweep-store")
    board = heta_nb.sweep(
        toy_pair(),
        kbs=KBS,
        store=store,
        executor="threads",
        query_modes=["good", "poor"],
        evaluators=EVALUATORS,
        top_k=3,
        progress=False,
    )
    return store, board
