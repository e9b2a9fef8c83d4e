"""heta-nb's commands, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.cli import main

NORMAL = str(FIXTURES / "report-normal.json")


NORMAL_PATH = FIXTURES / "report-normal.json"


ERRORS = FIXTURES / "report-errors.json"


def _heta_nb(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "heta_nb", *argv], capture_output=True, text=True)


def test_html_notebook_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["html", NORMAL, "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["notebook", NORMAL, "-o", str(tmp_path / "r.ipynb")]) == 0
    assert json.loads((tmp_path / "r.ipynb").read_text())["cells"]
    assert main(["show", NORMAL]) == 0
    out = capsys.readouterr().out
    assert "EvaluationReport(report_id='fixture-normal'" in out and "evidence_recall@3" in out
    assert "skipped score averaged in as 0" in out


def test_store_references_list_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = heta_nb.ReportStore(tmp_path / "store")
    store.save(heta_nb.load_report(NORMAL))
    assert main(["list", str(tmp_path / "store")]) == 0
    assert "fixture-normal" in capsys.readouterr().out
    reference = f"{tmp_path / 'store'}:lighthouse mini/fixture-normal"
    assert main(["show", reference]) == 0
    assert main(["show", f"{tmp_path / 'store'}:lighthouse mini"]) == 0  # newest of that KB
    capsys.readouterr()
    assert main(["compare", reference, "--modes", "full_text_search,sql_text_search"]) == 0
    assert "Comparison of 2 systems" in capsys.readouterr().out
    assert (
        main(["compare", NORMAL, "--modes", "full_text_search,extractive_answer", "-o", str(tmp_path / "c.html")]) == 0
    )
    assert "heta-comparison" in (tmp_path / "c.html").read_text()


def test_python_dash_m_and_the_console_script() -> None:
    out = subprocess.run([sys.executable, "-m", "heta_nb", "show", NORMAL], capture_output=True, text=True)
    assert out.returncode == 0 and "fixture-normal" in out.stdout
    script = Path(sys.executable).with_name("heta-nb")
    if script.exists():
        out = subprocess.run([str(script), "list", "/nonexistent-store"], capture_output=True, text=True)
        assert out.returncode == 1 and "/nonexistent-store" in out.stderr and "no such folder" in out.stderr


def test_compare_prints_each_warning_once() -> None:
    out = _heta_nb("compare", str(NORMAL_PATH), str(ERRORS))
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert lines and all(line.startswith("heta-nb: warning: ") for line in lines), out.stderr
    assert len(lines) == len(set(lines))
    assert "HetaComparisonWarning" not in out.stderr and "cli.py" not in out.stderr
    assert any("different query modes" in line for line in lines)


def test_list_warns_once_about_an_unreadable_report(tmp_path: Path) -> None:
    store = heta_nb.ReportStore(tmp_path / "store")
    report = heta_nb.load_report(NORMAL_PATH)
    store.save(report)
    key = store.save(report.replace(report_id="broken"))
    (tmp_path / "store" / key).write_bytes(b"{")
    for sidecar in (tmp_path / "store").rglob("*summary.json"):
        sidecar.unlink()
    out = _heta_nb("list", str(tmp_path / "store"))
    assert out.returncode == 0 and "fixture-normal" in out.stdout
    assert "Warning:" not in out.stderr and "cli.py" not in out.stderr, out.stderr
    assert all(line.startswith("heta-nb: warning: ") for line in out.stderr.splitlines()), out.stderr


def test_list_prints_store_problems_as_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = heta_nb.ReportStore(tmp_path / "store")
    store.save(heta_nb.load_report(NORMAL_PATH))
    real = heta_nb.ReportStore.list

    def listing(self: heta_nb.ReportStore) -> pd.DataFrame:
        frame = real(self)
        frame.attrs["problems"] = [{"key": "kb/evaluations/bad/report.json", "error": "invalid JSON"}]
        return frame

    monkeypatch.setattr(heta_nb.ReportStore, "list", listing)
    assert main(["list", str(tmp_path / "store")]) == 0
    captured = capsys.readouterr()
    assert "fixture-normal" in captured.out
    assert captured.err.strip() == "heta-nb: warning: kb/evaluations/bad/report.json: invalid JSON"
