"""Standalone, offline HTML exports of reports and comparisons."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, REPORT_FILES

import heta_nb
from heta_nb.testing import synthetic_report


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            self.scripts[-1] += data


def _parse(html: str) -> _Collector:
    parser = _Collector()
    parser.feed(html)
    return parser


def _assert_offline(parser: _Collector) -> None:
    csp = [
        a for t, a in parser.tags if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy"
    ]
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")
    for tag, attrs in parser.tags:
        assert tag not in ("link", "iframe", "object", "embed", "base"), tag
        for name in ("src", "srcset", "data", "poster", "action", "formaction"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith("data:"), (tag, name, value[:80])
        if tag == "script":
            assert "src" not in attrs


def _undated(html: str) -> str:
    """The page without its export time (two exports may fall in different minutes)."""
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", html)


@pytest.mark.parametrize("path", REPORT_FILES, ids=lambda p: p.stem)
def test_fixture_reports_export(tmp_path: Path, path: Path) -> None:
    report = heta_nb.load_report(path)
    target = tmp_path / "out" / "report.html"
    assert heta_nb.to_html(report, target) == target  # the path, not the text, in a notebook cell
    html = target.read_text(encoding="utf-8")
    assert _undated(html) == _undated(heta_nb.to_html(report))  # the text, without a path
    assert list(target.parent.iterdir()) == [target], "no temporary files may be left behind"
    parser = _parse(html)
    _assert_offline(parser)
    assert 'data-testid="heta-report"' in html and "data-heta-explorer=" in html
    payload = next(
        s
        for s, (t, a) in zip(parser.scripts, [x for x in parser.tags if x[0] == "script"])
        if a.get("type") == "application/json"
    )
    data = json.loads(payload)
    table = data["tables"][""]
    assert table["n"] == len(table["cases"]) == len(report.case_results)  # every case, not the first N
    assert table["case_ids"] == [r.case_id for r in report.case_results]
    assert report.report_id in html and "Recipe manifest" in html
    assert re.search(r"url\(|@import", html.split("<script>")[0].split("</style>")[0]) is None


def test_css_and_the_static_part_read_without_javascript() -> None:
    html = heta_nb.to_html(heta_nb.load_report(FIXTURES / "report-errors.json"))
    static = re.sub(r"<script\b.*?</script>", "", html, flags=re.S)
    assert "Score summary" in static or "heta-summary" in static
    assert "needs\n    JavaScript" in static or "needs JavaScript" in static


@pytest.mark.hostile
def test_hostile_text_cannot_break_out_of_the_json_payload() -> None:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    data["case_results"][0]["query"] = "</script><script>alert(1)</script><!--"
    data["case_results"][0]["case_id"] = "c01\"'><img src=x onerror=alert(1)>"
    html = heta_nb.to_html(heta_nb.load_report(data))
    parser = _parse(html)
    _assert_offline(parser)
    assert not any(t == "img" and "onerror" in a for t, a in parser.tags)
    assert sum(1 for t, _ in parser.tags if t == "script") == 2  # the JSON payload and the explorer code only
    payload = json.loads(next(s for s in parser.scripts if s.strip().startswith("{")))
    table = payload["tables"][""]
    assert table["cases"][0]["q"] == "</script><script>alert(1)</script><!--"
    assert table["case_ids"][0] == "c01\"'><img src=x onerror=alert(1)>"


def test_big_report_export_is_smaller_than_its_report_json(tmp_path: Path) -> None:
    report = synthetic_report(600, results_per_case=5)
    size = len(report.to_json().encode("utf-8"))
    target = heta_nb.to_html(report, tmp_path / "big.html")
    assert target.stat().st_size < size
    html = target.read_text(encoding="utf-8")
    table = json.loads(next(s for s in _parse(html).scripts if s.strip().startswith("{")))["tables"][""]
    assert table["n"] == len(table["cases"]) == 1800


def test_comparison_export(tmp_path: Path) -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    comparison = heta_nb.compare(report, modes=["full_text_search", "sql_text_search"])
    html = heta_nb.to_html(comparison, tmp_path / "comparison.html").read_text(encoding="utf-8")
    parser = _parse(html)
    _assert_offline(parser)
    assert 'data-testid="heta-comparison"' in html and "Paired differences" in html
    bundle: dict[str, Any] = comparison._repr_mimebundle_()
    assert "text/plain" in bundle and 'data-testid="heta-comparison"' in bundle["text/html"]


def test_export_dispatches_on_the_extension(tmp_path: Path) -> None:
    from heta_nb.export import export

    report = heta_nb.load_report(FIXTURES / "report-beir-local.json")
    assert export(report, tmp_path / "a.html").read_text().startswith("<!DOCTYPE html>")
    assert json.loads(export(report, tmp_path / "a.ipynb").read_text())["nbformat"] == 4
    with pytest.raises(ValueError, match="unknown export format '.pdf'"):
        export(report, tmp_path / "a.pdf")


def test_to_html_into_a_folder_names_the_folder_not_a_temporary_file(tmp_path: Path) -> None:
    report = heta_nb.load_report(sorted(FIXTURES.glob("report-*.json"))[0])
    with pytest.raises(IsADirectoryError, match="is a folder") as info:
        heta_nb.to_html(report, tmp_path)
    assert str(tmp_path) in str(info.value) and ".tmp" not in str(info.value)
    assert list(tmp_path.iterdir()) == []
    nested = tmp_path / "new" / "folder" / "report.html"
    heta_nb.to_html(report, nested)
    assert nested.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
