"""Headline first: a report opens with one line per mode, a comparison with its verdict
("poor vs good: 0 better, 2 worse (...), 1 no detectable difference, 2 n/a"), coloured, in
the words of its significance test; its plots show the metrics that differ."""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.cli import main
from heta_nb.comparison.headline import verdict_line
from heta_nb.comparison.significance import verdict_text
from heta_nb.render import build_report_context, render_report_html, report_plain_text
from heta_nb.render.context import comparison_context
from heta_nb.stats.paired import PairedTest


@pytest.fixture(scope="module")
def report() -> Any:
    """Mode 'good' finds the right document first and answers; 'poor' finds it third, no answer."""
    return heta_nb.evaluate(
        toy_benchmark(24), kb=exact_kb, query_modes=["good", "poor"], store=None, progress=False, report_id="toy"
    )


@pytest.fixture(scope="module")
def comparison(report: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.compare(report, resamples=2000)


def test_comparison_opens_with_its_verdict(comparison: Any) -> None:
    lines = comparison.headline()
    assert lines == [
        "poor vs good: 0 better, 1 worse (ndcg@3, -0.500 [-0.500, -0.500]), "
        "1 no detectable difference, 1 n/a (answer_contains)"
    ]
    assert repr(comparison).splitlines()[0] == lines[0]
    # the words agree with each row's test: "worse" rows are significant, n/a rows untested
    for row in comparison.summary_rows():
        if row["metric"] == "ndcg@3":
            assert row["significant"] and row["verdict"].startswith("worse")
        if row["metric"] == "answer_contains":
            assert row["verdict"] == "n/a: poor returns no answers" and math.isnan(row["p_adjusted"])


def test_the_html_verdict_is_first_and_coloured(comparison: Any) -> None:
    context = comparison_context(comparison)
    assert context["headline"][0]["tone"] == "worse"
    html = comparison._repr_html_()
    verdict = html.index('data-testid="heta-comparison-verdict"')
    assert verdict < html.index("heta-comparison-systems")  # before the tables
    assert re.search(r'<li class="heta-v-worse"><strong>poor vs good: 0 better, 1 worse', html)
    assert ".heta-v-worse{color:var(--h-bad)}" in html


def test_the_cli_prints_the_verdict_first(report: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "toy.json"
    path.write_text(report.to_json(), encoding="utf-8")
    assert main(["compare", str(path)]) == 0
    assert capsys.readouterr().out.startswith("poor vs good: 0 better, 1 worse (ndcg@3, -0.500")


def test_plots_show_the_metrics_that_differ(comparison: Any) -> None:
    assert comparison.differing_metrics()[0] == "ndcg@3"  # not the first metric, evidence_recall@3
    assert comparison.differing_metrics()[-1] == "answer_contains"  # n/a last
    blocks = comparison_context(comparison)["extremes"]
    assert blocks[0]["metric"] == "ndcg@3"


def test_no_detectable_difference_never_sits_beside_a_ci_that_excludes_zero() -> None:
    test = PairedTest(
        n=40, mean_a=0.5, mean_b=0.56, mean_diff=0.06, ci_low=0.004, ci_high=0.12, confidence=0.95,
        p_value=0.03, p_value_adjusted=0.09, wins=10, ties=25, losses=5, resamples=2000, seed=0, method="m",
    )  # fmt: skip
    words = verdict_text(test, 0.05)
    assert words.startswith("inconclusive") and "no detectable difference" not in words
    row = {"system": "b", "metric": "m", "verdict": words, "mean_diff": 0.06, "ci_low": 0.004, "ci_high": 0.12}
    assert "1 inconclusive (m: CI excludes 0, not significant)" in verdict_line("b", "a", [row])["text"]
    inside = PairedTest(**{**test.__dict__, "ci_low": -0.01})
    assert verdict_text(inside, 0.05).startswith("no detectable difference")


def test_a_report_opens_with_one_line_per_mode(report: Any) -> None:
    context = build_report_context(report)
    lines = context["summary"]["headline"]
    assert [line["mode"] for line in lines] == ["good", "poor"]
    good, poor = lines
    assert good["parts"][0]["best"] and good["parts"][0]["ci"].startswith(" [")  # its best metrics first
    assert poor["na"] == ["answer_contains"] and poor["errors"] == "0 errors"
    html = render_report_html(report)
    assert html.index('data-testid="heta-headline"') < html.index('data-testid="heta-summary"')
    text = report_plain_text(report).splitlines()
    assert text[2].startswith("good: ") and text[3].startswith("poor: ") and "n/a: answer_contains" in text[3]


def test_the_cli_verdict_is_coloured_in_a_terminal(
    report: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    path = tmp_path / "toy.json"
    path.write_text(report.to_json(), encoding="utf-8")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["compare", str(path)]) == 0
    first, second = capsys.readouterr().out.splitlines()[:2]
    assert first.startswith("\033[31mpoor vs good: 0 better, 1 worse") and first.endswith("\033[0m")
    assert "\033[" not in second  # only the verdict
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["compare", str(path)]) == 0
    assert "\033[" not in capsys.readouterr().out
