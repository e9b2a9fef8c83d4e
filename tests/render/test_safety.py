"""Every view is inert: untrusted text is escaped everywhere it reaches HTML."""

from __future__ import annotations

import json
from collections.abc import Callable
from html.parser import HTMLParser
from types import MappingProxyType
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb.render
from heta_nb.benchmark import (
    Benchmark,
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkRunUnit,
)
from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.model.summary import heta_score_summary
from heta_nb.render import (
    render_benchmark_html,
    render_case_html,
    render_report_html,
    render_response_html,
    render_run_html,
    render_score_html,
    report_plain_text,
)
from heta_nb.runner.state import ModeProgress, RunState

SIZE_BUDGET = 300 * 1024


TEMPLATE_PROBE = "«{{7*7}}»"


RAW_PROBE = "{% raw %}x{% endraw %}{% for x in range(3) %}y{% endfor %}"


ENTITY_PROBE = "&lt;"


BIG = ("<b>&</b>" * 130_000)[:999_960] + "</script><img src=x onerror=alert(1)>"


CORPUS = (
    "</script><img src=x onerror=alert(1)>",
    "\"'><svg onload=alert(1)>",
    "javascript:alert(1)",
    TEMPLATE_PROBE,
    RAW_PROBE,
    "<!-- x",
    ENTITY_PROBE,
    BIG,
    "<a href='javascript:alert(1)'>x</a><iframe src=//evil.org></iframe>",
    "<style>*{display:none}</style>",
    "\u202egnp.exe <math><mi xlink:href=javascript:alert(1)>",
)


HOSTILE_KEYS = {
    "<img src=x onerror=alert(1)>": "<script>alert(1)</script>",
    TEMPLATE_PROBE: TEMPLATE_PROBE,
    "\"'><svg onload=alert(2)>": ["</td></tr></table><script>alert(3)</script>", {"<x onclick=y>": BIG}],
}


# Keys whose values must stay valid for the report to load.
KEEP = {"schema_version", "build_scope"}


FREE_FORM = {"metadata", "source", "origin", "knowledge_base_manifest", "recipe_manifest"}


ALLOWED_TAGS = {
    "a", "br", "code", "dd", "details", "div", "dl", "dt", "h3", "h4", "li", "ol", "p", "pre", "progress",
    "rect", "span", "strong", "style", "sup", "summary", "svg", "table", "tbody", "td", "th", "thead", "title",
    "tr", "ul", "wbr",
}  # fmt: skip


class _Counter:
    def __init__(self) -> None:
        self.index = 0

    def next(self) -> str:
        self.index += 1
        return CORPUS[self.index % len(CORPUS)]


def poison(value: Any, counter: _Counter, key: str | None = None) -> Any:
    """Every string replaced by a corpus item; hostile keys added to free-form mappings."""
    if isinstance(value, str):
        return value if key in KEEP else counter.next()
    if isinstance(value, list):
        return [poison(item, counter, key) for item in value]
    if isinstance(value, dict):
        result = {k if k in KEEP else k: poison(v, counter, k) for k, v in value.items()}
        if key in FREE_FORM:
            result.update(json.loads(json.dumps(HOSTILE_KEYS)))
        return result
    return value


def hostile_report() -> EvaluationReport:
    data = json.loads((FIXTURES / "report-errors.json").read_bytes())
    normal = json.loads((FIXTURES / "report-normal.json").read_bytes())
    data["case_results"] += normal["case_results"][:6]  # with trace events
    for result in data["case_results"]:
        if result["response"] is not None:
            result["response"]["answer"] = "an answer"
        if result["error"] is not None:
            result["error"]["metadata"] = {"traceback": "Traceback (most recent call last):\n  ...", "attempts": 1}
    counter = _Counter()
    data = poison(data, counter)
    data["benchmark"]["homepage"] = "javascript:alert(1)"
    data["report_id"] = TEMPLATE_PROBE
    data["case_results"][0]["query"] = BIG
    data["metadata"]["heta_nb"] = {"status": "cancelled", "done": 3, "total": 9, "failure": BIG, "warnings": [BIG]}
    # One key per score name of the hostile data, so Heta's summary stays consistent.
    data["score_summary"] = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in data["case_results"])
    return EvaluationReport.from_dict(data)


def hostile_benchmark() -> Benchmark:
    manifest = {
        "name": CORPUS[0],
        "version": TEMPLATE_PROBE,
        "split": CORPUS[1],
        "task_type": BIG,
        "homepage": "javascript:alert(1)",
        "license": ENTITY_PROBE,
        "citation": BIG,
        "metadata": dict(HOSTILE_KEYS),
    }
    documents = [
        BenchmarkDocument(document_id=f"d{i}", name=f"doc{i}.txt", media_type=CORPUS[i % len(CORPUS)], data=b"x")
        for i in range(3)
    ]
    cases = [
        BenchmarkCase(
            case_id=CORPUS[i % len(CORPUS)] + str(i),
            query=CORPUS[(i + 3) % len(CORPUS)],
            expected=BenchmarkExpected(
                answers=(CORPUS[(i + 5) % len(CORPUS)],),
                evidence=(BenchmarkEvidence(text=CORPUS[i % len(CORPUS)]),),
            ),
            labels={CORPUS[i % len(CORPUS)]: CORPUS[(i + 1) % len(CORPUS)], "type": RAW_PROBE},
        )
        for i in range(25)
    ]
    return Benchmark(
        manifest,
        documents,
        cases,
        units=[BenchmarkRunUnit(unit_id=CORPUS[2])],
        evaluators=[CORPUS[0], TEMPLATE_PROBE],
        source=BIG,
    )


def hostile_state() -> RunState:
    modes = (CORPUS[0], TEMPLATE_PROBE, BIG)
    return RunState(
        status="cancelled",
        report_id=BIG,
        knowledge_base_name=CORPUS[1],
        benchmark=MappingProxyType({"name": CORPUS[0], "version": TEMPLATE_PROBE, "split": BIG}),
        modes=modes,
        metrics=(CORPUS[3], BIG),
        total=9,
        done=3,
        errors=2,
        errors_by_type=MappingProxyType({CORPUS[0]: 1, BIG: 1}),
        last_errors=((CORPUS[0], TEMPLATE_PROBE, CORPUS[1], BIG),),
        per_mode=MappingProxyType(
            {m: ModeProgress(done=1, errors=1, sums={CORPUS[3]: 0.5}, counts={CORPUS[3]: 1}) for m in modes}
        ),
        build_steps=((CORPUS[0], "running"), (BIG, CORPUS[1])),
        build_status=CORPUS[2],
        warnings=(BIG, CORPUS[4]),
        error=BIG,
        report_key=CORPUS[8],
    )


class Audit(HTMLParser):
    """Collects every problem a hostile payload could cause in rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self.style = ""
        self.tags: set[str] = set()
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"unexpected tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler attribute {name}= on <{tag}>")
            if name in ("href", "src", "action", "formaction", "xlink:href", "srcdoc", "style"):
                if name == "href" and value and (value.startswith("#") or value.startswith(("http://", "https://"))):
                    continue
                self.problems.append(f"attribute {name}={value!r:.60} on <{tag}>")
        if tag not in ("br", "wbr", "rect"):
            self._stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if self._stack and self._stack[-1] == tag:
            self._stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in ("br", "wbr", "rect"):
            return
        if self._stack and self._stack[-1] == tag:
            self._stack.pop()
        else:
            self.problems.append(f"unbalanced </{tag}> (open: {self._stack[-3:]})")

    def handle_data(self, data: str) -> None:
        if self._stack and self._stack[-1] == "style":
            self.style += data
        else:
            self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"comment <!--{data[:40]}")

    def handle_decl(self, decl: str) -> None:
        self.problems.append(f"declaration <!{decl[:40]}")

    def handle_pi(self, data: str) -> None:
        self.problems.append(f"processing instruction <?{data[:40]}")


def audit(html: str, *, probes: bool = True) -> Audit:
    checker = Audit()
    checker.feed(html)
    checker.close()
    text = "".join(checker.text)
    problems = list(checker.problems)
    if checker._stack:
        problems.append(f"unclosed elements {checker._stack[-5:]}")
    if len(html.encode()) >= SIZE_BUDGET:
        problems.append(f"{len(html.encode()):,} bytes, over the budget")
    if "«49»" in html:
        problems.append("template syntax was evaluated")
    if "&amp;amp;" in html:  # the corpus has "&" and "&lt;", never "&amp;"
        problems.append("double escaping")
    for word in ("onerror", "onload", "onclick", "alert(", "display:none", "evil.org"):
        if word in checker.style:
            problems.append(f"{word!r} inside <style>")
    if probes:
        if TEMPLATE_PROBE not in text:
            problems.append("the template probe is not shown literally")
        if "<script>" not in text and "</script>" not in text:
            problems.append("the markup probes are not shown as text")
    assert not problems, problems[:10]
    return checker


@pytest.fixture(scope="module")
def report() -> EvaluationReport:
    return hostile_report()


def case_results(report: EvaluationReport) -> list[EvaluationCaseResult]:
    ok = [r for r in report.case_results if r.ok][:4]
    failed = [r for r in report.case_results if not r.ok][:2]
    return ok + failed


def reprable(report: EvaluationReport) -> list[Any]:
    items: list[Any] = [report, hostile_benchmark()]
    for case in case_results(report):
        items.append(case)
        items.extend(case.scores[:2])
        if case.response is not None:
            items.append(case.response)
    return items


BOOM = "<script>alert('boom')</script>"


def _boom(*args: Any, **kwargs: Any) -> str:
    raise RuntimeError(BOOM)


@pytest.mark.hostile
def test_the_corpus_reaches_every_kind_of_field(report: EvaluationReport) -> None:
    assert report.report_id == TEMPLATE_PROBE
    assert any(r.case_id == BIG for r in report.case_results) or report.case_results[0].query == BIG
    assert set(report.modes) & set(CORPUS) and set(report.metric_names) & set(CORPUS)
    assert any(k in HOSTILE_KEYS for r in report.case_results for k in r.metadata)
    assert report.benchmark.homepage == "javascript:alert(1)"


@pytest.mark.hostile
def test_report_view_is_inert(report: EvaluationReport) -> None:
    checker = audit(render_report_html(report))
    assert "a" in checker.tags and "svg" in checker.tags  # links to drill-downs, sparklines
    text = "".join(checker.text)
    assert ENTITY_PROBE in text  # "&lt;" shown as typed, escaped exactly once
    assert "javascript:alert(1)" in text and "(+" in text  # shown as text; long strings cut


@pytest.mark.hostile
def test_report_plain_text_stays_short(report: EvaluationReport) -> None:
    text = report_plain_text(report)
    assert len(text) < 3_000 and TEMPLATE_PROBE in text


@pytest.mark.hostile
def test_case_score_and_response_views_are_inert(report: EvaluationReport) -> None:
    for case in case_results(report):
        audit(render_case_html(case))
        for score in case.scores[:3]:
            audit(render_score_html(score), probes=False)
        if case.response is not None:
            audit(render_response_html(case.response), probes=False)


@pytest.mark.hostile
def test_benchmark_and_run_views_are_inert() -> None:
    audit(render_benchmark_html(hostile_benchmark()))
    audit(render_run_html(hostile_state()))


@pytest.mark.hostile
def test_every_rich_repr_is_inert_and_has_text(report: EvaluationReport) -> None:
    for obj in reprable(report):
        bundle = obj._repr_mimebundle_()
        assert set(bundle) == {"text/plain", "text/html"}, type(obj).__name__
        assert bundle["text/plain"] and len(bundle["text/plain"]) <= 3_000
        audit(bundle["text/html"], probes=False)
        assert obj._repr_html_() == bundle["text/html"]


@pytest.mark.hostile
@pytest.mark.parametrize("include, exclude", [(["text/plain"], None), (None, ["text/html"]), ({"text/plain"}, set())])
def test_repr_honours_include_and_exclude(report: EvaluationReport, include: Any, exclude: Any) -> None:
    for obj in reprable(report):
        assert set(obj._repr_mimebundle_(include=include, exclude=exclude)) == {"text/plain"}


@pytest.mark.hostile
@pytest.mark.parametrize(
    "target, pick",
    [
        ("build_report_context", lambda r: r),
        ("render_case_html", lambda r: r.case_results[0]),
        ("render_score_html", lambda r: next(c for c in r.case_results if c.scores).scores[0]),
        ("render_response_html", lambda r: next(c for c in r.case_results if c.response).response),
        ("render_benchmark_html", lambda r: hostile_benchmark()),
    ],
)
def test_a_failing_view_gives_text_and_an_escaped_note(
    monkeypatch: pytest.MonkeyPatch, report: EvaluationReport, target: str, pick: Callable[[Any], Any]
) -> None:
    obj = pick(report)
    monkeypatch.setattr(heta_nb.render, target, _boom)
    bundle = obj._repr_mimebundle_()
    assert bundle["text/plain"]
    note = bundle["text/html"]
    assert "RuntimeError" in note and "&lt;script&gt;" in note and "<script>" not in note
    assert 'data-testid="heta-render-error"' in note
    audit(note, probes=False)


@pytest.mark.hostile
def test_a_broken_renderer_import_still_gives_text(monkeypatch: pytest.MonkeyPatch, report: EvaluationReport) -> None:
    monkeypatch.setattr(heta_nb.render, "repr_mimebundle", _boom)
    for obj in reprable(report)[:3]:
        assert set(obj._repr_mimebundle_()) == {"text/plain"}
        assert obj._repr_html_() is None


@pytest.mark.hostile
def test_widget_parts_are_inert() -> None:
    from heta_nb.render import render_widget_parts

    for name, html in render_widget_parts(hostile_state()).items():
        audit(html, probes=False)
        assert "<script" not in html, name


@pytest.mark.hostile
def test_comparison_view_is_inert(report: EvaluationReport) -> None:
    import warnings

    from heta_nb.comparison import compare
    from heta_nb.render import render_comparison_html

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = compare(report, modes=list(report.modes)[:2])
    checker = audit(render_comparison_html(comparison), probes=False)
    assert "table" in checker.tags
    assert audit(comparison._repr_mimebundle_()["text/html"], probes=False)
