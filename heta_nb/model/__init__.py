"""heta_nb's model of Heta's ``report.json`` (schema_version "1"), field for field.

Pure Python: importing it pulls in no IPython, ipywidgets, pandas, matplotlib or
Jinja2 (``tests/test_import_hygiene.py`` keeps it that way).
"""

from __future__ import annotations

from heta_nb.model.io import decode_report, encode_report, load_report, parse_report
from heta_nb.model.query import QueryCitation, QueryResponse, QueryResult, QueryTraceEvent
from heta_nb.model.report import (
    EVALUATION_SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    ModeCounts,
)
from heta_nb.model.summary import MetricSummary, heta_score_summary

__all__ = [
    "EVALUATION_SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "BenchmarkManifest",
    "EvaluationCaseResult",
    "EvaluationError",
    "EvaluationReport",
    "EvaluationScore",
    "MetricSummary",
    "ModeCounts",
    "QueryCitation",
    "QueryResponse",
    "QueryResult",
    "QueryTraceEvent",
    "decode_report",
    "encode_report",
    "heta_score_summary",
    "load_report",
    "parse_report",
]
