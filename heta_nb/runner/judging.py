"""A run's LLM judges: bound to their sessions when the run starts, described in its report.

The engine calls :func:`start_judges` once its plan is made; a judge budget that runs
out calls back ``on_exhausted`` (the engine warns and stops the run, whose report is
then partial and says why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from heta_nb.llm_judges import bind_judges
from heta_nb.llm_judges.binding import judges_of
from heta_nb.llm_judges.session import JudgeSession
from heta_nb.runner.config import RunConfig
from heta_nb.runner.errors import RunError

__all__ = ["judge_names", "start_judges"]


def start_judges(
    config: RunConfig, store: Any, evaluators: Sequence[Any], on_exhausted: Callable[[str], None]
) -> list[JudgeSession]:
    """Bind the run's judges to their sessions (none: no judges).

    Raises:
        RunError: a judge without a model, or ``max_cost`` for a model with no price.
    """
    if config.executor is not None and judges_of(evaluators):
        raise RunError(
            "LLM judges run in this process: drop executor= (judge calls wait on the model, not the CPU; "
            "raise judge_limits.concurrency instead), or rescore the Dask run's report with heta_nb.rescore"
        )
    try:
        return bind_judges(
            evaluators, config.judges, store_root=getattr(store, "local_folder", None), on_exhausted=on_exhausted
        )
    except ValueError as exc:
        raise RunError(str(exc)) from None


def judge_names(evaluators: Sequence[Any]) -> tuple[str, ...]:
    """The score names of the run's LLM judges."""
    return tuple(judge.name for judge in judges_of(evaluators))
