"""An exported page has one title (defect 11: "heta_nb report ..." then "Evaluation report ..."),
and its headings are an outline: the title is the page's <h1> (issue 34: it was an <h3> above <h2>s)."""

from __future__ import annotations

import re
from pathlib import Path

import heta_nb

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "heta-0.1.2"


def _headings(html: str) -> list[str]:
    body = html.split("<body", 1)[1]
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<h[12][^>]*>(.*?)</h[12]>", body, re.S)]


def _levels(html: str) -> list[int]:
    """The heading levels of the page's body, in order."""
    return [int(level) for level in re.findall(r"<h([1-6])[\s>]", html.split("<body", 1)[1])]


def _assert_outline(levels: list[int]) -> None:
    """One <h1>, first; no heading deeper than one below the one before it (h1 -> h3 skips)."""
    assert levels and levels[0] == 1 and levels.count(1) == 1, levels
    for before, after in zip(levels, levels[1:]):
        assert after <= before + 1, levels


def test_a_report_page_has_one_title() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    html = heta_nb.to_html(report)
    titles = [h for h in _headings(html) if report.report_id in h]
    assert titles == [f"Evaluation report {report.report_id}"]
    assert "<title>heta_nb report fixture-normal" in html  # the browser tab still says what it is
    _assert_outline(_levels(html))


def test_a_comparison_page_has_one_title() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    html = heta_nb.to_html(heta_nb.compare(report, modes=["full_text_search", "sql_text_search"]))
    assert [h for h in _headings(html) if "omparison" in h] == ["Comparison of 2 systems"]
    _assert_outline(_levels(html))


def test_a_chosen_title_heads_the_page() -> None:
    html = heta_nb.to_html(heta_nb.load_report(FIXTURES / "report-normal.json"), title="Nightly <run>")
    assert "<h1>Nightly &lt;run&gt;</h1>" in html and "<title>Nightly &lt;run&gt;</title>" in html
    _assert_outline(_levels(html))  # the view's own title under it: an <h2>
    assert '<h2 class="heta-title">Evaluation report' in html


def test_a_leaderboard_page_is_an_outline() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    board = heta_nb.Leaderboard.from_reports([report])
    _assert_outline(_levels(board.to_html()))


def test_notebook_views_keep_their_titles_under_the_notebooks_headings() -> None:
    html = heta_nb.load_report(FIXTURES / "report-normal.json")._repr_html_()
    assert '<h3 class="heta-title">Evaluation report' in html and '<h4 class="heta-h">' in html
    assert "<h1" not in html and "<h2" not in html
