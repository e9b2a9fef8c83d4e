"""The evaluation runner: settings, engine, events and the run handle (no display code here)."""

from __future__ import annotations

from heta_nb.runner.config import RunConfig
from heta_nb.runner.engine import Engine
from heta_nb.runner.errors import RunError, RunFailedError
from heta_nb.runner.events import Event, HetaRunWarning, event_from_dict
from heta_nb.runner.handle import EvaluationRun
from heta_nb.runner.kb import InvalidResponseError, KnowledgeBaseAdapter, normalize_response
from heta_nb.runner.merge import merge_reports
from heta_nb.runner.plan import shard_of
from heta_nb.runner.state import RunState, reduce, replay

__all__ = [
    "Engine",
    "EvaluationRun",
    "Event",
    "HetaRunWarning",
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
