"""A check as text, markdown, strict JSON, JUnit XML and the notebook view; hostile text stays text."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import gate_pairs as gp
import pytest

import heta_nb
from heta_nb.gate.markdown import md
from heta_nb.render import repr_mimebundle

HOSTILE = "</details><script>alert(1)</script> | `x` *b* [l](javascript:alert(1)) @octocat \x00\x1b\ud800 {{ 7*7 }}"


@pytest.fixture(scope="module")
def pair() -> tuple[heta_nb.EvaluationReport, heta_nb.EvaluationReport]:
    base = gp.base_dict()
    for result in base["case_results"]:
        result["query"] = HOSTILE + " " + result["case_id"]
    new = gp.degraded(base, report_id="new <b>" + HOSTILE)
    return gp.as_report(new), gp.as_report(base)


@pytest.fixture(scope="module")
def regression(pair):
    return heta_nb.check(*pair, floors={"beir_ndcg@5": 0.9})


@pytest.mark.hostile
def test_markdown_is_a_table_with_arrows_and_collapsed_cases_and_escapes_everything(regression) -> None:
    text = regression.to_markdown()
    assert text.startswith("### ❌ heta-nb check: regression\n")
    table = [line for line in text.splitlines() if line.startswith("| ") and "**regression**" in line]
    assert len(table) == len(regression.rows) == 6
    assert all(line.count(" | ") == 10 for line in table)  # eleven cells: no pipe leaked from the text
    assert "↓ **regression**" in table[0] and "**-0." in table[0]
    assert text.count("<details>") == text.count("</details>") >= 1  # flipped cases collapsed, balanced
    assert "<script" not in text and "@octocat" not in text and "&#64;octocat" in text
    assert "[l](javascript" not in text and "\\[l\\]" in text
    assert "\x00" not in text and "\x1b" not in text and "\ud800" not in text
    assert "Flipped cases:" in text and "broke (passed → failed)" in text


def test_markdown_of_a_passing_check(pair) -> None:
    new, base = pair
    text = heta_nb.check(base, base).to_markdown()
    assert text.startswith("### ✅ heta-nb check: no detectable change")
    assert "Flipped cases" not in text and "Errors:" not in text  # nothing flipped, nothing to collapse


def test_md_escapes_html_and_markdown() -> None:
    assert md("a|b") == "a\\|b"
    assert md("<i>&</i>") == "&lt;i&gt;&amp;&lt;/i&gt;"
    assert md("line\nbreak") == "line break"
    assert md("_x_ `y` ~~z~~") == "\\_x\\_ \\`y\\` \\~\\~z\\~\\~"


@pytest.mark.hostile
def test_junit_has_one_case_per_row_failures_for_regressions_and_is_valid_xml(regression) -> None:
    text = regression.to_junit()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(text.encode("utf-8"))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(regression.rows) and root.get("tests") == str(len(cases))
    assert {c.get("classname") for c in cases} == {f"heta_nb.check.{m}" for m in gp.MODES}
    failures = [c.find("failure") for c in cases]
    assert all(f is not None and f.get("type") == "regression" for f in failures)
    assert root.get("failures") == "6" and suite.get("errors") == "0"
    floors = [c.find("failure").get("message") for c in cases if c.get("name") == "beir_ndcg@5"]
    assert len(floors) == 2 and all("below the floor 0.9" in m for m in floors)
    outs = "".join(c.find("system-out").text for c in cases)
    assert "broke: " in outs and "<script>" in outs  # text, escaped by the XML writer, read back as text
    assert "\x00" not in text and "\x1b" not in text


def test_junit_of_a_pair_that_is_not_comparable(pair) -> None:
    new, base = pair
    other = gp.as_report(gp.base_dict(40))
    result = heta_nb.check(other, base, modes=["nope"])
    root = ET.fromstring(result.to_junit())
    error = root.find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "not comparable" and "has no mode 'nope'" in error.get("message")
    assert root.get("errors") == "1"


def test_json_is_strict_and_complete(regression) -> None:
    data = json.loads(regression.to_json())
    assert data["verdict"] == "regression" and data["exit_code"] == 1 and data["ok"] is False
    assert data["headline"] == regression.headline
    assert len(data["rows"]) == 6 and len(data["flips"]) == len(regression.flips)  # every case, not a sample
    assert set(data["rows"][0]) >= {"mode", "metric", "diff", "ci_low", "p_adjusted", "verdict", "reason"}
    assert "NaN" not in regression.to_json()


def test_nan_becomes_null_in_json(pair) -> None:
    new, base = pair
    broken = json.loads(new.to_json())
    for result in broken["case_results"]:
        if result["query_mode"] == "extractive_answer":
            result.update(
                scores=[], response=None, error={"message": "x", "error_type": "E", "retryable": False, "metadata": {}}
            )
    data = json.loads(heta_nb.check(gp.as_report(broken), base).to_json())
    assert any(row["new_mean"] is None for row in data["rows"])


def test_text_starts_with_the_verdict(regression) -> None:
    lines = regression.to_text().splitlines()
    assert lines[0].startswith("heta-nb check: FAILED: regression in 6 of 6 checks")
    assert lines[1].startswith("new:      new <b>") and lines[2].startswith("baseline: baseline")
    assert any(line.startswith("cases that broke (passed -> failed):") for line in lines)
    assert lines[-1].startswith("settings: alpha 0.05, Holm over each mode's metrics (3 in full_text_search, 3 in")
    assert "\x1b" not in regression.to_text() and "\x00" not in regression.to_text()  # no terminal escapes
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        regression.format("yaml")


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.verdicts: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        found = dict(attrs).get("data-verdict")
        if found:
            self.verdicts.append(found)

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.hostile
def test_the_notebook_view_shows_the_verdict_first_and_escapes_text(regression) -> None:
    bundle = repr_mimebundle(regression)
    assert bundle["text/plain"].startswith("heta-nb check: FAILED")
    html = bundle["text/html"]
    assert "Error" not in html[:200]
    parser = _Parser()
    parser.feed(html)
    assert "script" not in parser.tags and "b" not in [t for t in parser.tags if t == "b"]
    text = "".join(parser.text)
    assert text.index("Check: regression") < text.index("New vs baseline")
    assert parser.verdicts[0] == "regression" and parser.verdicts.count("regression") == 7  # the block + 6 rows
    assert "<script>alert(1)</script>" in text  # shown as text
    assert "{{ 7*7 }}" in text and "49" not in text.split("{{ 7*7 }}")[0][-5:]
    assert regression._repr_html_() == html
