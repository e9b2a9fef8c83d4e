"""Sweeps of many recipes over many benchmarks, and the :class:`Leaderboard` of their results.

``heta_nb.sweep(benchmarks, recipes, store=...)`` evaluates every pair (in parallel,
locally or on Dask), saves and reuses the reports, and returns a :class:`Leaderboard`;
``Leaderboard.from_store(store)`` rebuilds one from saved reports (``heta-nb leaderboard``).
"""

from __future__ import annotations

from heta_nb.sweeps.board import Cell
from heta_nb.sweeps.leaderboard import Leaderboard
from heta_nb.sweeps.plan import SweepError
from heta_nb.sweeps.progress import SweepConsole, SweepWidget
from heta_nb.sweeps.run import SweepWarning, sweep
from heta_nb.sweeps.status import PairStatus, SweepState

__all__ = [
    "Cell",
    "Leaderboard",
    "PairStatus",
    "SweepConsole",
    "SweepError",
    "SweepState",
    "SweepWarning",
    "SweepWidget",
    "sweep",
]
