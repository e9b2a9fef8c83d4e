"""The case panel's LLM judge blocks: claims with their verdicts and the results they cite,
context precision's verdict per result, model, usage and cost (unknown, cached, known: never
$0 for an unknown price), agreement of repeats and the ``judges disagree`` filter, n/a and
failed judges, limits, and hostile text kept as data."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from explorer.judge_cases import (
    answer_correctness,
    answer_relevance,
    case,
    context_precision,
    errored,
    faithfulness,
    judge_report,
    not_applicable,
    repeated,
    usage,
)

import heta_nb
from heta_nb.explorer import explore
from heta_nb.explorer.case_data import OPEN_CASE_LIMITS, CaseDataLimits, case_data
from heta_nb.explorer.judge_data import UNSTABLE
from heta_nb.explorer.page import report_page_data

HOSTILE = "<img src=x onerror=alert(1)>"


def _judges(result: dict, limits: CaseDataLimits = OPEN_CASE_LIMITS) -> dict[str, dict]:
    data = case_data(result, None, limits)
    return {block["n"]: block for block in data.get("j", [])}


def test_a_faithfulness_score_reads_as_claims_citing_results_by_rank() -> None:
    block = _judges(case("c1", [faithfulness()]))["faithfulness"]
    assert block["st"] == "ok" and block["v"] == "0.500" and block["p"] == "t" and block["th"] == "0.500"
    assert block["why"] == "1 of 2 claims supported by the retrieved chunks"
    assert block["m"] == "openai/gpt-4o-mini" and block["k"] == "faithfulness"
    assert block["use"] == "1 call · 190 in / 13 out tokens"
    assert block["cost"] == "$0.0001"  # JudgeTotal's own money format
    assert block["cl"] == [
        ["The capital is City0.", "supported", "chunk 1 says so", [1]],
        ["It is large.", "not_found", "no chunk says", []],
    ]
    assert "ag" not in block and "cln" not in block


def test_the_scores_table_keeps_only_the_judges_reason() -> None:
    data = case_data(case("c1", [faithfulness()]), None, OPEN_CASE_LIMITS)
    (row,) = data["s"]
    assert row == ["faithfulness", "0.500", "v", "1 of 2 claims supported by the retrieved chunks"]


def test_context_precision_answer_relevance_and_correctness_have_their_own_shapes() -> None:
    blocks = _judges(case("c1", [context_precision(), answer_relevance(), answer_correctness()]))
    assert blocks["context_precision"]["ch"] == [
        [1, "relevant", "names the capital"],
        [2, "not_relevant", "about cats"],
    ]
    assert "cl" not in blocks["context_precision"]
    assert blocks["answer_relevance"]["vd"] == "partial" and blocks["answer_relevance"]["v"] == "0.500"
    correctness = blocks["answer_correctness"]
    assert correctness["cl"] == [["The capital is City0.", "supported", "as expected", []]]
    assert correctness["rc"] == [
        ["The capital is City0.", "covered", "said"],
        ["It has a harbour.", "missing", "not said"],
    ]


@pytest.mark.parametrize(
    ("fields", "cost"),
    [
        ({"cost": 0.0123}, "$0.0123"),
        ({"cost": None, "cost_unknown": "no price for model 'x'"}, "cost unknown: no price for model 'x'"),
        ({"cost": None}, "cost unknown"),
        ({"cached_calls": 1, "cost": 0.0}, "cached"),
        ({"cached_calls": 1, "cost": None, "cost_unknown": "no price"}, "cached"),
        ({"calls": 0, "cost": None}, ""),
    ],
)
def test_cost_is_known_unknown_or_cached_never_zero_for_unknown(fields: dict, cost: str) -> None:
    score = faithfulness()
    score["metadata"].update(fields)
    block = _judges(case("c1", [score]))["faithfulness"]
    assert block["cost"] == cost
    if fields.get("cost") is None:
        assert "$0" not in block["cost"]


def test_cached_calls_are_counted_in_the_usage() -> None:
    score = faithfulness(**usage(calls=3, cached=1, cost=0.0004))
    assert _judges(case("c1", [score]))["faithfulness"]["use"] == "3 calls (1 cached) · 570 in / 39 out tokens"


def test_an_not_applicable_judge_says_why_and_called_no_model() -> None:
    data = case_data(case("c1", [not_applicable()], answer=None), None, OPEN_CASE_LIMITS)
    (block,) = data["j"]
    assert block["st"] == "na" and block["v"] == "n/a" and block["p"] == ""
    assert block["why"] == "the response has no answer"
    assert block["use"] == "no model call" and block["cost"] == ""
    assert data["s"][0][1:3] == ["skipped", "s"]  # the scores table as for any skipped score


def test_a_failed_judge_keeps_its_error_raw_answers_and_usage() -> None:
    block = _judges(case("c1", [errored()]))["answer_relevance"]
    assert block["st"] == "err" and block["v"] == "error"
    assert block["err"] == ["JudgeOutputError", "the model's answer is not JSON"]
    assert block["raw"] == ["The answer is relevant, I think.", "Still not JSON."] and block["rawn"] == 2
    assert block["use"] == "2 calls · 380 in / 26 out tokens"
    assert block["cost"] == "cost unknown: no price for model 'openai/gpt-4o-mini'"


def test_limits_cap_claims_and_their_texts() -> None:
    claims = [
        {
            "claim": f"claim {i} " + "x" * 5000,
            "verdict": "supported",
            "chunks": [f"c{k}" for k in range(1, 40)],
            "reason": "y" * 5000,
        }
        for i in range(80)
    ]
    result = case("c1", [faithfulness(claims)])
    page = _judges(result, CaseDataLimits())["faithfulness"]
    assert len(page["cl"]) == 20 and page["cln"] == 80
    assert all(len(c[0]) <= 240 and len(c[2]) <= 240 for c in page["cl"])
    assert all(c[3] == list(range(1, 13)) for c in page["cl"])  # at most 12 chunks per claim
    opened = _judges(result)["faithfulness"]
    assert len(opened["cl"]) == 50 and opened["cln"] == 80 and len(opened["cl"][0][0]) <= 600
    assert len(json.dumps(case_data(result, None, CaseDataLimits()))) < 20_000
    many = case("c2", [faithfulness() for _ in range(60)])
    assert len(case_data(many, None, CaseDataLimits())["j"]) == 20


def test_a_cases_judges_share_one_budget_of_claims() -> None:
    claims = [{"claim": "x" * 5000, "verdict": "supported", "chunks": ["c1"], "reason": "y" * 5000}] * 80
    result = case("c1", [faithfulness(claims) for _ in range(30)])
    blocks = case_data(result, None, OPEN_CASE_LIMITS)["j"]
    assert len(blocks) == 20 and sum(len(b["cl"]) for b in blocks) == 100  # 50, 50, then none
    assert [len(b["cl"]) for b in blocks[:3]] == [50, 50, 0] and blocks[2]["cln"] == 80
    explorer = explore(judge_report([result]))
    explorer.open(0)
    state = explorer.widget.get_state(["rows", "info", "columns", "options", "case"])
    assert len(json.dumps(state).encode("utf-8")) < 200_000


def test_only_chunk_ids_of_the_judges_form_become_ranks() -> None:
    claims = [{"claim": "a", "verdict": "supported", "chunks": ["c2", "c10", "d1", "c0", "c2", 7, None, "c99999"]}]
    (row,) = _judges(case("c1", [faithfulness(claims)]))["faithfulness"]["cl"]
    assert row[3] == [2, 10]


@pytest.mark.hostile
def test_hostile_claims_and_object_keys_stay_text() -> None:
    claims = [
        {
            "claim": HOSTILE,
            "verdict": "__proto__",
            "chunks": ["c1"],
            "reason": {"__proto__": {"polluted": True}, "constructor": {"prototype": {"x": 1}}},
        },
        {"claim": {"toString": HOSTILE}, "verdict": {"constructor": 1}, "reason": ["</script>", HOSTILE]},
    ]
    score = faithfulness(claims, model={"__proto__": 1})
    score["metadata"]["judge"]["model"] = HOSTILE
    block = _judges(case("c1", [score]))["faithfulness"]
    first, second = block["cl"]
    assert first[:2] == [HOSTILE, "__proto__"]  # the text itself: the panel writes it with textContent
    assert isinstance(first[2], str) and "__proto__" in first[2] and "constructor" in first[2]
    assert all(isinstance(cell, str) for cell in second[:3])  # objects are described, never passed on
    assert block["m"] == HOSTILE
    html = heta_nb.to_html(judge_report([case("c1", [score])]))  # the static view and the page's JSON
    assert HOSTILE not in html and "<img src=x" not in html


@pytest.mark.hostile
def test_the_page_embeds_hostile_claims_as_escaped_json() -> None:
    score = faithfulness(
        [{"claim": "</script><script>alert(1)</script>" + HOSTILE, "verdict": "supported", "chunks": ["c1"]}]
    )
    html = heta_nb.to_html(judge_report([case("c1", [score])]))
    assert "<script>alert(1)" not in html and "<img src=x" not in html


def test_the_kernel_and_the_page_send_the_same_judge_blocks() -> None:
    report = judge_report([case("c1", [faithfulness(), context_precision()]), case("c2", [errored()])])
    explorer = explore(report)
    page = report_page_data(report, OPEN_CASE_LIMITS)["tables"][""]["cases"]
    for row in range(2):
        explorer.open(row)
        assert explorer.case_json()["data"]["j"] == page[row]["j"]


def test_cases_whose_judges_disagreed_have_a_quick_filter_in_both_sources() -> None:
    report = judge_report(
        [
            case("c1", [repeated([1.0, 1.0, 0.5], 0.666667), context_precision()]),
            case("c2", [repeated([0.5, 0.5, 0.5], 1.0)]),
            case("c3", [faithfulness()]),
            case("c4", [context_precision(agreement=0.5)]),
        ]
    )
    block = _judges(report.raw["case_results"][0])["faithfulness"]
    assert block["ag"] == "agreement 0.67 over 3 repeats" and block["un"] is True
    assert _judges(report.raw["case_results"][1])["faithfulness"]["un"] is False
    explorer = explore(report)
    assert explorer.options()["quick"] == [UNSTABLE]
    explorer.filter(quick=UNSTABLE)
    assert list(explorer.selection["case_id"]) == ["c1", "c4"]
    assert dict(explorer.filters.active())["quick"] == "the quick filter judges disagree"
    table = report_page_data(report, OPEN_CASE_LIMITS)["tables"][""]
    assert table["quick"] == [UNSTABLE] and table["unstable"] == "1001"


def test_without_disagreement_there_is_no_filter() -> None:
    report = judge_report([case("c1", [repeated([1.0, 1.0], 1.0)]), case("c2", [faithfulness()])])
    explorer = explore(report)
    assert explorer.options()["quick"] == []
    with pytest.raises(ValueError, match="quick: 'judges disagree' is not one of none"):
        explorer.filter(quick=UNSTABLE)
    assert "unstable" not in report_page_data(report, replace(OPEN_CASE_LIMITS))["tables"][""]
