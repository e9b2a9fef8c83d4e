"""Comparisons for the grid's tests (unit and browser): three recipes with an error, a missing
result, a metric n/a in one system's mode, skipped scores and answers that differ; the same
with hostile names, ids and answers."""

from __future__ import annotations

import warnings
from typing import Any

import heta_nb
from heta_nb.model import EvaluationReport
from heta_nb.testing import synthetic_report_dict

ERROR_CASE = "q00003"
"""Recipe A errored on this case."""
MISSING_CASE = "q00005"
"""Recipe B has no result for this case."""
HOSTILE = {
    "system": '"><img src=x onerror=window.__pwned=1>',
    "proto": "__proto__",
    "constructor": "constructor",
    "answer": "</script><script>window.__pwned=1</script> <b>bold</b> harbour",
    "case": "toString",
}


def _error(result: dict[str, Any], message: str) -> None:
    result.update(
        scores=[],
        response=None,
        error={"message": message, "error_type": "RuntimeError", "retryable": False, "metadata": {}},
    )


def recipe_reports(n: int = 40, *, hostile: bool = False) -> list[EvaluationReport]:
    """Recipes A and B answer (``extractive_answer``); C only retrieves (``full_text_search``:
    ``answer_contains`` is n/a there). A errored on :data:`ERROR_CASE`, B has no result for
    :data:`MISSING_CASE`; with ``hostile``, names, a case id and answers are payloads."""
    names = (
        [HOSTILE["system"], HOSTILE["proto"], HOSTILE["constructor"]]
        if hostile
        else ["recipe-a", "recipe-b", "recipe-c"]
    )
    modes = [("extractive_answer",), ("extractive_answer",), ("full_text_search",)]
    out = []
    for k, (name, mode) in enumerate(zip(names, modes)):
        data = synthetic_report_dict(
            n, modes=mode, results_per_case=3, error_rate=0.0, seed=k + 1, report_id=name, knowledge_base_name=name
        )
        results = data["case_results"]
        for result in results:
            if mode == ("full_text_search",):
                for score in result["scores"]:
                    if score["name"] == "answer_contains":
                        score["value"] = score["passed"] = False
            if hostile and result["case_id"] == "q00001":
                result["case_id"] = HOSTILE["case"]
            if hostile and result["case_id"] == "q00002" and result["response"]["answer"] is not None:
                result["response"]["answer"] = HOSTILE["answer"] + f" {k}"
        if k == 0:
            _error(next(r for r in results if r["case_id"] == ERROR_CASE), HOSTILE["answer"] if hostile else "boom")
        if k == 1:
            data["case_results"] = [r for r in results if r["case_id"] != MISSING_CASE]
        if k == 1 and not hostile:  # two answers equal to A's: those cases' answers do not differ
            first = synthetic_report_dict(n, modes=mode, results_per_case=3, error_rate=0.0, seed=1)
            for mine, theirs in zip(data["case_results"][:2], first["case_results"][:2]):
                mine["response"]["answer"] = theirs["response"]["answer"]
        out.append(EvaluationReport.from_raw(data))
    return out


def recipe_comparison(n: int = 40, *, hostile: bool = False) -> Any:
    """:func:`recipe_reports` compared (each report's only mode; A the baseline)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.compare(*recipe_reports(n, hostile=hostile), resamples=200)
