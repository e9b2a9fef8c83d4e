"""Report pairs with a known truth for the regression gate: a regression, noise, another benchmark.

Built from :func:`heta_nb.testing.synthetic_report_dict` (imported as ``gate_pairs``):
:func:`degraded` lowers every score by a known amount, :func:`jittered` moves scores
up and down by exactly as much (a zero mean change).
"""

from __future__ import annotations

import copy
import random
from typing import Any

from heta_nb.model.io import decode_report
from heta_nb.model.json import dumps_compact
from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.model.summary import heta_score_summary
from heta_nb.testing import synthetic_report_dict

MODES = ("full_text_search", "extractive_answer")


def base_dict(
    n_cases: int = 120, *, report_id: str = "baseline", error_rate: float = 0.0, **kwargs: Any
) -> dict[str, Any]:
    """A synthetic report dict: two modes, no errors by default, seed 11."""
    kwargs.setdefault("seed", 11)
    return synthetic_report_dict(n_cases, modes=MODES, error_rate=error_rate, report_id=report_id, **kwargs)


def as_report(raw: dict[str, Any]) -> EvaluationReport:
    """The dict as a validated report, its score summary recomputed as Heta computes it."""
    raw["score_summary"] = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in raw["case_results"])
    return decode_report(dumps_compact(raw), source="<gate pair>")


def _scores(raw: dict[str, Any], metrics: tuple[str, ...] | None, modes: tuple[str, ...] | None):
    for result in raw["case_results"]:
        if result["error"] is not None or (modes and result["query_mode"] not in modes):
            continue
        for score in result["scores"]:
            if score["metadata"].get("skipped") or (metrics and score["name"] not in metrics):
                continue
            yield score


def degraded(
    raw: dict[str, Any],
    *,
    by: float = 0.1,
    report_id: str = "new",
    metrics: tuple[str, ...] | None = None,
    modes: tuple[str, ...] | None = None,
    seed: int = 5,
) -> dict[str, Any]:
    """A copy whose numbers drop by ``by`` (not below 0) and whose true bools turn false with probability ``2 * by``."""
    out = copy.deepcopy(raw)
    out["report_id"] = report_id
    rng = random.Random(seed)
    for score in _scores(out, metrics, modes):
        value = score["value"]
        if isinstance(value, bool):
            if value and rng.random() < 2 * by:
                score["value"] = score["passed"] = False
        else:
            score["value"] = round(max(0.0, value - by), 6)
    return out


def jittered(raw: dict[str, Any], *, by: float = 0.05, report_id: str = "new", seed: int = 3) -> dict[str, Any]:
    """A copy with the same mean per metric: numbers inside (by, 1 - by) move +by or -by in equal numbers,
    and as many true bools turn false as false ones turn true."""
    out = copy.deepcopy(raw)
    out["report_id"] = report_id
    rng = random.Random(seed)
    by_metric: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for result in out["case_results"]:
        if result["error"] is not None:
            continue
        for score in result["scores"]:
            if not score["metadata"].get("skipped"):
                by_metric.setdefault((result["query_mode"], score["name"]), []).append(score)
    for scores in by_metric.values():
        numbers = [s for s in scores if not isinstance(s["value"], bool) and by < s["value"] < 1 - by]
        rng.shuffle(numbers)
        half = len(numbers) // 2
        for i, score in enumerate(numbers[: 2 * half]):
            score["value"] = round(score["value"] + (by if i < half else -by), 6)
        trues = [s for s in scores if s["value"] is True]
        falses = [s for s in scores if s["value"] is False]
        k = min(len(trues), len(falses)) // 5
        for score in rng.sample(trues, k):
            score["value"] = score["passed"] = False
        for score in rng.sample(falses, k):
            score["value"] = score["passed"] = True
    return out
