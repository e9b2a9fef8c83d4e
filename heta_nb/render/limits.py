"""How much an HTML view shows at most: :class:`RenderLimits` and its defaults."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "RenderLimits"]


@dataclass(frozen=True)
class RenderLimits:
    """Upper bounds on what an HTML view shows, so output size does not grow with the data.

    Every list that is cut says so in the view ("showing 50 of 12,400 cases"); every
    string that is cut ends with a visible "… (+N chars)" marker.
    """

    max_cases_per_mode: int = 50
    """Rows of each per-mode case table (worst cases first)."""
    max_text_chars: int = 300
    """Queries, answers, result texts, messages."""
    max_results_per_case: int = 5
    """Ranked results shown in a case's drill-down."""
    max_error_groups: int = 20
    """(mode, error type) groups in the errors section."""
    max_details: int = 30
    """Case drill-downs per report (spread over the modes)."""
    max_cell_chars: int = 120
    """Query text in table cells."""
    max_name_chars: int = 80
    """Ids, names, modes, metric names, metadata keys."""
    max_error_ids: int = 10
    """Case ids listed per error group."""
    max_citations: int = 5
    """Citations shown per case."""
    max_trace_events: int = 20
    """Trace events shown per case."""
    max_metadata_items: int = 8
    """Entries shown of any metadata mapping."""
    max_key_chars: int = 40
    """Each metadata key."""
    max_value_chars: int = 100
    """Each metadata value (described in one line)."""
    max_traceback_chars: int = 4000
    """Traceback text (the end is kept: that is where the error is)."""
    max_modes: int = 20
    """Modes in the summary and case tables."""
    max_metrics: int = 16
    """Metric columns in the summary and case tables."""
    max_list_items: int = 30
    """Recipe steps, manifests, warnings, benchmark cases and other short lists."""
    max_benchmark_cases: int = 20
    """Cases listed by a benchmark view."""
    max_output_chars: int = 280_000
    """About how large the report view may get: drill-downs that would go beyond it are left out."""


DEFAULT_LIMITS = RenderLimits()
