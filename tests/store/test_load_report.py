"""``heta_nb.load_report`` takes store references too; ``heta_nb.model.load_report`` stays the pure reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES

import heta_nb
import heta_nb.model
from heta_nb.errors import ReportNotFoundError

NORMAL = FIXTURES / "report-normal.json"


def test_top_level_load_report_takes_store_references(tmp_path: Path) -> None:
    report = heta_nb.load_report(NORMAL)
    older = heta_nb.load_report({**report.to_dict(), "report_id": "older", "started_at": "2020-01-01T00:00:00+00:00"})
    store = heta_nb.ReportStore(tmp_path / "store")
    store.save(older)
    store.save(report)
    root = tmp_path / "store"
    assert heta_nb.load_report(f"{root}:lighthouse mini/older").report_id == "older"
    assert heta_nb.load_report(f"{root}:lighthouse mini").report_id == report.report_id  # the newest
    assert heta_nb.load_report("lighthouse mini/older", store=root).report_id == "older"
    # everything the model's reader takes still works, JSON text with colons included
    assert heta_nb.load_report(report.to_json()) == report
    assert heta_nb.load_report(report.to_json().encode()) == report
    assert heta_nb.load_report(json.loads(report.to_json())) == report
    assert heta_nb.load_report(NORMAL) == report and heta_nb.load_report(str(NORMAL)) == report
    assert heta_nb.load_report(report) is report


def test_the_model_reader_knows_no_store(tmp_path: Path) -> None:
    heta_nb.ReportStore(tmp_path / "store").save(heta_nb.load_report(NORMAL))
    assert heta_nb.model.load_report is not heta_nb.load_report
    with pytest.raises(ReportNotFoundError):
        heta_nb.model.load_report(f"{tmp_path / 'store'}:lighthouse mini/fixture-normal")


def test_a_store_folder_given_as_a_report_says_how_to_name_one(tmp_path: Path) -> None:
    folder = tmp_path / "demo-store"
    heta_nb.ReportStore(folder).save(heta_nb.load_report(NORMAL))
    with pytest.raises(ReportNotFoundError) as caught:
        heta_nb.load_report(folder)
    message = str(caught.value)
    assert message.startswith(
        f"{folder}: is a report store, not a report; name a report in it as '{folder}:KB/REPORT_ID'"
    )
    assert f"e.g. '{folder}:lighthouse_mini/fixture-normal'" in message
    assert f"heta_nb.ReportStore({str(folder)!r}).list() lists them" in message
    assert heta_nb.load_report(f"{folder}:lighthouse_mini/fixture-normal").report_id == "fixture-normal"
    (tmp_path / "plain").mkdir()
    with pytest.raises(Exception, match="is a directory without a report.json"):  # not a store: as before
        heta_nb.load_report(tmp_path / "plain")
