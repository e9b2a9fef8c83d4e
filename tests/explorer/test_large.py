"""The explorer's Python side on the 100,000-result synthetic report: filters, sort, paging
and selection agree with pandas, and the widget never holds more than one page."""

from __future__ import annotations

import json

import numpy as np
import pytest

from heta_nb.explorer import explore
from heta_nb.model import EvaluationReport
from heta_nb.testing import synthetic_report_dict

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big() -> EvaluationReport:
    # one result per case keeps the set-up short; rows, scores and statuses are as in Heta's shape
    return EvaluationReport.from_raw(synthetic_report_dict(33_334, results_per_case=1, seed=11))


def test_filter_sort_page_and_select_on_100k_results(big: EvaluationReport) -> None:
    assert big.case_count == 100_002
    frame = big.cases_frame()
    explorer = explore(big)
    widget = explorer.widget
    assert len(widget.rows) == 50 and widget.info["count_text"].startswith("100,002 of 100,002 match")

    widget.search = "lighthouse"
    widget.mode = "sql_text_search"
    widget.metric = "beir_ndcg@5"
    widget.low = "0.5"
    widget.sort = "beir_ndcg@5"
    widget.descending = True
    texts = frame["case_id"] + "\n" + frame["query"] + "\n" + frame["answer"].fillna("")
    expected = frame[
        texts.str.casefold().str.contains("lighthouse", regex=False)
        & (frame["query_mode"] == "sql_text_search")
        & (frame["beir_ndcg@5"] >= 0.5)
    ].sort_values("beir_ndcg@5", ascending=False, kind="stable")
    assert list(explorer.selection.index) == list(expected.index)
    assert explorer.matched > 1000
    assert [r["row"] for r in widget.rows] == list(expected.index[:50])

    widget.page = explorer.pages - 1
    assert len(widget.rows) == explorer.matched - 50 * (explorer.pages - 1)
    last = int(expected.index[-1])
    assert widget.rows[-1]["row"] == last
    widget._handle_custom_msg({"action": "open", "row": last}, [])
    assert explorer.case.raw is big.raw["case_results"][last]
    widget._handle_custom_msg({"action": "next"}, [])  # the last match: stays
    assert widget.selected == last

    state = widget.get_state(["rows", "info", "columns", "options", "case"])
    assert len(json.dumps(state).encode()) < 200_000
    widget._handle_custom_msg({"action": "reset"}, [])
    assert explorer.matched == 100_002 and np.array_equal(explorer.rows[:5], np.arange(5))
