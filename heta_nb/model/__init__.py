"""heta_nb's model of Heta's ``report.json`` (schema_version "1"), field for field.

Pure Python: importing it pulls in no IPython, ipywidgets, pandas, matplotlib or
Jinja2 (``tests/test_architecture.py`` keeps it that way).

Field names, key order, defaults and validation rules follow heta-framework 0.1.2
(see ``docs/heta-compat`` in the repository, section 1). The records are immutable;
build new ones with ``replace(...)``. The modules, low to high: ``json`` (Heta's
encoding), ``record`` (the :class:`~heta_nb.model.record.Record` machinery), ``fields``
(the kinds of field), ``summary`` (score summaries), ``query``, ``case`` and ``report``
(the records), ``io`` (loading and encoding).

Where heta_nb is stricter than Heta (``tests/model/test_validation.py`` checks each one).
Heta's constructors check text, ``latency_ms < 0`` and ``build_scope`` only; heta_nb also
keeps to the types Heta declares, on loading and when built, so every consumer can rely
on them:

* ``EvaluationScore.value`` must be a number, bool or non-blank string (Heta would write
  ``null``, an array or an object), ``passed`` a bool or null, ``EvaluationError.retryable``
  a bool, ``QueryResult.score`` and ``latency_ms`` a number (not a bool) or null;
* ``knowledge_base_manifest`` and ``recipe_manifest`` must be objects (Heta writes whatever
  it was given; its runner always gives a mapping);
* only ``schema_version`` ``"1"`` is read.

NaN and infinite numbers are accepted wherever Heta accepts them: score values, result
scores, ``score_summary``, metadata and ``latency_ms`` (NaN and ``+inf``; Heta's ``< 0``
test refuses only negative numbers and ``-inf``). Metadata Heta would only fail to encode
at the end of a run (a set, a ``Path``) is refused when the record is built.
"""

from __future__ import annotations

from heta_nb.model.case import EvaluationCaseResult, EvaluationError, EvaluationScore
from heta_nb.model.io import decode_report, encode_report, load_report, parse_report
from heta_nb.model.query import QueryCitation, QueryResponse, QueryResult, QueryTraceEvent
from heta_nb.model.report import (
    EVALUATION_SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    BenchmarkManifest,
    EvaluationReport,
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
