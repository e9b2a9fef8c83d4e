"""Paired comparison of recipes (reports) or query modes scored on the same benchmark cases.

``compare(*reports)`` builds a :class:`Comparison`; see :func:`compare` for the method.
``history(store, kb=...)`` lines up a recipe's stored reports in time order (:class:`History`),
each change from the report before being ``compare``'s. ``plan(comparison_or_report, metric,
difference=...)`` says how many cases it takes to tell a difference apart; ``recipe_changes(a, b)``
what differs between two reports' recipes and knowledge bases.
"""

from __future__ import annotations

from heta_nb.comparison.build import compare
from heta_nb.comparison.history_result import HISTORY_COLUMNS, History
from heta_nb.comparison.notes import HetaComparisonWarning
from heta_nb.comparison.over_time import history
from heta_nb.comparison.overlap import MetricOverlap, Overlap, SystemOverlap
from heta_nb.comparison.planning import Plan, plan
from heta_nb.comparison.recipes import ManifestChange, RecipeChanges, recipe_changes
from heta_nb.comparison.result import SUMMARY_COLUMNS, Comparison
from heta_nb.comparison.systems import System
from heta_nb.stats.format import p_digits, p_text

__all__ = [
    "HISTORY_COLUMNS",
    "SUMMARY_COLUMNS",
    "Comparison",
    "HetaComparisonWarning",
    "History",
    "ManifestChange",
    "MetricOverlap",
    "Overlap",
    "Plan",
    "RecipeChanges",
    "System",
    "SystemOverlap",
    "compare",
    "history",
    "p_digits",
    "p_text",
    "plan",
    "recipe_changes",
]
