"""Sweeps on Dask: pairs on a real ``LocalCluster(processes=True, n_workers=2)``, progress by Dask events."""

from __future__ import annotations

from typing import Any

import pytest

import heta_nb
from heta_nb.sweeps import SweepState

distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")

pytestmark = pytest.mark.slow

SETTINGS = {"query_modes": ["good", "poor"], "evaluators": ["recall@1", "ndcg@3", "answer_contains"], "top_k": 3}


def test_pairs_run_on_a_client_and_give_the_threads_board(kit: Any, toy_board_reports: Any, tmp_path: Any) -> None:
    _, reference = toy_board_reports
    states: list[SweepState] = []
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    try:
        with distributed.Client(cluster) as client:
            board = heta_nb.sweep(
                kit.toy_pair(), kbs=kit.KBS, store=tmp_path, executor=client, progress=states.append, **SETTINGS
            )
    finally:
        cluster.close()
    last = states[-1]
    assert last.executor == "Dask (2 workers)" and last.dashboard and last.dashboard.startswith("http")
    assert [p.phase for p in last.pairs] == ["done"] * 6
    assert any(p.phase == "running" for s in states for p in s.pairs)  # updates came from the workers
    assert board.rows() == reference.rows()


def test_executor_dask_starts_and_closes_its_own_cluster(kit: Any, tmp_path: Any) -> None:
    states: list[SweepState] = []
    board = heta_nb.sweep(
        {"toy": kit.toy_pair()["toy-a"]}, kbs={"first": kit.first_kb}, store=tmp_path, executor="dask",
        max_workers=1, progress=states.append, **SETTINGS,
    )  # fmt: skip
    assert states[-1].executor == "Dask (1 worker)" and states[-1].pairs[0].phase == "done"
    assert board.report("first", "toy").case_count == 60
