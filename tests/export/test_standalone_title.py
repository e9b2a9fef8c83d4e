"""An exported page has one title (defect 11: "heta_nb report ..." then "Evaluation report ...")."""

from __future__ import annotations

import re
from pathlib import Path

import heta_nb

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "heta-0.1.2"


def _headings(html: str) -> list[str]:
    body = html.split("<body", 1)[1]
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<h[13][^>]*>(.*?)</h[13]>", body, re.S)]


def test_a_report_page_has_one_title() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    html = heta_nb.to_html(report)
    titles = [h for h in _headings(html) if report.report_id in h]
    assert titles == [f"Evaluation report {report.report_id}"]
    assert "<title>heta_nb report fixture-normal" in html  # the browser tab still says what it is


def test_a_comparison_page_has_one_title() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    html = heta_nb.to_html(heta_nb.compare(report, modes=["full_text_search", "sql_text_search"]))
    assert "<h1" not in html.split("<body", 1)[1]
    assert [h for h in _headings(html) if "omparison" in h] == ["Comparison of 2 systems"]


def test_a_chosen_title_heads_the_page() -> None:
    html = heta_nb.to_html(heta_nb.load_report(FIXTURES / "report-normal.json"), title="Nightly <run>")
    assert "<h1>Nightly &lt;run&gt;</h1>" in html and "<title>Nightly &lt;run&gt;</title>" in html
