"""heta_nb: Jupyter-native evaluation of Heta knowledge-base recipes.

``%load_ext heta_nb`` in a notebook; ``heta_nb.load_report(...)`` anywhere. Public
names are imported lazily, so ``import heta_nb`` stays fast and light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from heta_nb._version import __version__

# name -> module that defines it (imported on first attribute access, PEP 562)
_EXPORTS: dict[str, str] = {
    "EvaluationReport": "heta_nb.model",
    "EvaluationCaseResult": "heta_nb.model",
    "EvaluationScore": "heta_nb.model",
    "EvaluationError": "heta_nb.model",
    "BenchmarkManifest": "heta_nb.model",
    "QueryResponse": "heta_nb.model",
    "QueryResult": "heta_nb.model",
    "QueryCitation": "heta_nb.model",
    "QueryTraceEvent": "heta_nb.model",
    "load_report": "heta_nb.store.locate",  # heta_nb.model.load_report, plus STORE:KB/REPORT_ID
    "ReportStore": "heta_nb.store",
    "ReportFormatError": "heta_nb.errors",
    "HetaRunWarning": "heta_nb.runner.events",
    "Benchmark": "heta_nb.benchmark",
    "load_benchmark": "heta_nb.benchmark.load",
    "evaluate": "heta_nb.api",
    "evaluate_async": "heta_nb.api",
    "start": "heta_nb.api",
    "rescore": "heta_nb.api",
    "import_reviews": "heta_nb.reviews",
    "calibrate": "heta_nb.reviews",
    "ppi": "heta_nb.reviews",
    "ppi_difference": "heta_nb.reviews",
    "reviewer_agreement": "heta_nb.reviews",
    "estimate": "heta_nb.api",
    "judge": "heta_nb.llm_judges",
    "JudgeModel": "heta_nb.llm_judges",
    "JudgeCache": "heta_nb.llm_judges",
    "JudgeLimits": "heta_nb.llm_judges",
    "EvaluationRun": "heta_nb.runner.handle",
    "merge_reports": "heta_nb.runner.merge",
    "compare": "heta_nb.comparison",
    "history": "heta_nb.comparison",
    "History": "heta_nb.comparison",
    "plan": "heta_nb.comparison",
    "recipe_changes": "heta_nb.comparison",
    "check": "heta_nb.gate",
    "CheckResult": "heta_nb.gate",
    "read_parquet": "heta_nb.tables.arrow",
    "Comparison": "heta_nb.comparison",
    "sweep": "heta_nb.sweeps",
    "Leaderboard": "heta_nb.sweeps",
    "explore": "heta_nb.explorer",
    "Explorer": "heta_nb.explorer",
    "to_html": "heta_nb.export",
    "to_notebook": "heta_nb.notebook",
    "sections": "heta_nb.notebook",
}

# submodules reachable as attributes after a plain ``import heta_nb``
_SUBMODULES: dict[str, str] = {
    name: f"heta_nb.{name}"
    for name in (
        *("demo", "evaluators", "export", "llm_judges", "notebook", "reviews"),
        *("plots", "render", "stats", "tables", "testing"),
    )
}
_SUBMODULES["distributions"] = "heta_nb.tables.distributions"  # its home before 0.2

__all__ = [
    "Benchmark",
    "BenchmarkManifest",
    "CheckResult",
    "Comparison",
    "EvaluationCaseResult",
    "EvaluationError",
    "EvaluationReport",
    "EvaluationRun",
    "EvaluationScore",
    "Explorer",
    "HetaRunWarning",
    "History",
    "JudgeCache",
    "JudgeLimits",
    "JudgeModel",
    "Leaderboard",
    "QueryCitation",
    "QueryResponse",
    "QueryResult",
    "QueryTraceEvent",
    "ReportFormatError",
    "ReportStore",
    "__version__",
    "calibrate",
    "check",
    "compare",
    "evaluate",
    "evaluate_async",
    "estimate",
    "explore",
    "history",
    "plan",
    "recipe_changes",
    "import_reviews",
    "judge",
    "load_benchmark",
    "load_ipython_extension",
    "load_report",
    "merge_reports",
    "ppi",
    "ppi_difference",
    "read_parquet",
    "rescore",
    "reviewer_agreement",
    "sections",
    "start",
    "sweep",
    "to_html",
    "to_notebook",
    "unload_ipython_extension",
]

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.api import estimate, evaluate, evaluate_async, rescore, start
    from heta_nb.benchmark import Benchmark
    from heta_nb.benchmark.load import load_benchmark
    from heta_nb.comparison import Comparison, History, compare, history, plan, recipe_changes
    from heta_nb.errors import ReportFormatError
    from heta_nb.explorer import Explorer, explore
    from heta_nb.export import to_html
    from heta_nb.gate import CheckResult, check
    from heta_nb.llm_judges import JudgeCache, JudgeLimits, JudgeModel, judge
    from heta_nb.model import (
        BenchmarkManifest,
        EvaluationCaseResult,
        EvaluationError,
        EvaluationReport,
        EvaluationScore,
        QueryCitation,
        QueryResponse,
        QueryResult,
        QueryTraceEvent,
    )
    from heta_nb.notebook import sections, to_notebook
    from heta_nb.reviews import calibrate, import_reviews, ppi, ppi_difference, reviewer_agreement
    from heta_nb.runner.events import HetaRunWarning
    from heta_nb.runner.handle import EvaluationRun
    from heta_nb.runner.merge import merge_reports
    from heta_nb.store import ReportStore
    from heta_nb.store.locate import load_report
    from heta_nb.sweeps import Leaderboard, sweep
    from heta_nb.tables.arrow import read_parquet


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext heta_nb`` (IPython is imported only now)."""
    from heta_nb.ipython import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext heta_nb``."""
    from heta_nb.ipython import unload_ipython_extension as unload

    unload(ipython)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'heta_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
