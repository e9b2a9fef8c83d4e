"""The evaluation entry points: ``evaluate``, ``evaluate_async`` and ``start``.

They wire the engine (which knows nothing about displays) to a progress view:
the ipywidgets view in a notebook, a one-line console display elsewhere, nothing
with ``progress=False``, or any callable that takes events. Their parameters and
``Args:`` sections follow :class:`~heta_nb.runner.RunConfig` and :class:`ViewOptions`
(``HETA_UPDATE_DOCS=1 pytest tests/api/test_docs.py`` rewrites them from there).
"""

from __future__ import annotations

from heta_nb.api.awaitable import evaluate_async
from heta_nb.api.background import start
from heta_nb.api.blocking import evaluate
from heta_nb.api.estimation import JudgeEstimate, estimate
from heta_nb.api.rescoring import rescore
from heta_nb.api.views import ViewOptions

__all__ = ["JudgeEstimate", "ViewOptions", "estimate", "evaluate", "evaluate_async", "rescore", "start"]
