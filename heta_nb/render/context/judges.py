"""A report's LLM judges as its views show them: one line per judge (model, calls, tokens,
cost) for the header and the text repr, and which case results' judges disagreed across
repeats (the explorer's filter).

Every number comes from :func:`heta_nb.llm_judges.totals.judge_totals`, the one computation
of a report's judge usage. The case results are read once per report (:func:`judge_scan`,
kept on the report) and only when the report can hold judge scores: its record of judges
(``metadata.heta_nb.judges``), a built-in judge's score name, or a small report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from heta_nb._util.text import clip_label, plural, shorten
from heta_nb.llm_judges import JUDGES
from heta_nb.llm_judges.totals import JudgeTotal, judge_totals, overall
from heta_nb.model import EvaluationReport
from heta_nb.model.record import cached_on
from heta_nb.render.context.formatting import as_mapping

__all__ = ["SCAN_ALWAYS_BELOW", "JudgeScan", "judge_lines_text", "judge_scan", "judges_context", "usage_parts"]

SCAN_ALWAYS_BELOW = 2000
"""Reports with fewer case results are always read for judge scores (a hand-written report
whose judges have names of their own); larger ones only when they record judges."""


@dataclass(frozen=True)
class JudgeScan:
    """What one read of a report's case results finds of its judges."""

    totals: dict[str, JudgeTotal]
    """:func:`~heta_nb.llm_judges.totals.judge_totals` of the report, by judge score name."""
    unstable: tuple[bool, ...]
    """Per case result: some judge score's repeats disagreed (``agreement`` below 1)."""


def _may_have_judges(report: EvaluationReport) -> bool:
    if report.case_count < SCAN_ALWAYS_BELOW:
        return True
    run = as_mapping(as_mapping(report.without_results().raw.get("metadata")).get("heta_nb"))
    recorded = run.get("judges")
    if isinstance(recorded, Mapping) and recorded:
        return True
    return any(name in JUDGES for name in report.metric_names)


def _disagrees(result: Any) -> bool:
    """A case result with a judge score whose repeats disagreed (``metadata.agreement < 1``)."""
    if not isinstance(result, Mapping):
        return False
    for score in result.get("scores") or ():
        metadata = score.get("metadata") if isinstance(score, Mapping) else None
        if isinstance(metadata, Mapping) and isinstance(metadata.get("judge"), Mapping):
            agreement = metadata.get("agreement")
            if isinstance(agreement, (int, float)) and not isinstance(agreement, bool) and agreement < 1:
                return True
    return False


def _scan(report: EvaluationReport) -> JudgeScan:
    if not report.case_count or not _may_have_judges(report):
        return JudgeScan({}, (False,) * report.case_count)
    unstable: list[bool] = []

    def results() -> Iterator[Any]:  # each result opened once, not kept (a large report stays small)
        for index in range(report.case_count):
            result = report.case_result_json(index)
            unstable.append(_disagrees(result))
            yield result

    totals = judge_totals({"case_results": results()})
    return JudgeScan(totals, tuple(unstable))


def judge_scan(report: EvaluationReport) -> JudgeScan:
    """The report's judge totals and unstable case results (computed once per report)."""
    found: JudgeScan = cached_on(report, "heta_nb.render.judge_scan", lambda: _scan(report))
    return found


def usage_parts(total: JudgeTotal) -> dict[str, str]:
    """``calls`` (``12 calls (4 cached)``), ``tokens`` (``1,234 in / 56 out``), ``cost`` and ``scores``
    (``10 scores · 2 n/a · 1 error``) of a judge's totals, as text."""
    calls = plural(total.calls, "call") + (f" ({total.cached_calls:,} cached)" if total.cached_calls else "")
    scores = [plural(total.scores, "score")]
    if total.not_applicable:
        scores.append(f"{total.not_applicable:,} n/a")
    if total.errors:
        scores.append(plural(total.errors, "error"))
    return {
        "calls": calls,
        "tokens": f"{total.tokens_in:,} in / {total.tokens_out:,} out",
        "cost": total.cost_text,
        "scores": " · ".join(scores),
    }


def _line(total: JudgeTotal, name_chars: int) -> dict[str, str]:
    return {
        "name": clip_label(total.name, name_chars),
        "model": clip_label(total.model, name_chars) if total.model else "—",
        **usage_parts(total),
    }


def judges_context(report: EvaluationReport, name_chars: int = 80, max_rows: int = 12) -> dict[str, Any] | None:
    """The header's judge lines: ``{"rows", "more", "total"}`` (None: no judge scores).

    Each row: ``name``, ``model``, ``calls``, ``tokens``, ``cost`` and ``scores`` as text
    (the first ``max_rows`` judges; ``more``: how many are left out); ``total`` (all judges)
    when there is more than one.
    """
    totals = judge_scan(report).totals
    if not totals:
        return None
    rows = [_line(total, name_chars) for total in list(totals.values())[:max_rows]]
    whole = _line(overall(totals), name_chars) if len(totals) > 1 else None
    return {"rows": rows, "more": len(totals) - len(rows), "total": whole}


def judge_lines_text(judges: Mapping[str, Any] | None, max_lines: int = 6) -> list[str]:
    """The judge lines of the text repr (none without judge scores): the first ``max_lines``
    judges, how many more, and the total."""
    if not judges:
        return []
    rows = judges["rows"]
    lines = [
        f"judge {shorten(row['name'], 40)} · {shorten(row['model'], 50)} · {row['calls']} · {row['tokens']} tokens"
        f" · {row['cost']}"
        for row in rows[:max_lines]
    ]
    more = len(rows) - len(lines) + judges.get("more", 0)
    if more:
        lines.append(f"… +{more:,} more judges")
    total = judges.get("total")
    if total:
        lines.append(f"all judges · {total['calls']} · {total['tokens']} tokens · {total['cost']}")
    return lines
