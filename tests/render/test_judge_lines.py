"""The report's header and text repr show one line per LLM judge (model, calls, tokens, cost)
and their total, every number from ``judge_totals``; a report without judges shows none."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from explorer.judge_cases import case, errored, faithfulness, judge_report, usage

import heta_nb
from heta_nb.benchmark import Benchmark
from heta_nb.llm_judges import standin_model
from heta_nb.llm_judges.totals import judge_totals, overall
from heta_nb.render.context.report import build_report_context
from heta_nb.testing import synthetic_report


def _benchmark(n: int = 3) -> Benchmark:
    rows = [
        {"case_id": f"c{i}", "query": f"What is the capital of country {i}?", "answers": [f"The capital is City{i}."]}
        for i in range(n)
    ]
    return Benchmark.from_frame(
        pd.DataFrame(rows), manifest={"name": "capitals", "version": "1", "split": "test", "task_type": "qa"}
    )


def _kb(query: str) -> dict[str, Any]:
    i = query.split()[-1].rstrip("?")
    return {
        "answer": f"The capital of country {i} is City{i}. It has a large harbour.",
        "results": [
            {"id": "cats", "text": "Cats sleep."},
            {"id": f"doc-{i}", "text": f"City{i} is the capital of country {i}."},
        ],
    }


@pytest.fixture(scope="module")
def judged() -> heta_nb.EvaluationReport:
    return heta_nb.evaluate(
        _benchmark(),
        kb=_kb,
        evaluators=["faithfulness", "context_precision", "answer_relevance"],
        judge_model=standin_model(),
        judge_cache=None,
        store=None,
        progress=False,
    )


class _Rows(HTMLParser):
    """The cells of the header's judge table, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.inside = False
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if ("data-testid", "heta-judges") in attrs:
            self.inside, self.depth = True, 0
        if self.inside:
            self.depth += tag == "div"
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th") and self.rows:
                self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if self.inside and tag == "div":
            self.depth -= 1
            self.inside = self.depth > 0

    def handle_data(self, data: str) -> None:
        if self.inside and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def _judge_rows(html: str) -> list[list[str]]:
    parser = _Rows()
    parser.feed(html)
    return parser.rows[1:]  # (the head)


def _expected_row(total: Any) -> list[str]:
    calls = f"{total.calls:,} call{'s' if total.calls != 1 else ''}" + (
        f" ({total.cached_calls:,} cached)" if total.cached_calls else ""
    )
    return [
        total.name,
        total.model or "—",
        calls,
        f"{total.tokens_in:,} in / {total.tokens_out:,} out",
        total.cost_text,
    ]


def test_the_header_has_a_line_per_judge_and_their_total(judged: heta_nb.EvaluationReport) -> None:
    totals = judge_totals(judged)
    assert list(totals) == ["faithfulness", "context_precision", "answer_relevance"]
    rows = _judge_rows(judged._repr_html_())
    expected = [_expected_row(t) for t in totals.values()]
    whole = overall(totals)
    expected.append(["all judges", *_expected_row(whole)[1:]])
    assert [row[:5] for row in rows] == expected
    assert all(t.calls == 3 and t.tokens_in > 0 for t in totals.values())


def test_the_text_repr_has_the_same_lines(judged: heta_nb.EvaluationReport) -> None:
    text = judged._repr_mimebundle_()["text/plain"]
    totals = judge_totals(judged)
    for name, total in totals.items():
        line = next(line for line in text.splitlines() if line.startswith(f"judge {name} · "))
        assert f" · {total.model} · " in line
        assert f"{total.tokens_in:,} in / {total.tokens_out:,} out tokens" in line
        assert line.endswith(f" · {total.cost_text}")
    whole = overall(totals)
    assert f"all judges · {whole.calls:,} calls · {whole.tokens_in:,} in / {whole.tokens_out:,} out tokens" in text


def test_unknown_and_cached_costs_read_as_judge_totals_says(tmp_path: Path) -> None:
    report = judge_report(
        [
            case("c1", [faithfulness(**usage(calls=2, cached=2, cost=0.0))]),
            case("c2", [faithfulness(**usage(cost=None, cost_unknown="no price")), errored()]),
            case("c3", [faithfulness(**usage(cost=0.25))]),
        ]
    )
    header = build_report_context(report)["header"]["judges"]
    by_name = {row["name"]: row for row in header["rows"]}
    assert (
        by_name["faithfulness"]["cost"]
        == "$0.2500 + unknown (1 scores)"
        == judge_totals(report)["faithfulness"].cost_text
    )
    assert by_name["faithfulness"]["calls"] == "4 calls (2 cached)"
    assert (
        by_name["answer_relevance"]["cost"] == "unknown"
        and by_name["answer_relevance"]["scores"] == "1 score · 1 error"
    )
    assert header["total"]["cost"] == overall(judge_totals(report)).cost_text
    # read back from a file (its results parsed lazily, one at a time): the same lines
    path = tmp_path / "report.json"
    path.write_text(report.to_json(), encoding="utf-8")
    assert build_report_context(heta_nb.load_report(path))["header"]["judges"] == header


def test_a_report_without_judges_has_no_judge_lines() -> None:
    report = synthetic_report(20, seed=1)
    assert build_report_context(report)["header"]["judges"] is None
    html = report._repr_html_()
    assert "heta-judges" not in re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    assert "judge " not in report._repr_mimebundle_()["text/plain"]


@pytest.mark.hostile
def test_judge_names_and_models_are_escaped() -> None:
    hostile = "<img src=x onerror=alert(1)>"
    score = faithfulness()
    score["name"] = hostile
    score["metadata"]["judge"]["model"] = hostile
    html = judge_report([case("c1", [score])])._repr_html_()
    assert hostile not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
