"""The report's HTML view: header, summary, worst cases, drill-downs, limits."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb._util.text import clip
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.model.summary import heta_score_summary
from heta_nb.render import (
    RenderLimits,
    build_report_context,
    render_report_html,
    report_plain_text,
)
from heta_nb.render.context import default_id_prefix, safe_url
from heta_nb.render.env import environment, format_count, format_number
from heta_nb.render.svg import histogram
from heta_nb.testing import synthetic_report

MANIFEST = {"name": "thin", "version": "1", "split": "test", "task_type": "qa"}


def benchmark(n: int) -> Benchmark:
    return Benchmark(MANIFEST, (), [BenchmarkCase(case_id=f"c{i:02d}", query=f"question {i}") for i in range(n)])


def answer(query: str) -> dict[str, Any]:
    return {"mode": "m", "results": [{"id": "r1", "text": f"text of {query}"}], "answer": query}


def hit_all(case: Any, response: Any) -> dict[str, Any]:
    """A 0/1 *float* score (like hit@K) that is 1.0 for every case."""
    return {"name": "hit", "value": 1.0}


def run(n: int, evaluators: list[Any], **kwargs: Any) -> heta_nb.EvaluationReport:
    return heta_nb.evaluate(
        benchmark(n),
        kb=answer,
        query_modes=["m"],
        evaluators=evaluators,
        knowledge_base_name="kb",
        progress=False,
        lint=False,
        **kwargs,
    )


ROOT = Path(__file__).resolve().parents[2]


SIZE_BUDGET = 300 * 1024


class Page(HTMLParser):
    """Every element (tag, attrs), the text, and the elements by ``data-testid``."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self.style = ""
        self._in_style = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        else:
            self.texts.append(data)

    @property
    def text(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.texts))

    def testids(self) -> set[str]:
        return {a["data-testid"] for _, a in self.elements if a.get("data-testid")}

    def with_class(self, name: str) -> list[dict[str, str | None]]:
        return [a for _, a in self.elements if name in (a.get("class") or "").split()]


def load(name: str) -> EvaluationReport:
    return heta_nb.load_report(FIXTURES / f"report-{name}.json")


def fixture_dict(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"report-{name}.json").read_bytes())


def report_from(data: dict[str, Any]) -> EvaluationReport:
    data["score_summary"] = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in data["case_results"])
    return EvaluationReport.from_dict(data)


def plain_data(value: Any, path: str = "ctx") -> None:
    """Assert a context holds only JSON-like plain data (no model objects, no Markup)."""
    assert type(value) in (dict, list, str, int, float, bool, type(None)), f"{path}: {type(value).__name__}"
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str, path
            plain_data(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            plain_data(item, f"{path}[{index}]")


TEMPLATE_BLOCKS = {
    "report.html.j2": {"header", "summary", "cases", "errors", "details"},
    "case.html.j2": {"header", "case"},
    "score.html.j2": {"score"},
    "response.html.j2": {"header", "response"},
    "benchmark.html.j2": {"manifest", "counts", "labels", "cases"},
    "run.html.j2": {"status", "progress", "build", "modes", "errors"},
}


def test_the_run_settings_show_the_timeout_in_seconds() -> None:
    html = run(2, [hit_all], timeout_s=60)._repr_html_()
    start = html.index("timeout")
    assert "60 s" in html[start : start + 80] and "60.0000" not in html


# -- the report view -------------------------------------------------------------------


def test_every_fixture_renders_with_its_sections(fixture_path: Path) -> None:
    report = heta_nb.load_report(fixture_path)
    html = render_report_html(report)
    page = Page(html)
    root_tag, root = page.elements[0]
    assert root_tag == "div" and root["class"] == "heta-report" and root["data-testid"] == "heta-report"
    assert root["id"] == default_id_prefix(report.report_id)
    ids = page.testids()
    assert {"heta-header", "heta-summary", "heta-cases", "heta-errors", "heta-case-details"} <= ids
    for mode in report.modes:
        assert f"heta-cases-{mode}" in ids
    assert len(html.encode()) < SIZE_BUDGET
    assert "script" not in {tag for tag, _ in page.elements}
    assert report.report_id in page.text and report.benchmark.name in page.text


def test_header_names_benchmark_kbs_recipe_modes_and_counts() -> None:
    page = Page(render_report_html(load("multi-unit")))
    text = page.text
    for name in ("lighthouse multi-coast", "lighthouse multi-harbour_towns", "parse_documents", "ParseDocuments"):
        assert name in text
    assert "8 cases" in text and "8 results" in text and "0 errors" in text
    assert "2 KBs" in text
    context = build_report_context(load("errors"))
    header = context["header"]
    assert (header["cases"], header["results"], header["errors"], header["errors_pct"]) == ("10", "30", "21", "70.0%")
    assert header["modes"] == ["full_text_search", "vector_search", "no_such_mode"]
    assert [s["name"] for s in header["steps"]] == ["parse_documents", "split_documents", "index_full_text"]
    assert header["benchmark"]["homepage_url"] == "https://example.invalid/lighthouse_mini"
    assert header["banner"] is None and header["status"] is None


def test_build_report_context_is_plain_data_with_expected_values() -> None:
    context = build_report_context(load("errors"))
    plain_data(context)
    summary = context["summary"]
    assert [r["mode"] for r in summary["rows"]] == ["full_text_search", "vector_search", "no_such_mode"]
    first = summary["rows"][0]
    assert (first["cases"], first["errors"], first["skipped"]) == ("10", "1 error", "3")  # cases, not scores
    recall = first["cells"][0]
    # the mean of the 8 scored values (7/8; Heta's 7/9 counts the skipped one as 0, in the tooltip)
    assert recall["mean"] == "0.875" and recall["n"] == "8" and recall["ci"].startswith("[")
    assert "Heta's score_summary: 0.7778" in recall["title"]
    assert recall["note"]  # "1 errored case not counted; ..." as a footnote
    assert all(cell is None for cell in summary["rows"][1]["cells"])  # vector_search: every result errored
    footnotes = {f["marker"]: f["text"]["text"] for f in summary["footnotes"]}
    assert "1 errored case not counted" in footnotes[recall["note"]]
    groups = context["errors"]["groups"]
    assert [(g["mode"], g["error_type"], g["count"]) for g in groups] == [
        ("vector_search", "LookupError", "10"),
        ("no_such_mode", "LookupError", "10"),
        ("full_text_search", "RuntimeError", "1"),
    ]
    assert groups[0]["case_ids"][:2] == ["c01", "c02"] and groups[0]["ids_more"] == 0
    assert "chunk_vector_index" in groups[0]["message"]["text"]
    table = context["modes"][0]
    assert table["testid"] == "heta-cases-full_text_search"
    assert table["rows"][0]["status"] == "✗ RuntimeError"  # errors first
    # then the lowest evidence_recall@3 (ties in report order), the skipped score (c07) last
    assert [r["case_id"] for r in table["rows"]] == [
        "c05",
        "c06",
        "c01",
        "c02",
        "c03",
        "c04",
        "c08",
        "c09",
        "c10",
        "c07",
    ]
    assert table["note"] == "all 10 cases · worst first by evidence_recall@3 (errors first, skipped last)"


def test_summary_marks_the_best_mean_per_metric_with_a_text_marker() -> None:
    report = load("normal")
    context = build_report_context(report)
    summary = context["summary"]
    names = [m["name"]["text"] for m in summary["metrics"]]
    column = names.index("beir_precision@3")
    best = {row["mode"]: row["cells"][column]["best"] for row in summary["rows"]}
    assert best == {"full_text_search": True, "extractive_answer": True, "sql_text_search": False}  # a tie
    # answer_contains: only extractive_answer returns answers (the other two are n/a), so no best
    column = names.index("answer_contains")
    assert [row["cells"][column]["best"] for row in summary["rows"]] == [False, False, False]
    page = Page(render_report_html(report))
    cells = [a for a in page.with_class("heta-best")]
    assert cells and all(a.get("title") for a in cells)
    assert "0.417 ★" in page.text
    assert "best mean per metric" in page.text
    # the distribution sparkline of each numeric cell is an accessible image
    svgs = [a for tag, a in page.elements if tag == "svg"]
    assert svgs and all(a["role"] == "img" and a["aria-label"].startswith("distribution of ") for a in svgs)
    assert any("answer_contains in extractive_answer" in a["aria-label"] for a in svgs)


def test_no_best_marker_with_a_single_mode_or_a_tie() -> None:
    context = build_report_context(load("multi-unit"))
    assert not context["summary"]["has_best"]
    assert not any(c and not c["text"] and c["best"] for r in context["summary"]["rows"] for c in r["cells"])


def test_showing_n_of_m_with_thousands_separators_and_worst_first_order() -> None:
    report = synthetic_report(1_500, modes=("full_text_search", "extractive_answer"), results_per_case=1)
    context = build_report_context(report, RenderLimits(max_cases_per_mode=40, max_details=6))
    table = context["modes"][0]
    assert table["note"].startswith("showing 40 of 1,500 cases · worst first by evidence_recall@5")
    results = {(r.case_id, r.query_mode): r for r in report.case_results}
    mode = "full_text_search"
    rows = table["rows"]
    errors = [row for row in rows if not row["ok"]]
    assert rows[: len(errors)] == errors and errors  # errors first
    values = [results[(row["case_id"], mode)].score("evidence_recall@5").numeric for row in rows[len(errors) :]]
    assert values == sorted(values)
    everything = sorted(
        r.score("evidence_recall@5").numeric
        for r in report.case_results
        if r.query_mode == mode and r.ok and not r.score("evidence_recall@5").skipped
    )
    assert values == everything[: len(values)]  # the worst of all, not of a prefix
    assert context["details"]["shown"] == 6
    assert [len(group["cases"]) for group in context["details"]["modes"]] == [3, 3]  # spread over the modes
    assert context["details"]["note"] == "details of 6 of the 80 listed cases (the worst of each mode)"
    linked = [row["anchor"] for t in context["modes"] for row in t["rows"] if row["anchor"]]
    assert len(linked) == 6


def test_default_limits_show_50_rows_and_say_so() -> None:
    report = synthetic_report(60, modes=("m",), results_per_case=1)
    page = Page(render_report_html(report))
    assert "showing 50 of 60 cases" in page.text


def test_worst_first_when_results_miss_the_sort_metric() -> None:
    data = fixture_dict("normal")
    # c03 in full_text_search: its first metric becomes text, another has none at all
    for result in data["case_results"]:
        if result["query_mode"] == "full_text_search" and result["case_id"] == "c03":
            result["scores"][0]["value"] = "error"
            result["scores"][0]["metadata"] = {"error": {"type": "ValueError", "message": "boom"}}
        if result["query_mode"] == "full_text_search" and result["case_id"] == "c04":
            result["scores"] = result["scores"][1:]
    context = build_report_context(report_from(data))
    rows = context["modes"][0]["rows"]
    assert [r["case_id"] for r in rows[:2]] == ["c03", "c04"]  # no usable value: right after errors
    assert rows[0]["cells"][0]["text"] == "error" and rows[0]["cells"][0]["cls"] == "heta-bad"
    assert rows[1]["cells"][0]["text"] == "—"
    assert "evaluator error ValueError: boom" in Page(render_report_html(report_from(data))).text


def test_nan_and_infinite_values_are_formatted_safely() -> None:
    assert [format_number(v) for v in (math.nan, math.inf, -math.inf, None, 0.12345, -0.0001)] == [
        "—",
        "∞",
        "−∞",
        "—",
        "0.123",
        "0.000",
    ]
    assert format_number(1e100) == "1.00e+100" and format_count(12_400) == "12,400"
    data = fixture_dict("multi-unit")
    for result in data["case_results"]:
        result["scores"][0]["value"] = math.nan
    report = report_from(data)
    context = build_report_context(report)
    cell = context["summary"]["rows"][0]["cells"][0]
    assert cell["mean"] == "—" and cell["ci"] == "[—]"
    html = render_report_html(report)
    assert "nan" not in Page(html).text.lower().replace("nancy", "")
    assert {row["cells"][0]["text"] for row in context["modes"][0]["rows"]} <= {"—", "skipped"}


def test_cancelled_run_shows_a_prominent_banner() -> None:
    data = fixture_dict("normal")
    data["case_results"] = data["case_results"][:12]
    data["metadata"]["heta_nb"] = {"status": "cancelled", "done": 12, "total": 30, "warnings": ["partial report"]}
    page = Page(render_report_html(report_from(data)))
    banner = [a for _, a in page.elements if a.get("data-testid") == "heta-status"]
    assert banner and "heta-banner-bad" in banner[0]["class"]
    assert "Run cancelled — 12 of 30 results recorded (40.0%)" in page.text
    assert "heta-warnings" in page.testids() and "partial report" in page.text
    assert "status: cancelled (12 of 30 results recorded (40.0%))" in report_plain_text(report_from(data))


def test_failed_run_shows_the_failure() -> None:
    data = fixture_dict("multi-unit")
    data["metadata"]["heta_nb"] = {"status": "failed", "done": 3, "total": 8, "failure": "KB build failed: disk full"}
    page = Page(render_report_html(report_from(data)))
    assert "Run failed — 3 of 8 results recorded" in page.text and "disk full" in page.text


def test_long_texts_are_truncated_with_a_visible_marker() -> None:
    data = fixture_dict("multi-unit")
    data["case_results"][0]["query"] = "q" * 1_000
    data["case_results"][0]["response"]["results"][0]["text"] = "t" * 5_000
    data["case_results"][0]["case_id"] = "c" * 500
    html = render_report_html(report_from(data))
    text = Page(html).text
    assert "… (+880 chars)" in text  # the query in the case table (max_cell_chars=120)
    assert "… (+700 chars)" in text  # the query in its drill-down (max_text_chars=300)
    assert "… (+4,700 chars)" in text  # the result text
    assert "… (+420 chars)" in text  # the case id (max_name_chars=80)
    assert "q" * 301 not in html and "t" * 301 not in html
    assert clip("abc", 2) == {"text": "ab", "more": "1"} and clip(None, 5) == {"text": "", "more": ""}


def test_links_only_for_http_urls() -> None:
    assert safe_url("https://example.org/x?y=1") == "https://example.org/x?y=1"
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.org", "https://", "http://a b", "ftp://x", None, 3):
        assert safe_url(bad) is None
    data = fixture_dict("normal")
    page = Page(render_report_html(report_from(data)))
    links = [a for tag, a in page.elements if tag == "a" and not (a.get("href") or "").startswith("#")]
    assert links == [
        {"href": "https://example.invalid/lighthouse_mini", "target": "_blank", "rel": "noopener noreferrer"}
    ]
    data["benchmark"]["homepage"] = "javascript:alert(1)"
    page = Page(render_report_html(report_from(data)))
    assert not [a for tag, a in page.elements if tag == "a" and not a["href"].startswith("#")]
    assert "javascript:alert(1)" in page.text  # shown, as text


def test_drill_down_shows_scores_results_sources_and_tracebacks() -> None:
    data = fixture_dict("errors")
    for result in data["case_results"]:
        if result["error"]:
            result["error"]["metadata"] = {"attempts": 2, "traceback": "Traceback (most recent call last):\n  boom"}
    report = report_from(data)
    page = Page(render_report_html(report))
    text = page.text
    assert "heta-case-details" in page.testids()
    assert "Traceback (most recent call last):" in text and "attempts" in text
    assert "lh1 ✓ matched" in text  # the result's benchmark document was matched by an evaluator
    assert "harrow_point.txt" in text and "page 0 · chunk 0" in text
    assert "skipped: case has no BEIR qrels" in text
    assert len(page.with_class("heta-case")) == 30
    pre = [tag for tag, _ in page.elements if tag == "pre"]
    assert pre


def test_details_are_limited_and_say_so() -> None:
    context = build_report_context(load("normal"), RenderLimits(max_details=4, max_results_per_case=2))
    assert context["details"]["shown"] == 4
    assert context["details"]["note"] == "details of 4 of the 30 listed cases (the worst of each mode)"
    case = context["details"]["modes"][0]["cases"][0]
    assert len(case["response"]["results"]) == 2 and case["response"]["results_more"] == 3


def test_output_is_deterministic_and_ids_follow_the_report_id() -> None:
    report = load("errors")
    first = render_report_html(report)
    second = render_report_html(EvaluationReport.from_raw(copy.deepcopy(report.raw)))
    assert first == second
    prefix = "heta-" + hashlib.sha1(b"fixture-errors").hexdigest()[:10]
    assert f'id="{prefix}"' in first and f'href="#{prefix}-case-1"' in first
    assert 'id="custom-x"' in render_report_html(report, id_prefix="custom x")


def test_css_is_scoped_and_uses_theme_variables() -> None:
    page = Page(render_report_html(load("errors")))
    css = re.sub(r"/\*.*?\*/", "", page.style, flags=re.S)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{[^{}]*\}", css) for s in block.split(",")]
    assert selectors and all(s.startswith(".heta-report") for s in selectors), [
        s for s in selectors if not s.startswith(".heta-report")
    ]
    for variable in ("--jp-ui-font-color1", "--jp-layout-color1", "--jp-border-color2", "--jp-brand-color1"):
        assert variable in css
    assert "url(" not in css and "@import" not in css


@pytest.mark.parametrize("name", sorted(TEMPLATE_BLOCKS))
def test_template_block_names(name: str) -> None:
    assert set(environment().get_template(name).blocks) == TEMPLATE_BLOCKS[name]


def test_report_plain_text_is_concise() -> None:
    text = report_plain_text(load("errors"))
    lines = text.splitlines()
    assert lines[0] == "EvaluationReport fixture-errors: lighthouse_mini 1/test (multihop_qa)"
    assert "10 cases · 30 results · 21 errors" in lines[1]
    # the headline: one line per mode, its best metrics with CIs, n/a metrics and errors
    assert lines[2] == (
        "full_text_search: evidence_recall@3 0.875 [0.529, 0.978], beir_ndcg@3 1.000 [0.646, 1.000], "
        "beir_map@3 1.000 [0.646, 1.000], +4 more · n/a: answer_contains, answer_exact_match · 1 error (10.0%)"
    )
    assert lines[3] == "vector_search: no scores · 10 errors (100.0%)"
    del lines[2:5]
    assert any(line.startswith("vector_search") and " 10 " in line for line in lines)
    assert lines[2].split() == [
        "mode",
        "results",
        "errors",
        "evidence_recall@3",
        "answer_contains",
        "answer_exact_match",
        "beir_ndcg@3",
    ]
    # means of the scored values (Heta's 0.778 counts the skipped case as 0); n/a, not 0.000
    assert lines[3].split() == ["full_text_search", "10", "1", "0.875", "n/a", "n/a", "1.000"]
    assert lines[-1] == "(+5 metrics; means of the scored values, skipped scores left out)"
    assert len(lines) <= 12 and all(len(line) <= 200 for line in text.splitlines())


def test_histogram_bins_and_labels() -> None:
    spark = histogram([0.0, 0.5, 1.0, 1.0], label="m in x")
    assert spark is not None and spark["label"].startswith("distribution of m in x: 12 bins from 0.000 to 1.000")
    assert len(spark["bars"]) == 3
    assert histogram([True, False, True], label="b", kind="bool")["label"].endswith("1 false, 2 true")
    assert histogram([math.nan], label="x") is None
    assert "1 non-finite left out" in histogram([1.0, 3.0, math.inf], label="x")["label"]
    assert len(histogram([5.0, 5.0], label="x")["bars"]) == 1


def test_render_does_not_import_pandas_or_matplotlib() -> None:
    # numpy, yes: the view reads the report's column table (report.columns)
    code = (
        "import sys, heta_nb; from heta_nb.render import render_report_html;"
        "render_report_html(heta_nb.load_report('tests/fixtures/heta-0.1.2/report-errors.json'));"
        "print(','.join(m for m in ('pandas', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def test_error_groups_are_limited_and_say_so() -> None:
    data = fixture_dict("errors")
    errored = [r for r in data["case_results"] if r["error"]]
    for index, result in enumerate(errored):
        result["error"]["error_type"] = f"E{index % 7}"
    context = build_report_context(report_from(data), RenderLimits(max_error_groups=5, max_error_ids=2))
    errors = context["errors"]
    groups: dict[tuple[str, str], int] = {}
    for result in errored:
        key = (result["query_mode"], result["error"]["error_type"])
        groups[key] = groups.get(key, 0) + 1
    assert errors["note"] == f"21 errors in {len(groups)} groups, showing the 5 largest"
    counts = sorted(groups.values(), reverse=True)[:5]
    assert [int(g["count"]) for g in errors["groups"]] == counts
    assert all(len(g["case_ids"]) == min(2, int(g["count"])) for g in errors["groups"])
    assert all(g["ids_more"] == int(g["count"]) - len(g["case_ids"]) for g in errors["groups"])
    assert build_report_context(load("normal"))["errors"]["note"] == "none"


def test_drill_downs_stop_at_the_size_budget() -> None:
    report = load("normal")
    context = build_report_context(report, RenderLimits(max_output_chars=90_000))
    shown = context["details"]["shown"]
    assert 0 < shown < 30
    assert "more would take this view over about 90 KB" in context["details"]["note"]
    anchors = [row["anchor"] for table in context["modes"] for row in table["rows"] if row["anchor"]]
    assert len(anchors) == shown  # no link to a drill-down that is not there
    assert len(render_report_html(report, RenderLimits(max_output_chars=90_000)).encode()) < 110_000
