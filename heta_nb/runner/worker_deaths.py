"""Batches whose Dask worker died: split, retried, and the case that kills its worker recorded as its error.

A case whose query (or evaluator) kills the worker process (out of memory, a native
crash, ``os._exit``) makes Dask retry its batch on other workers, killing them in turn,
until the scheduler gives up with ``KilledWorker`` (after its ``allowed-failures``
setting). :class:`Triage` decides what happens to such a batch:

- a batch of several cases is split in :data:`SPLIT` parts, each submitted again, down to
  single cases: the parts that kill nothing finish;
- a single case that killed its worker is a *suspect*: it is run again alone, once no
  other batch of the unit is in flight (a worker runs the case queued behind a killer
  and dies with it, so a case blamed next to others may be innocent);
- a suspect that kills its worker again, alone, is recorded as its result's error
  (``error_type`` :data:`WORKER_DIED`) and never sent again.

A batch *lost* rather than killed (cancelled by the scheduler because its input was
lost, a closed connection, a result "already forgotten") is sent again as it is, at most
:data:`MAX_LOST` times. Every case ends exactly once: with its result, or with its error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections import deque
from collections.abc import Sequence
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.runner.case import error_data, lost_case_result
from heta_nb.runner.dask_worker import BatchTask
from heta_nb.runner.encode import encode_result

__all__ = ["MAX_LOST", "SPLIT", "WORKER_DIED", "Triage", "death_kind", "worker_died_result"]

WORKER_DIED = "WorkerDied"
"""The ``error_type`` of a case that killed its worker."""
MESSAGE = "the worker died running this case"
MAX_LOST = 5
SPLIT = 8
"""A killed batch is cut into this many parts (fewer: single cases); a killer is found in a few rounds."""
"""How many times one batch may be lost (not killed) before the run fails."""


def death_kind(exc: BaseException, key: str) -> str | None:
    """``"killed"`` (this batch's worker died running it), ``"lost"`` (it or its input was lost), or None.

    None is a failure of the batch itself (its code raised): the run fails with it.
    """
    name = type(exc).__name__
    if name == "KilledWorker":
        task = getattr(exc, "task", key)
        return "killed" if str(task) == str(key) else "lost"  # else: its input (the unit's context) was killed
    if isinstance(exc, (asyncio.CancelledError, concurrent.futures.CancelledError)) or name in (
        "FutureCancelledError",
        "CommClosedError",
    ):
        return "lost"
    text = str(exc)
    if "already forgotten" in text or "lost dependencies" in text:
        return "lost"
    return None


class Triage:
    """What to send again after a worker died, and which cases killed their worker (see the module docstring)."""

    def __init__(self) -> None:
        self.suspects: deque[BatchTask] = deque()
        """Single cases that killed a worker, to be run again alone."""
        self.lost: dict[tuple[tuple[int, int, int], ...], int] = {}
        self.kills = 0
        """``KilledWorker`` verdicts seen (each is one or more worker deaths)."""

    def killed(self, batch: Sequence[BatchTask], alone: bool) -> tuple[list[list[BatchTask]], list[BatchTask]]:
        """After ``KilledWorker``: the batches to send now, and the cases to record as killers."""
        self.kills += 1
        if len(batch) > 1:
            parts = min(len(batch), SPLIT)
            return [list(batch[i * len(batch) // parts : (i + 1) * len(batch) // parts]) for i in range(parts)], []
        if alone:
            return [], [batch[0]]
        self.suspects.append(batch[0])
        return [], []

    def lost_again(self, batch: Sequence[BatchTask]) -> bool:
        """Count one loss of ``batch``; False once it was lost more than :data:`MAX_LOST` times."""
        ids = tuple(task[0] for task in batch)
        self.lost[ids] = count = self.lost.get(ids, 0) + 1
        return count <= MAX_LOST

    def next_suspect(self) -> BatchTask | None:
        """The next suspect to run alone (call when nothing else of the unit is in flight)."""
        return self.suspects.popleft() if self.suspects else None


def worker_died_result(
    task: BatchTask, unit_id: str, kb_name: str, exc: BaseException
) -> tuple[tuple[int, int, int], dict[str, Any], bytes]:
    """The recorded result of a case that killed its worker: ``(key, result JSON object, its JSON)``."""
    key, case, mode = task
    said = describe_error(exc, 300, with_type=True).replace("\n", " ")
    error = error_data(WORKER_DIED, f"{MESSAGE} (Dask: {said})", False, 1)
    data = lost_case_result(error, unit_id, kb_name, key[1], case, mode)
    data, encoded = encode_result(data, None, mode)
    return tuple(key), data, encoded  # type: ignore[return-value]
