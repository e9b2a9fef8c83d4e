"""Render contexts: plain dicts and lists built from model objects, ready for a template.

This is the first of the two rendering stages (as in pandas' Styler): everything a
view shows is decided, sorted, counted, truncated and formatted here, in pure and
testable functions; the templates only lay it out. Every string in a context is plain
text: escaping is the template's job (it autoescapes).

One module per view: :mod:`.case` (a score, a response, a case drill-down),
:mod:`.report` (with :mod:`.scan`, :mod:`.header` and :mod:`.summary`),
:mod:`.benchmark`, :mod:`.run`, :mod:`.comparison` and :mod:`.widget`;
:mod:`.formatting` holds the formatters they share. A large report is walked once
(:func:`~heta_nb.render.context.scan.scan_report`), and only the rows that are shown
are looked at in detail. :class:`~heta_nb.render.limits.RenderLimits` bounds everything
that could grow with the data.
"""

from __future__ import annotations

from heta_nb.render.context.benchmark import benchmark_context
from heta_nb.render.context.case import case_context, response_context, score_context
from heta_nb.render.context.comparison import comparison_context, comparison_id
from heta_nb.render.context.formatting import default_id_prefix, format_duration, format_ms, safe_url
from heta_nb.render.context.report import build_report_context, report_text
from heta_nb.render.context.run import run_context
from heta_nb.render.context.widget import widget_context

__all__ = [
    "benchmark_context",
    "build_report_context",
    "case_context",
    "comparison_context",
    "comparison_id",
    "default_id_prefix",
    "format_duration",
    "format_ms",
    "report_text",
    "response_context",
    "run_context",
    "safe_url",
    "score_context",
    "widget_context",
]
