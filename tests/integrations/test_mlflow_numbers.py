"""The numbers MLflow gets are the report's MetricSummary, as every other view shows them:
the headline (mean of the scored) under ``metric/mode``, Heta's mean only as ``/heta_mean``,
no number for a pair without one (n/a, errored, skipped) but a tag saying why."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

import heta_nb
from heta_nb.integrations import mlflow as hm
from heta_nb.integrations.names import status_key, tracker_key
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import RECORD_KEYS

pytestmark = pytest.mark.slow
NUMBERS = ("", "/n", "/ci_low", "/ci_high", "/heta_mean")
"""Suffixes of the keys that carry a value (none of them may exist for a pair without one)."""
COUNTS = ("errors", "skipped", "evaluator_errors")


@pytest.fixture(scope="module")
def logged(tracking: Any, mixed_report: EvaluationReport):
    """The mixed report logged once into a new run: ``(run, report)``."""
    run_id = hm.log_report(mixed_report)
    return tracking.client.get_run(run_id), mixed_report


def test_every_status_is_in_the_report(mixed_report: EvaluationReport) -> None:
    statuses = {s.status for s in mixed_report.metric_summaries()}
    assert {"scored", "n/a", "errored", "skipped"} <= statuses
    flaky = next(s for s in mixed_report.metric_summaries() if s.metric == "flaky")
    assert flaky.scored and flaky.evaluator_errors > 0  # a number with evaluator errors beside it
    # the headline and Heta's mean differ somewhere (skipped scores): logging one for the other shows
    assert any(s.scored and s.shown != s.heta_mean for s in mixed_report.metric_summaries())


def test_scored_pairs_log_the_headline_its_n_ci_and_heta_mean(logged) -> None:
    run, report = logged
    metrics = run.data.metrics
    scored = [s for s in report.metric_summaries() if s.status == "scored"]
    assert scored
    for s in scored:
        base = tracker_key(s.metric, s.mode)
        assert metrics[base] == s.shown, s.key
        assert metrics[f"{base}/n"] == s.shown_n, s.key
        low, high = s.shown_ci
        for name, bound in (("ci_low", low), ("ci_high", high)):
            if math.isfinite(bound):
                assert metrics[f"{base}/{name}"] == bound, s.key
            else:
                assert f"{base}/{name}" not in metrics, s.key
        assert metrics[f"{base}/heta_mean"] == report.score_summary[s.key], s.key  # Heta's own number
        for count in COUNTS:  # always there, 0 included, so an evaluator error count is never hidden
            assert metrics[f"{base}/{count}"] == getattr(s, count), (s.key, count)
        assert status_key(base) not in run.data.tags
    assert not [key for key in metrics if key.endswith("/mean_scored")]


def test_pairs_without_a_number_log_a_tag_saying_why(logged) -> None:
    run, report = logged
    metrics, tags = run.data.metrics, run.data.tags
    others = [s for s in report.metric_summaries() if s.status != "scored"]
    assert {s.status for s in others} == {"n/a", "errored", "skipped"}
    for s in others:
        base = tracker_key(s.metric, s.mode)
        assert not [f"{base}{suffix}" for suffix in NUMBERS if f"{base}{suffix}" in metrics], s.key
        assert tags[status_key(base)] == f"{s.status}: {s.reason}"
        if s.status == "n/a":
            assert not [key for key in metrics if key.startswith(f"{base}/")], s.key
        else:
            assert {count: metrics[f"{base}/{count}"] for count in COUNTS} == {c: getattr(s, c) for c in COUNTS}
    assert tags["heta_nb.status/answer_contains/full_text_search"] == "n/a: full_text_search returns no answers"
    assert tags["heta_nb.status/judge/full_text_search"] == "errored: every score is an evaluator error (10)"
    assert metrics["judge/full_text_search/evaluator_errors"] == 10
    assert tags["heta_nb.status/unjudged/full_text_search"].startswith("skipped: every score was skipped")


def test_metric_names_and_the_summary_table_record_every_pair(logged, tracking: Any, tmp_path: Path) -> None:
    run, report = logged
    run_id = run.info.run_id
    names = json.loads(tracking.text(run_id, "heta_nb/metric_names.json", tmp_path))
    for s in report.metric_summaries():
        base = tracker_key(s.metric, s.mode)
        assert names[base] == s.metric
        if not s.scored:
            assert names[status_key(base)] == s.metric
    table = tracking.mlflow.load_table("heta_nb/summary.json", run_ids=[run_id])
    assert list(table.columns[: len(RECORD_KEYS)]) == list(RECORD_KEYS)
    records = [s.record() for s in report.metric_summaries()]
    assert list(table["status"]) == [r["status"] for r in records]
    assert list(table["reason"].fillna("")) == [r["reason"] for r in records]
    for row, record in zip(table.to_dict("records"), records):
        for name in ("mean", "n", "heta_mean", "evaluator_errors"):
            both_missing = all(v is None or (isinstance(v, float) and math.isnan(v)) for v in (row[name], record[name]))
            assert both_missing or row[name] == pytest.approx(record[name]), (record["metric"], name)


_HEADLINE = re.compile(r'<ul[^>]*data-testid="heta-headline"[^>]*>(.*?)</ul>', re.S)
_ITEM = re.compile(r"<li>\s*<strong>([^<]+)</strong>\s*:(.*?)</li>", re.S)
_VALUE = re.compile(r"(?:^|,)\s*([^\s<,][^\s<]*)\s*(?:<[^>]+>\s*)*(-?\d+\.\d+)")


def _headline_numbers(page: str) -> dict[tuple[str, str], str]:
    """``{(mode, metric): "0.778"}`` as the page's headline shows them (the ★ and CIs left out)."""
    found = _HEADLINE.search(page)
    assert found, "the page has no headline (data-testid=heta-headline)"
    numbers = {}
    for mode, body in _ITEM.findall(found.group(1)):
        for metric, value in _VALUE.findall(body):
            numbers[(html.unescape(mode).strip(), html.unescape(metric))] = value
    return numbers


def test_the_logged_page_headlines_the_logged_numbers(logged, tracking: Any, tmp_path: Path) -> None:
    run, report = logged
    page = tracking.text(run.info.run_id, "heta_nb/report.html", tmp_path)
    shown = _headline_numbers(page)
    assert ("full_text_search", "evidence_recall@3") in shown  # the page and this parser still agree
    for (mode, metric), text in shown.items():
        value = run.data.metrics[tracker_key(metric, mode)]
        assert text == f"{value:.3f}", (mode, metric)
    # one the parser must catch: Heta's mean (0.700) headlined instead of 0.778 (7 of 9 scored)
    assert shown[("full_text_search", "evidence_recall@3")] == "0.778"
    # the same page as heta_nb.to_html writes it: the artifact is the report's own page
    assert _headline_numbers(heta_nb.to_html(report)) == shown
