"""Where the answer was lost: each case that got worse or better, classified by stage.

For every tested system against its baseline, a case *changed* when its outcome metric (the
answer metric, or the evidence metric in a mode that returns no answers) moved by more than the
comparison's tie tolerance. Its **stage**, from the evidence metric (how much of the expected
evidence was retrieved) and the two outputs:

* ``neither``: the system's output did not change (same answer, same number of results, same
  top result): the score moved by itself (a judge's or another evaluator's noise);
* ``retrieval``: the evidence was found before and is missing now (a regression whose evidence
  score fell to 0), or the other way round (an improvement that found the evidence the baseline
  missed entirely);
* ``both``: the evidence score moved the same way but not to or from 0 (some evidence lost
  and the answer still worse with evidence at hand, or mirrored for a gain);
* ``generation``: retrieval as good (or moving the other way), the answer worse (or better);
* ``unknown``: the case has no evidence score on one side (no expected evidence, an evaluator
  error) and its output changed.

In a mode without answers the outcome is the evidence metric itself, so every change is
``retrieval`` (or ``neither``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb._util.frames import frame as frame_of

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


__all__ = ["STAGES", "STAGE_COLUMNS", "StageMetrics", "case_stages", "stage_counts", "stage_lines", "stage_metrics"]

STAGES = ("retrieval", "generation", "both", "neither", "unknown")
"""The stages, in the order the outputs list them."""

STAGE_COLUMNS = (
    "system",
    "baseline",
    "mode",
    "unit",
    "case_id",
    "query",
    "direction",
    "stage",
    "outcome",
    "outcome_baseline",
    "outcome_value",
    "outcome_delta",
    "evidence",
    "evidence_baseline",
    "evidence_value",
)
"""Columns of :meth:`~heta_nb.comparison.Comparison.stages`."""

ANSWER_METRICS = ("answer_correctness", "answer_f1", "answer_exact_match", "answer_contains")
"""Answer metrics, in the order one is picked."""

EVIDENCE_PREFIXES = ("evidence_recall@", "context_recall", "recall@", "hit@", "beir_recall@", "ndcg@", "beir_ndcg@")
"""Evidence metrics (by name or prefix), in the order one is picked."""

_WHY = {
    "retrieval": ("lost their evidence in retrieval", "found evidence the baseline missed"),
    "generation": ("lost in generation (retrieval as good)", "gained in generation (retrieval as good)"),
    "both": ("lost some evidence and answered worse", "found more evidence and answered better"),
    "neither": ("moved with the output unchanged (noise)", "moved with the output unchanged (noise)"),
    "unknown": ("had no evidence score to tell", "had no evidence score to tell"),
}


@dataclass(frozen=True)
class StageMetrics:
    """The metrics a stage attribution reads."""

    answer: str | None
    evidence: str | None


def stage_metrics(metrics: Sequence[str], answer: str | None = None, evidence: str | None = None) -> StageMetrics:
    """The answer and evidence metrics among ``metrics`` (the ones given, else the first known ones).

    Raises:
        ValueError: A given metric is not compared.
    """
    for given in (answer, evidence):
        if given is not None and given not in metrics:
            raise ValueError(f"metric {given!r} is not compared; metrics: {list(metrics)}")
    if answer is None:
        answer = next((m for m in ANSWER_METRICS if m in metrics), None)
    if evidence is None:
        evidence = next((m for p in EVIDENCE_PREFIXES for m in metrics if m == p or m.startswith(p)), None)
    return StageMetrics(answer, evidence)


def _row_of(report: Any, mode: str, units: Sequence[Any], case_ids: Sequence[str]) -> np.ndarray:
    """The first row of ``mode`` in ``report`` for each ``(unit, case_id)`` (-1: none), matched by
    case id and unit, or by case id alone when the unit does not match (as the alignment allows)."""
    import pandas as pd

    columns = report.columns
    rows = columns.mode_rows(mode)
    names = list(columns.units)
    unit_of = np.array([(names[u] or "") if 0 <= u < len(names) else "" for u in range(len(names))] + [""], object)
    row_units = unit_of[np.where(columns.unit[rows] >= 0, columns.unit[rows], len(names))]
    row_ids = columns.case_ids[columns.case[rows]]
    wanted_units = np.array([u or "" for u in units], object)
    wanted_ids = np.array(case_ids, object)
    found = _positions(pd.Index(row_units + "\0" + row_ids.astype(object)), wanted_units + "\0" + wanted_ids)
    missing = found < 0
    if missing.any():
        found[missing] = _positions(pd.Index(row_ids), wanted_ids[missing])
    return np.where(found >= 0, rows[np.maximum(found, 0)] if rows.size else -1, -1)


def _positions(index: Any, wanted: np.ndarray) -> np.ndarray:
    """The position in ``index`` of the first of each wanted label (-1: absent)."""
    keep = ~index.duplicated()
    firsts = np.flatnonzero(keep)
    found = np.asarray(index[keep].get_indexer(wanted))
    return np.where(found >= 0, firsts[np.maximum(found, 0)] if firsts.size else -1, -1)


def _unchanged(before: Any, after: Any, before_rows: np.ndarray, after_rows: np.ndarray) -> np.ndarray:
    """Whether each case's output is the same on both sides: answer, top result text, result count."""
    same = (before_rows >= 0) & (after_rows >= 0)
    out = np.zeros(before_rows.size, dtype=bool)
    i, j = before_rows[same], after_rows[same]
    a, b = before.columns, after.columns
    equal = (a.answers[i] == b.answers[j]) & (a.top_texts[i] == b.top_texts[j]) & (a.n_results[i] == b.n_results[j])
    out[np.flatnonzero(same)] = equal
    return out


def case_stages(comparison: Any, *, answer: str | None = None, evidence: str | None = None) -> pd.DataFrame:
    """One row per changed case and tested system (columns :data:`STAGE_COLUMNS`); see the module."""
    aligned = comparison._aligned
    chosen = stage_metrics(comparison.metrics, answer, evidence)
    tol = comparison.tie_tolerance
    records: list[dict[str, Any]] = []
    for k, base in comparison.base_of.items():
        system, baseline = comparison.system_info[k], comparison.system_info[base]
        tested = [
            m for m in (chosen.answer, chosen.evidence) if m is not None and not comparison.verdict(k, m).startswith(
                ("n/a", "not comparable"))
        ]  # fmt: skip
        if not tested:
            continue
        outcome = tested[0]
        j = comparison.metrics.index(outcome)
        where = np.flatnonzero(aligned.mask[k, j])
        y_a, y_b = aligned.values[base, j, where], aligned.values[k, j, where]
        moved = np.abs(y_b - y_a) > tol
        where, y_a, y_b = where[moved], y_a[moved], y_b[moved]
        if not where.size:
            continue
        if chosen.evidence is not None and chosen.evidence in tested:
            je = comparison.metrics.index(chosen.evidence)
            e_a, e_b = aligned.values[base, je, where], aligned.values[k, je, where]
        else:
            e_a = e_b = np.full(where.size, np.nan)
        reports = comparison.reports
        if reports:
            units = [aligned.units[i] for i in where.tolist()]
            ids = [aligned.case_ids[i] for i in where.tolist()]
            mine, theirs = reports[system.report_index], reports[baseline.report_index]
            unchanged = _unchanged(
                theirs, mine, _row_of(theirs, baseline.mode, units, ids), _row_of(mine, system.mode, units, ids)
            ).tolist()
        else:
            unchanged = [False] * where.size
        stages = _classify(y_b - y_a, e_a, e_b, unchanged, tol, retrieval_only=outcome == chosen.evidence)
        for n, i in enumerate(where.tolist()):
            records.append(
                {
                    "system": system.name,
                    "baseline": baseline.name,
                    "mode": system.mode,
                    "unit": aligned.units[i],
                    "case_id": aligned.case_ids[i],
                    "query": aligned.queries[i],
                    "direction": "improved" if y_b[n] > y_a[n] else "regressed",
                    "stage": stages[n],
                    "outcome": outcome,
                    "outcome_baseline": float(y_a[n]),
                    "outcome_value": float(y_b[n]),
                    "outcome_delta": float(y_b[n] - y_a[n]),
                    "evidence": chosen.evidence if outcome != chosen.evidence else None,
                    "evidence_baseline": float(e_a[n]),
                    "evidence_value": float(e_b[n]),
                }
            )
    frame = frame_of(records, columns=list(STAGE_COLUMNS))
    frame.attrs.update(answer=chosen.answer, evidence=chosen.evidence, tie_tolerance=tol)
    return frame


def _classify(
    dy: np.ndarray, e_a: np.ndarray, e_b: np.ndarray, unchanged: Sequence[bool], tol: float, *, retrieval_only: bool
) -> list[str]:
    """The stage of each changed case (see the module)."""
    out = []
    for delta, before, after, same in zip(dy.tolist(), e_a.tolist(), e_b.tolist(), unchanged):
        if same:
            out.append("neither")
        elif retrieval_only:
            out.append("retrieval")
        elif before != before or after != after:  # NaN: no evidence score on a side
            out.append("unknown")
        else:
            sign = 1.0 if delta > 0 else -1.0
            moved = sign * (after - before)  # > 0: evidence moved the same way as the answer
            if moved <= tol:
                out.append("generation")
            elif (after if sign < 0 else before) <= tol:
                out.append("retrieval")
            else:
                out.append("both")
    return out


def stage_counts(stages: pd.DataFrame) -> pd.DataFrame:
    """Counts per system, mode, direction and stage (one column per stage, zeros kept)."""
    import pandas as pd

    if stages.empty:
        return pd.DataFrame(columns=["system", "mode", "direction", *STAGES, "total"])
    table = stages.pivot_table(
        index=["system", "mode", "direction"], columns="stage", values="case_id", aggfunc="count", fill_value=0
    )
    table = table.reindex(columns=list(STAGES), fill_value=0)
    table["total"] = table.sum(axis=1)
    out = table.reset_index()
    out.columns.name = None
    return out


def stage_lines(stages: pd.DataFrame) -> list[str]:
    """``"large/extractive_answer vs small/extractive_answer: of 23 regressed cases, 17 lost their
    evidence in retrieval, 4 lost in generation (retrieval as good), 2 ..."``: one line per system."""
    lines = []
    counts = stage_counts(stages)
    for (system, baseline), _group in stages.groupby(["system", "baseline"], sort=False):
        parts = []
        for direction, side in (("regressed", 0), ("improved", 1)):
            row = counts[(counts["system"] == system) & (counts["direction"] == direction)]
            if row.empty:
                continue
            total = int(row["total"].iloc[0])
            found = sorted(((int(row[s].iloc[0]), s) for s in STAGES if int(row[s].iloc[0])), key=lambda x: -x[0])
            said = ", ".join(f"{n} {_WHY[s][side]}" for n, s in found)
            parts.append(f"of {total} {direction} case{'s' if total != 1 else ''}, {said}")
        lines.append(f"{system} vs {baseline}: " + "; ".join(parts))
    return lines


def stage_of_cases(stages: pd.DataFrame, system: str) -> Mapping[tuple[Any, str], str]:
    """``{(unit, case_id): stage}`` of one system's changed cases (for the explorer's filter)."""
    mine = stages[stages["system"] == system]
    return {(u, c): s for u, c, s in zip(mine["unit"], mine["case_id"], mine["stage"])}
