"""What an explorer can be pointed at: a store (pick a report), a path or ``STORE:KB/ID``,
and a report that grows (the explorer refreshes, keeping its filters and open case)."""

from __future__ import annotations

import pytest

from heta_nb.explorer import ReportSource, explore
from heta_nb.model import EvaluationReport
from heta_nb.store import ReportStore
from heta_nb.testing import synthetic_report, synthetic_report_dict


@pytest.fixture
def store(tmp_path):
    store = ReportStore(tmp_path / "store")
    store.save(synthetic_report(20, seed=1, report_id="first", knowledge_base_name="kb"))
    store.save(synthetic_report(30, seed=2, report_id="second", knowledge_base_name="kb"))
    return store


def test_a_store_explorer_picks_a_report_first(store) -> None:
    explorer = explore(store)
    assert explorer.table is None and explorer.total == 0 and explorer.case is None
    assert explorer.widget.info["empty"] == "Choose a report above."
    assert explorer.selection.empty
    choices = explorer.options()["reports"]
    assert [label.split(" · ")[0] for _, label in choices] == ["kb / second", "kb / first"]  # newest first
    assert choices[0][1].split(" · ")[1] == "90 results"
    key = choices[0][0]
    explorer.widget.report = key  # as the browser picks it
    assert explorer.total == 90 and explorer.table.report.report_id == "second"
    assert explorer.widget.info["empty"] == ""
    with pytest.raises(ValueError, match="is not in the store"):
        explorer.choose("nope/report.json")


def test_without_widgets_a_store_explorer_reads_as_the_store_s_listing(store) -> None:
    explorer = explore(store)
    data, _ = explorer._repr_mimebundle_()
    assert repr(explorer) == "<Explorer Report store: choose a report: choose one of 2 reports>"
    text = data["text/plain"].splitlines()  # a line, then the reports, newest first, with their keys
    assert text[0] == f"Case explorer of the report store {store.location}: choose one of 2 reports, newest first:"
    assert [line.split(" · ")[0].strip() for line in text[1:]] == ["kb / second", "kb / first"]
    assert all(f"({key})" in "\n".join(text) for key, _ in explorer.options()["reports"])
    html = data["text/html"]  # what nbviewer or GitHub shows: the reports, newest first, with their keys
    assert 'data-testid="heta-store"' in html and "2 reports, newest first" in html
    assert html.index("kb / second") < html.index("kb / first")
    assert all(key in html for key, _ in explorer.options()["reports"])
    explorer.choose(explorer.options()["reports"][1][0])
    explorer.filter(mode="extractive_answer", status="ok")
    explorer.open(0)
    assert repr(explorer) == (
        "<Explorer first · synthetic:1:test: 19 of 60 match (mode extractive_answer; status ok),"
        " page 1 of 1, case q00000 · extractive_answer open>"
    )
    data, _ = explorer._repr_mimebundle_()
    assert 'data-testid="heta-report"' in data["text/html"]
    assert data["text/plain"].startswith("Case explorer of first · synthetic:1:test: 19 of 60 match")
    assert "\nEvaluationReport first" in data["text/plain"]  # the chosen report's own text


def test_an_empty_store_says_so(tmp_path) -> None:
    empty = ReportStore(tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    explorer = explore(empty)
    assert explorer.widget.info["empty"] == "This store has no reports yet."
    assert repr(explorer) == "<Explorer Report store: choose a report: no reports yet>"
    data, _ = explorer._repr_mimebundle_()
    assert "This store has no reports yet." in data["text/html"]
    assert data["text/plain"] == f"Case explorer of the report store {empty.location}: no reports yet"


def test_paths_and_store_references(store, tmp_path) -> None:
    report = synthetic_report(10, seed=3)
    path = tmp_path / "report.json"
    path.write_bytes(report.to_json() if isinstance(report.to_json(), bytes) else report.to_json().encode())
    assert explore(str(path)).total == report.case_count
    assert explore(path).total == report.case_count
    assert explore(f"{store.location}:kb/first").table.report.report_id == "first"
    with pytest.raises(TypeError, match="cannot explore a int; give an EvaluationReport, a Comparison"):
        explore(42)


def test_a_growing_report_refreshes_keeping_filters_and_the_open_case() -> None:
    full = synthetic_report_dict(40, seed=6)
    done = {"n": 30}

    def snapshot() -> EvaluationReport:
        return EvaluationReport.from_raw({**full, "case_results": full["case_results"][: done["n"]]})

    explorer = explore(ReportSource(snapshot, generation=lambda: done["n"]), mode="full_text_search")
    assert explorer.total == 30
    opened = explorer.open(2)
    done["n"] = 120
    explorer.refresh()
    assert explorer.total == 120 and explorer.filters.mode == "full_text_search"
    assert explorer.case.raw == opened.raw and explorer.matched == 40
    before = explorer.table
    explorer.refresh()  # nothing new: the table is kept
    assert explorer.table is before


def test_choosing_another_report_drops_filters_it_cannot_apply(store) -> None:
    store.save(synthetic_report(5, seed=3, modes=("other_mode",), report_id="third", knowledge_base_name="kb"))
    explorer = explore(store)
    keys = {label.split(" · ")[0]: key for key, label in explorer.options()["reports"]}
    explorer.choose(keys["kb / first"]).filter(search="keeper", mode="extractive_answer")
    explorer.choose(keys["kb / second"])  # the same modes: the filters carry over
    assert (explorer.filters.search, explorer.filters.mode) == ("keeper", "extractive_answer")
    explorer.choose(keys["kb / third"])  # no such mode: only the search stays
    assert (explorer.filters.search, explorer.filters.mode) == ("keeper", None)
    assert explorer.total == 5


@pytest.mark.hostile
def test_the_store_listing_escapes_names(tmp_path) -> None:
    hostile = '<img src=x onerror="alert(1)"><b>bold'  # (a "/" is refused as a name)
    store = ReportStore(tmp_path / "hostile")
    store.save(synthetic_report(3, seed=1, report_id="r1", knowledge_base_name=hostile))
    html = explore(store)._repr_mimebundle_()[0]["text/html"]
    assert "<img" not in html and "<b>bold" not in html
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html
