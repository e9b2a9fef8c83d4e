"""Lone surrogates: written as escapes, shown as replacement characters (heta_nb._util.unicode)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb._util.unicode import escape_surrogates_in_json, valid_text

BASE = json.loads((FIXTURES / "report-normal.json").read_text(encoding="utf-8"))


MODE = "full_text_search"


def _report(change: Callable[[dict[str, Any]], None]) -> heta_nb.EvaluationReport:
    data = copy.deepcopy(BASE)
    change(data)
    return heta_nb.load_report(json.dumps(data))


def _cases(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data["case_results"] if c["query_mode"] == MODE]


def _lone_surrogates(data: dict[str, Any]) -> None:
    data["report_id"] = "fixture\ud800"
    data["knowledge_base_name"] = "kb\udc80"
    _cases(data)[0]["query"] = "where\udfff?"


@pytest.mark.hostile
def test_a_report_with_lone_surrogates_is_written_as_escapes_and_reads_back_equal(tmp_path: Path) -> None:
    report = _report(_lone_surrogates)
    path = tmp_path / "report.json"
    path.write_bytes(heta_nb.model.io.encode_report(report))
    raw = path.read_bytes()
    assert b"\\ud800" in raw and b"\\udc80" in raw  # escapes, valid UTF-8
    raw.decode("utf-8")
    again = heta_nb.load_report(path)
    assert again == report and again.report_id == "fixture\ud800"


@pytest.mark.hostile
def test_the_page_shows_lone_surrogates_as_replacement_characters(tmp_path: Path) -> None:
    html = heta_nb.to_html(_report(_lone_surrogates))
    assert "fixture\ufffd" in html and "\ud800" not in html


def test_valid_text_and_json_escapes() -> None:
    assert valid_text("a\ud800b") == "a\ufffdb" and valid_text("é·") == "é·"
    assert escape_surrogates_in_json('"a\udc80"') == '"a\\udc80"'
    assert json.loads(escape_surrogates_in_json(json.dumps("x\ud800", ensure_ascii=False))) == "x\ud800"
