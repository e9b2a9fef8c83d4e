"""Blind review in the kernel: nothing of the scores reaches the browser. The widget's state (every
trait it syncs) holds no metric column or filter, no status count, and the open case's data only
the query, expected answers, answer, retrieved results (without scores or relevance marks),
citations and error; no score value and no judge block. Leaving blind review brings them back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from explorer.judge_cases import case, context_precision, faithfulness, judge_report, repeated

from heta_nb.explorer.case_data import OPEN_CASE_LIMITS
from heta_nb.explorer.page import report_page_data
from heta_nb.explorer.review import BLIND_KEYS, blind_case
from heta_nb.reviews import review_sample
from heta_nb.testing import synthetic_report


def _state(widget: Any) -> str:
    """Everything the widget syncs to the browser, as JSON text."""
    state = widget.get_state()
    return json.dumps({k: v for k, v in state.items() if k not in ("_esm", "_css")}, ensure_ascii=False)


def _send(widget: Any, **content: Any) -> None:
    widget._handle_custom_msg(content, [])


def _judged() -> Any:
    """A report judged by LLM judges (faithfulness with claims, context precision, repeats that disagree)."""
    results = []
    for i in range(12):
        scores = [repeated([1.0, 0.5, 0.5], 0.666667)] if i % 4 == 1 else [faithfulness()]
        scores.append(context_precision(agreement=0.5 if i % 5 == 2 else 1.0))
        results.append(case(f"q{i:04d}", scores))
    return judge_report(results)


def test_blind_case_data_has_no_score_or_judge_field(labelled_benchmark, tmp_path: Path) -> None:
    report = synthetic_report(300, seed=3)
    explorer = report.review("ana", path=tmp_path, blind=True, benchmark=labelled_benchmark)
    widget = explorer.widget
    opened = explorer.case_json()  # what the case would show with its scores
    assert opened is not None and opened["data"]["s"]
    shown = widget.case
    assert set(shown["data"]) <= set(BLIND_KEYS) and {"q", "x", "r"} <= set(shown["data"])
    assert not {"s", "j", "f", "t", "uw"} & set(shown["data"])
    assert all(r[1] == "" and r[2] == "" and len(r) == 5 for r in shown["data"]["r"])
    assert [r[4] for r in shown["data"]["r"]] == [r[4] for r in opened["data"]["r"]]  # the texts stay
    assert [c["key"] for c in widget.columns] == ["row", "case_id", "query_mode", "query", "answer"]
    assert all(len(r["cells"]) == len(widget.columns) for r in widget.rows)
    assert widget.info["count_text"] == f"{explorer.matched:,} of {explorer.total:,} match"
    assert widget.options["metrics"] == [] and widget.options["statuses"] == [] and widget.options["quick"] == []
    assert widget.review["blind"] is True
    text = _state(widget)
    for metric in report.metric_names:
        assert metric not in text, metric
    for score in opened["data"]["s"]:  # no score value of the open case anywhere (numbers, ✓/✗)
        if re.search(r"\d\.\d{3}|true|false", score[1]):
            assert score[1] not in text, score
    assert "skipped" not in text and "✓ ok" not in text
    # leaving blind review: the scores come back
    _send(widget, action="review_stop")
    assert "s" in widget.case["data"] and any(c["metric"] for c in widget.columns)
    assert report.metric_names[0] in _state(widget)


def test_blind_review_shows_no_judge_and_no_other_reviewer(tmp_path: Path) -> None:
    report = _judged()
    from heta_nb.reviews import review_log

    first = review_sample(report, 60)[0]
    review_log(report, path=tmp_path).add(*first, "zoe", "wrong", note="the judge was right")
    explorer = report.review("ana", path=tmp_path, blind=True)
    widget = explorer.widget
    assert explorer.case_json()["data"].get("j")  # the case has judge blocks...
    assert "j" not in widget.case["data"]  # ...the blind reviewer gets none
    text = _state(widget)
    for word in (
        "faithfulness",
        "context_precision",
        "claims",
        "agreement",
        "judges disagree",
        "the judge was right",
        "zoe",
    ):
        assert word not in text, word
    assert widget.review["reviews"] == []  # another reviewer's verdict would tell too
    _send(widget, action="review_start", reviewer="ana", blind=False)
    assert widget.review["reviews"] == [["zoe", "wrong", "the judge was right"]]
    assert "faithfulness" in _state(widget)


def test_blind_start_clears_a_filter_or_sort_on_a_score(tmp_path: Path) -> None:
    report = synthetic_report(60, seed=5)
    from heta_nb.explorer import explore
    from heta_nb.reviews import review_log

    review_log(report, path=tmp_path)
    explorer = explore(report, metric="beir_ndcg@5", low=0.5)
    explorer.sort("beir_ndcg@5", descending=True)
    widget = explorer.widget
    _send(widget, action="review_start", reviewer="ana", blind=True)
    assert widget.review["on"] and explorer.filters.metric is None and explorer.filters.sort is None
    assert widget.sort == "" and widget.metric == "" and widget.low == ""


def test_blind_case_leaves_other_kinds_alone() -> None:
    assert blind_case(None) is None
    pair = {"kind": "comparison", "row": 1, "id": "a", "mode": "", "data": {"s": []}}
    assert blind_case(pair) == pair


def test_a_report_page_embeds_its_review_sample() -> None:
    report = synthetic_report(50, seed=6, report_id="paged")
    payload = report_page_data(report, OPEN_CASE_LIMITS)
    assert payload["review"] == {"report_id": "paged", "sample": [list(i) for i in review_sample(report, 60)]}
    assert report_page_data(report, OPEN_CASE_LIMITS, review=5, seed=1)["review"]["sample"] == [
        list(i) for i in review_sample(report, 5, seed=1)
    ]
    assert report_page_data(report, OPEN_CASE_LIMITS, review=0)["review"]["sample"] == []
