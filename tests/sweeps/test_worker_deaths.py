"""The triage of batches whose Dask worker died (:mod:`heta_nb.runner.worker_deaths`), without a cluster."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from runner_support import toy_benchmark

from heta_nb.runner.worker_deaths import MAX_LOST, SPLIT, WORKER_DIED, Triage, death_kind, worker_died_result

pytestmark = pytest.mark.hostile


class KilledWorker(Exception):
    """Named as distributed's (the triage goes by the name and its ``task``)."""

    def __init__(self, task: str) -> None:
        super().__init__(f"Attempted to run task {task!r} on 2 different workers, but all those workers died")
        self.task = task


class FutureCancelledError(Exception):
    pass


def _tasks(n: int) -> list[Any]:
    cases = toy_benchmark(n).cases
    return [((0, i, 0), case, "good") for i, case in enumerate(cases)]


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (KilledWorker("batch-1"), "killed"),
        (KilledWorker("batch-context-0"), "lost"),  # its input died, not the batch
        (FutureCancelledError("batch-1 cancelled for reason: already forgotten."), "lost"),
        (asyncio.CancelledError(), "lost"),
        (RuntimeError("lost dependencies"), "lost"),
        (ValueError("the KB raised"), None),
    ],
)
def test_deaths_are_told_from_the_batchs_own_failures(exc: BaseException, kind: str | None) -> None:
    assert death_kind(exc, "batch-1") == kind


def test_a_killed_batch_is_split_then_a_single_case_suspected_then_recorded_when_it_kills_alone() -> None:
    triage = Triage()
    tasks = _tasks(20)
    parts, dead = triage.killed(tasks, alone=False)
    assert dead == [] and len(parts) == SPLIT and [t for p in parts for t in p] == tasks  # none lost or doubled
    assert triage.killed(tasks[:1], alone=False) == ([], []) and triage.next_suspect() == tasks[0]
    assert triage.next_suspect() is None
    assert triage.killed(tasks[:1], alone=True) == ([], [tasks[0]])


def test_a_batch_lost_too_often_fails_the_run() -> None:
    triage = Triage()
    assert all(triage.lost_again(_tasks(3)) for _ in range(MAX_LOST))
    assert not triage.lost_again(_tasks(3))


def test_the_recorded_result_names_the_worker_death_on_one_line() -> None:
    task = _tasks(3)[2]
    key, data, encoded = worker_died_result(task, "unit", "toy kb", KilledWorker("batch-7\nsecond line"))
    assert key == (0, 2, 0) and data["case_id"] == "c002" and data["query_mode"] == "good"
    error = json.loads(encoded)["error"]
    assert error["error_type"] == WORKER_DIED and "\n" not in error["message"]
    assert error["message"].startswith("the worker died running this case (Dask: KilledWorker: ")
