"""The evaluation runner: engine, events and the run handle (no display code here)."""

from __future__ import annotations

from heta_nb.runner.engine import Engine, RunConfig, RunError, RunFailedError, shard_of
from heta_nb.runner.events import Event, RunState, event_from_dict, reduce, replay
from heta_nb.runner.handle import EvaluationRun
from heta_nb.runner.kb import InvalidResponseError, KnowledgeBaseAdapter, normalize_response
from heta_nb.runner.merge import merge_reports

__all__ = [
    "Engine",
    "EvaluationRun",
    "Event",
    "InvalidResponseError",
    "KnowledgeBaseAdapter",
    "RunConfig",
    "RunError",
    "RunFailedError",
    "RunState",
    "event_from_dict",
    "merge_reports",
    "normalize_response",
    "reduce",
    "replay",
    "shard_of",
]
