"""The explorer's widget driven as the browser drives it: traits set, messages sent; what it
holds (one page), what it sends (bounded), and its static fallback for viewers without widgets."""

from __future__ import annotations

import json

import pytest

from heta_nb.explorer import explore
from heta_nb.model import EvaluationReport
from heta_nb.testing import synthetic_report_dict

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _send(widget, **content) -> None:
    """Deliver a custom message as the comm would (``model.send`` in the ES module)."""
    widget._handle_custom_msg(content, [])


def test_the_browser_sets_filters_through_traits(report) -> None:
    explorer = explore(report)
    widget = explorer.widget
    assert len(widget.rows) == 50 and widget.info["count_text"].startswith(f"{report.case_count:,} of")
    widget.search = "keeper"
    widget.status = "ok"
    assert explorer.filters.search == "keeper" and explorer.filters.status == "ok"
    assert [r["row"] for r in widget.rows] == [int(i) for i in explorer.rows[:50]]
    widget.sort = "latency_ms"
    widget.descending = True
    latencies = explorer.selection["latency_ms"].head(50).tolist()
    assert latencies == sorted(latencies, reverse=True)
    widget.page = 2
    assert explorer.page == 2 and widget.rows[0]["row"] == int(explorer.rows[100])
    widget.metric = "beir_ndcg@5"
    widget.low = "0.5"
    assert explorer.filters.low == 0.5 and explorer.page == 0
    assert (explorer.selection["beir_ndcg@5"] >= 0.5).all()


def test_bad_input_from_the_browser_becomes_a_one_line_error(report) -> None:
    explorer = explore(report, metric="beir_ndcg@5")
    widget = explorer.widget
    before = explorer.matched
    widget.low = "half"
    assert widget.info["error"] == "low: 'half' is not a number"
    assert explorer.matched == before
    widget.low = "0.1"
    assert widget.info["error"] == "" and explorer.matched < before


def test_messages_open_step_and_close_cases(report) -> None:
    explorer = explore(report, mode="extractive_answer")
    widget = explorer.widget
    row = widget.rows[3]["row"]
    _send(widget, action="open", row=row)
    assert widget.selected == row and explorer.case.raw == report.case_result_json(row)
    assert widget.case["row"] == row and widget.case["id"] == explorer.case.case_id and widget.case["data"]["s"]
    assert widget.info["case_text"] == f"{explorer.table.describe_row(row)} · 4 of {explorer.matched:,}"
    _send(widget, action="next")
    assert widget.selected == widget.rows[4]["row"]
    _send(widget, action="previous")
    assert widget.selected == row
    _send(widget, action="close")
    assert widget.selected == -1 and widget.case is None
    _send(widget, action="open", row=10**9)
    assert "row" in widget.info["error"] or "index" in widget.info["error"]
    _send(widget, action="reset")  # back to how it opened: mode extractive_answer
    assert explorer.filters.mode == "extractive_answer" and widget.mode == "extractive_answer"
    _send(widget, action="clear")
    assert explorer.filters.mode is None and widget.mode == ""


def test_the_static_report_is_the_fallback_of_the_widget(report) -> None:
    explorer = explore(report)
    data, metadata = explorer._repr_mimebundle_()
    assert data[WIDGET_VIEW]["model_id"] == explorer.widget.model_id
    assert 'data-testid="heta-report"' in data["text/html"]  # the same static view as the report's own repr
    assert data["text/html"] == report._repr_html_()
    # the text a viewer without widgets (or HTML) shows: the explorer's line, then the report's own text
    line, rest = data["text/plain"].split("\n", 1)
    assert line == f"Case explorer of {repr(explorer)[10:-1]} (interactive where Jupyter widgets run)"
    assert rest == report._repr_mimebundle_()["text/plain"] and "<Explorer" not in data["text/plain"]


def test_the_page_state_stays_small_whatever_the_text() -> None:
    data = synthetic_report_dict(120, seed=5)
    long = "<b>x</b> " * 5000
    for result in data["case_results"]:
        result["query"] = long
        result["case_id"] += "y" * 500
        if result["response"]:
            result["response"]["answer"] = long
            for item in result["response"]["results"]:
                item["text"] = long
    explorer = explore(EvaluationReport.from_raw(data))
    explorer.open(0)
    state = explorer.widget.get_state(["rows", "info", "columns", "options", "case"])
    size = len(json.dumps(state).encode("utf-8"))
    assert size < 200_000, size
    assert all(len(cell[0]) <= 100 for row in explorer.widget.rows for cell in row["cells"])


@pytest.mark.hostile
def test_the_module_writes_kernel_values_as_text_only() -> None:
    from heta_nb.explorer.widget import ASSETS

    source = (ASSETS / "explorer.js").read_text()
    engine = (ASSETS / "engine.js").read_text()
    for text in (source, engine):  # the case panel too: built with textContent from the case's data
        for forbidden in (
            "innerHTML",
            "http://",
            "https://",
            "import(",
            "eval(",
            "new Function",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
        ):
            assert forbidden not in text


def test_reset_goes_back_to_the_filters_passed_in_code_and_clear_clears(report) -> None:
    """explore(report, status="error") then Reset: back to status error (it used to drop it);
    the empty table's "Clear filters" (action clear) clears everything."""
    explorer = explore(report, status="error")
    errors = explorer.matched
    assert 0 < errors < report.case_count
    widget = explorer.widget
    widget.search = "no such words at all"
    assert explorer.matched == 0
    _send(widget, action="reset")
    assert explorer.filters.status == "error" and explorer.filters.search == "" and explorer.matched == errors
    assert widget.status == "error"
    _send(widget, action="clear")
    assert explorer.filters.status is None and explorer.matched == report.case_count
    opened_plain = explore(report)
    opened_plain.filter(status="error")
    assert opened_plain.reset().matched == report.case_count  # opened with nothing: Reset clears
