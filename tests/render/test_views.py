"""Case, score, response, benchmark and run views."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from helpers import FIXTURES

import heta_nb
from heta_nb.model.report import EvaluationReport
from heta_nb.render import (
    render_benchmark_html,
    render_case_html,
    render_response_html,
    render_run_html,
    render_score_html,
)
from heta_nb.render.context import case_context
from heta_nb.runner.events import CaseFinished, RunFinished, RunStarted, RunWarning
from heta_nb.runner.state import replay

ROOT = Path(__file__).resolve().parents[2]


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


def run_state(status: str = "cancelled"):
    events = [
        RunStarted(
            report_id="r1",
            knowledge_base_name="kb",
            benchmark={"name": "b", "version": "1", "split": "test", "task_type": "qa"},
            modes=("m1", "m2"),
            evaluators=("hit",),
            total=10,
            resumed=0,
            units=1,
            concurrency=2,
            started_at="2026-01-01T00:00:00+00:00",
        ),
        CaseFinished(
            unit_id="u", case_id="c1", mode="m1", ok=True, latency_ms=3.0, attempts=1, scores={"hit": 1.0}, t=1
        ),
        CaseFinished(
            unit_id="u", case_id="c1", mode="m2", ok=True, latency_ms=3.0, attempts=1, scores={"hit": 0.0}, t=2
        ),
        CaseFinished(
            unit_id="u",
            case_id="c2",
            mode="m1",
            ok=False,
            latency_ms=1.0,
            attempts=1,
            scores={},
            error_type="TimeoutError",
            error_message="slow",
            t=3,
        ),
        RunWarning(code="w", message="watch out"),
        RunFinished(status=status, done=3, total=10, errors=1, seconds=3.0, t=3),  # type: ignore[arg-type]
    ]
    return replay(events)


# -- the other views -------------------------------------------------------------------


def test_case_score_and_response_views() -> None:
    report = load("errors")
    ok = report.case("c01", "full_text_search")
    page = Page(render_case_html(ok))
    assert "heta-case" in page.testids() and "Who designed the Harrow Point Lighthouse?" in page.text
    assert "evidence_recall@3" in page.text and "harrow_point.txt" in page.text
    failed = report.case("c01", "vector_search")
    page = Page(render_case_html(failed))
    assert "✗ LookupError" in page.text and "chunk_vector_index" in page.text
    page = Page(render_score_html(ok.scores[0]))
    assert "heta-score" in page.testids() and "evidence_recall@3" in page.text and "1.000" in page.text
    page = Page(render_response_html(ok.response))
    assert "heta-response" in page.testids() and "Query response" in page.text
    assert len([tag for tag, _ in page.elements if tag == "tr"]) >= 4
    assert case_context(ok)["headline"] == {"name": "evidence_recall@3", "value": "1.000"}


def test_benchmark_view() -> None:
    from heta_nb.demo import load_benchmark

    benchmark = load_benchmark()
    page = Page(render_benchmark_html(benchmark))
    assert {"heta-benchmark", "heta-benchmark-counts", "heta-benchmark-cases"} <= page.testids()
    assert f"showing 20 of {len(benchmark.cases)} cases" in page.text
    assert len(page.with_class("heta-id")) == 20
    if any(case.labels for case in benchmark.cases):
        assert "heta-benchmark-labels" in page.testids()


def test_run_view_is_a_static_progress_snapshot() -> None:
    page = Page(render_run_html(run_state()))
    assert {"heta-run", "heta-run-progress", "heta-run-means"} <= page.testids()
    progress = [a for tag, a in page.elements if tag == "progress"]
    assert progress == [{"class": "heta-progress", "max": "10", "value": "3"}]
    text = page.text
    assert "3 / 10" in text and "(30.0%)" in text and "Run cancelled" in text
    assert "TimeoutError" in text and "slow" in text and "watch out" in text
    assert "1.000" in text and "0.000" in text  # running means per mode
    # titled by what runs (the KB on the benchmark), not by the report's generated id
    title = re.search(r'<h3 class="heta-title">(.*?)</h3>', render_run_html(run_state()), re.S)
    assert title is not None and re.sub(r"<[^>]+>", "", title[1]) == "Evaluation of kb on b 1 test"
    assert "report r1" in text
    running = Page(render_run_html(replay([], run_state("complete").__class__())))
    assert "pending" in running.text
