"""A check's JUnit XML as its consumers read it: valid against Jenkins' ``junit-10.xsd`` (what the
xUnit plugin validates with) and read back by ``junitparser``, on checks with a known truth: a
regression, an unverified drop, an n/a metric, evaluator errors, pairs that are not comparable
and cases that started erroring. The schema is fetched by ``tests/fetch-junit-xsd.sh`` (from
pytest's sdist; ``make test`` runs it), never at test time."""

from __future__ import annotations

import copy
import functools
import re
import sys
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gate_pairs as gp
import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite
from lxml import etree
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.cli import main

XSD = Path(sys.prefix) / "share/heta-nb-test/junit-10.xsd"
KINDS = {Failure: "failure", Error: "error", Skipped: "skipped"}


@functools.cache
def _cached_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(XSD)))


def _schema() -> etree.XMLSchema:
    if not XSD.is_file():  # a failure, not a skip: `make test` always fetches it
        pytest.fail(f"{XSD} is missing: run `bash tests/fetch-junit-xsd.sh` (VENV={sys.prefix})", pytrace=False)
    return _cached_schema()


def _assert_valid(text: str | bytes) -> None:
    """The document is valid against junit-10.xsd (every schema error listed otherwise)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    schema = _schema()
    document = etree.fromstring(data)
    if not schema.validate(document):
        errors = "\n".join(f"line {e.line}: {e.message}" for e in schema.error_log)
        pytest.fail(f"JUnit XML not valid against {XSD.name}:\n{errors}", pytrace=False)


# -- checks with a known truth ----------------------------------------------------------------
def _error_score(name: str) -> dict[str, Any]:
    """An evaluator that raised, as the runner writes it (heta_nb.runner.case.error_score)."""
    return {
        "name": name,
        "value": "error",
        "passed": None,
        "metadata": {"error": {"type": "ZeroDivisionError", "message": "division by zero"}},
    }


def _set_scores(raw: dict[str, Any], mode: str, metric: str, values: list[float]) -> None:
    found = [
        score
        for result in raw["case_results"]
        if result["query_mode"] == mode
        for score in result["scores"]
        if score["name"] == metric
    ]
    assert len(found) == len(values)
    for score, value in zip(found, values):
        score["value"] = value


@pytest.fixture(scope="module")
def pairs() -> dict[str, tuple[Any, Any]]:
    """(new, baseline) reports by name."""
    base = gp.base_dict()
    out: dict[str, tuple[Any, Any]] = {"regression": (gp.as_report(gp.degraded(base)), gp.as_report(base))}

    # 9 cases; 6 fall from 1.0 to 0.0 (7 would be significant over a family of 3: p = 3 * 2 / 2**7 = 0.047)
    few = gp.base_dict(9, report_id="before collapse")
    _set_scores(few, "full_text_search", "beir_ndcg@5", [1.0] * 9)
    collapsed = copy.deepcopy(few)
    collapsed["report_id"] = "collapsed"
    _set_scores(collapsed, "full_text_search", "beir_ndcg@5", [0.0] * 6 + [1.0] * 3)
    out["unverified drop"] = (gp.as_report(collapsed), gp.as_report(few))

    def run() -> Any:
        return heta_nb.evaluate(
            toy_benchmark(20), kb=exact_kb, query_modes=["good", "poor"], store=None, progress=False, report_id="r"
        )

    out["n/a"] = (run(), run())

    small = gp.base_dict(30)
    failing = copy.deepcopy(small)
    failing["report_id"] = "judge broke"
    results = [r for r in failing["case_results"] if r["query_mode"] == "extractive_answer"]
    for index, result in enumerate(results):
        if index % 10 != 1:  # 27 of 30: mostly evaluator errors
            result["scores"] = [
                _error_score(s["name"]) if s["name"] == "evidence_recall@5" else s for s in result["scores"]
            ]
    out["evaluator errors"] = (gp.as_report(failing), gp.as_report(small))
    out["not comparable"] = (gp.as_report(gp.base_dict(25, report_id="fewer")), gp.as_report(small))

    erroring = copy.deepcopy(small)
    erroring["report_id"] = "new errors"
    for result in [r for r in erroring["case_results"] if r["query_mode"] == "extractive_answer"][:3]:
        result.update(
            scores=[],
            response=None,
            error={"message": "boom", "error_type": "RuntimeError", "retryable": False, "metadata": {}},
        )
    out["new errors"] = (gp.as_report(erroring), gp.as_report(small))
    out["small"] = (gp.as_report(small), gp.as_report(small))
    return out


def _truth_regression(result: heta_nb.CheckResult) -> None:
    assert [r.verdict for r in result.rows] == ["regression"] * 6


def _truth_unverified(result: heta_nb.CheckResult) -> None:
    verdicts = {(r.mode, r.metric): r.verdict for r in result.rows}
    assert verdicts.pop(("full_text_search", "beir_ndcg@5")) == "unverified drop"
    assert set(verdicts.values()) == {"no detectable change"}
    row = result.unverified[0]
    assert row.diff == pytest.approx(-6 / 9) and row.losses == 6 and row.n == 9
    assert "6 of 9 cases changed (6 fell); too few cases to test" in row.reason


def _truth_not_applicable(result: heta_nb.CheckResult) -> None:
    row = next(r for r in result.rows if r.verdict == "n/a")
    assert (row.mode, row.metric, row.reason) == ("poor", "answer_contains", "poor returns no answers (not tested)")
    assert [r.verdict for r in result.rows].count("n/a") == 1


def _truth_evaluator_errors(result: heta_nb.CheckResult) -> None:
    row = next(r for r in result.rows if r.verdict == "evaluator errors")
    assert (row.mode, row.metric) == ("extractive_answer", "evidence_recall@5")
    assert row.reason.startswith("27 of 30 scores in the new report are evaluator errors")
    assert [r.verdict for r in result.rows].count("evaluator errors") == 1


def _truth_not_comparable(result: heta_nb.CheckResult) -> None:
    assert [r.verdict for r in result.rows] == ["not comparable"] * 6
    assert any("the case sets differ (baseline 30, new 25; 25 in both)" in r for r in result.reasons)


def _truth_no_common_mode(result: heta_nb.CheckResult) -> None:
    assert not result.rows and any("has no mode 'nope'" in r for r in result.reasons)


def _truth_new_errors(result: heta_nb.CheckResult) -> None:
    assert [e.failed for e in result.errors] == [False, True] and result.errors[1].introduced == 3


# name: (pair, check options, the truth, (tests, failures, errors, skipped))
SCENARIOS: dict[str, tuple[str, dict[str, Any], Callable[[heta_nb.CheckResult], None], tuple[int, int, int, int]]] = {
    "regression": ("regression", {}, _truth_regression, (6, 6, 0, 0)),
    "unverified drop": ("unverified drop", {}, _truth_unverified, (6, 1, 0, 0)),
    "unverified drop allowed": ("unverified drop", {"allow_unverified": True}, _truth_unverified, (6, 0, 0, 0)),
    "n/a": ("n/a", {}, _truth_not_applicable, (6, 0, 0, 1)),
    "evaluator errors": ("evaluator errors", {}, _truth_evaluator_errors, (6, 0, 1, 0)),
    "not comparable": ("not comparable", {}, _truth_not_comparable, (6, 0, 6, 0)),
    "no common mode": ("small", {"modes": ["nope"]}, _truth_no_common_mode, (1, 0, 1, 0)),
    "new errors": ("new errors", {"max_new_errors": 0}, _truth_new_errors, (8, 1, 0, 0)),
}


# -- what a consumer must read ----------------------------------------------------------------
def _expected(result: heta_nb.CheckResult) -> dict[tuple[str, str], tuple[list[tuple[str, str, str]], str]]:
    """Per test case (classname, name): its results [(kind, type, message)] and how its system-out starts."""
    allowed = bool(result.settings.get("allow_unverified"))
    out: dict[tuple[str, str], tuple[list[tuple[str, str, str]], str]] = {}
    if result.reasons and not result.rows:
        out[("heta_nb.check", "comparable")] = ([("error", "not comparable", "; ".join(result.reasons))], "")
    for row in result.rows:
        if row.verdict == "regression" or (row.verdict == "unverified drop" and not allowed):
            results = [("failure", row.verdict, row.reason)]
        elif row.verdict in ("not comparable", "evaluator errors"):
            results = [("error", row.verdict, row.reason)]
        elif row.verdict == "n/a":
            results = [("skipped", "n/a", row.reason)]
        else:
            results = []
        out[(f"heta_nb.check.{row.mode}", row.metric)] = (results, f"{row.verdict}: {row.reason}\n")
    for e in result.errors:
        if e.allowed is None:
            continue
        summary = (
            f"{e.introduced:,} case(s) started erroring (at most {e.allowed} allowed); "
            f"errors {e.baseline_errors:,} -> {e.new_errors:,}, {e.fixed:,} fixed"
        )
        results = [("failure", "regression", summary)] if e.failed else []
        out[(f"heta_nb.check.{e.mode}", "errors")] = (results, summary)
    return out


def _read(
    result: heta_nb.CheckResult, text: str | bytes, counts: tuple[int, int, int, int], *, duration: bool = True
) -> TestSuite:
    """Validate ``text`` against the schema, read it with junitparser and compare it with ``result``'s rows."""
    _assert_valid(text)
    xml = JUnitXml.fromstring(text.encode("utf-8") if isinstance(text, str) else text)
    assert isinstance(xml, JUnitXml)
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    cases = list(suite)
    found = {(c.classname, c.name): c for c in cases}
    assert len(found) == len(cases)  # one test case per mode × metric, none twice
    expected = _expected(result)
    assert list(found) == list(expected)
    for key, (results, out) in expected.items():
        case = found[key]
        assert [(KINDS[type(r)], r.type, r.message) for r in case.result] == results, key
        assert (case.system_out or "").startswith(out), key
        assert case.time is not None and case.time >= 0
    tests, failures, errors, skipped = counts
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == counts
    assert (xml.tests, xml.failures, xml.errors) == (tests, failures, errors)
    kinds = Counter(kind for results, _ in expected.values() for kind, _, _ in results)
    assert (len(expected), kinds["failure"], kinds["error"], kinds["skipped"]) == counts
    recounted = copy.deepcopy(suite)
    recounted.update_statistics()  # junitparser's own count of the test cases agrees with the attributes
    assert (recounted.tests, recounted.failures, recounted.errors, recounted.skipped) == counts

    stamp = datetime.fromisoformat(suite.timestamp)
    assert stamp.tzinfo is None and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?", suite.timestamp)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    assert abs((now - stamp).total_seconds()) < 60
    assert isinstance(suite.time, float) and suite.time >= 0 and xml.time == suite.time
    assert re.fullmatch(r"\d+\.\d{3}", suite._elem.get("time"))
    if duration:
        assert suite.time == float(f"{result.duration_s:.3f}")
    return suite


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_each_verdict_is_valid_junit_and_reads_back_as_its_rows(pairs, scenario: str) -> None:
    pair, options, truth, counts = SCENARIOS[scenario]
    result = heta_nb.check(*pairs[pair], **options)
    truth(result)
    _read(result, result.to_junit(), counts)
    assert result.to_junit() == result.format("junit")


def test_allow_unverified_passes_the_drop_but_says_so(pairs) -> None:
    pair = pairs["unverified drop"]
    failing, allowed = heta_nb.check(*pair), heta_nb.check(*pair, allow_unverified=True)
    strict_suite = _read(failing, failing.to_junit(), SCENARIOS["unverified drop"][3])
    allowed_suite = _read(allowed, allowed.to_junit(), SCENARIOS["unverified drop allowed"][3])
    assert allowed_suite.failures == strict_suite.failures - 1
    key = ("heta_nb.check.full_text_search", "beir_ndcg@5")
    strict_case = next(c for c in strict_suite if (c.classname, c.name) == key)
    allowed_case = next(c for c in allowed_suite if (c.classname, c.name) == key)
    assert [(type(r), r.type) for r in strict_case.result] == [(Failure, "unverified drop")]
    assert allowed_case.result == []  # passed
    assert allowed_case.system_out.startswith("unverified drop: dropped by 0.667")
    assert not failing.ok and allowed.ok


def test_an_n_a_row_is_skipped_with_its_reason(pairs) -> None:
    result = heta_nb.check(*pairs["n/a"])
    suite = _read(result, result.to_junit(), SCENARIOS["n/a"][3])
    skipped = [c for c in suite if any(isinstance(r, Skipped) for r in c.result)]
    assert [(c.classname, c.name) for c in skipped] == [("heta_nb.check.poor", "answer_contains")]
    (entry,) = skipped[0].result
    assert isinstance(entry, Skipped) and entry.message.startswith("poor returns no answers")
    assert all(c.result == [] for c in suite if c not in skipped)


def test_the_cli_writes_a_valid_junit_file(pairs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new, old = tmp_path / "collapsed.json", tmp_path / "baseline.json"
    collapsed, baseline = pairs["unverified drop"]
    new.write_text(collapsed.to_json())
    old.write_text(baseline.to_json())
    out = tmp_path / "check.xml"
    assert main(["check", str(new), "--baseline", str(old), "-o", str(out)]) == 1
    expected = heta_nb.check(heta_nb.load_report(new), heta_nb.load_report(old))
    _read(expected, out.read_bytes(), SCENARIOS["unverified drop"][3], duration=False)

    allowed = tmp_path / "allowed.xml"
    assert main(["check", str(new), "--baseline", str(old), "--allow-unverified", "-o", str(allowed)]) == 0
    expected = heta_nb.check(heta_nb.load_report(new), heta_nb.load_report(old), allow_unverified=True)
    _read(expected, allowed.read_bytes(), SCENARIOS["unverified drop allowed"][3], duration=False)

    capsys.readouterr()
    assert main(["check", str(new), "--baseline", str(old), "--format", "junit"]) == 1
    expected = heta_nb.check(heta_nb.load_report(new), heta_nb.load_report(old))
    _read(expected, capsys.readouterr().out, SCENARIOS["unverified drop"][3], duration=False)


def test_the_schema_rejects_what_jenkins_would(pairs) -> None:
    """The validation can fail: the same document broken in ways junit-10.xsd forbids."""
    text = heta_nb.check(*pairs["regression"]).to_junit()
    _assert_valid(text)
    schema = _schema()
    for broken in (
        re.sub(r'<testcase classname="([^"]*)" name="[^"]*"', r'<testcase classname="\1"', text, count=1),
        re.sub(r'(<testsuite [^>]*?)time="[^"]*"', r'\1time="-1.5"', text, count=1),
        text.replace(' failures="6" errors="0" skipped', ' errors="0" skipped', 1),
        text.replace("<testsuites ", '<testsuites skipped="0" ', 1),
        text.replace("<system-out>", "<system-out><b>bold</b>", 1),
    ):
        assert broken != text
        assert not schema.validate(etree.fromstring(broken.encode("utf-8")))
