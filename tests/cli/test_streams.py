"""``-`` is standard input and output, ``--format json`` for show and list, and a malformed report's
problems one per line: the conventions a shell user expects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES

import heta_nb

REPORT = FIXTURES / "report-normal.json"


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "heta_nb", *args], input=stdin, capture_output=True, timeout=120, check=False
    )


def test_show_reads_standard_input_and_html_writes_standard_output(tmp_path: Path) -> None:
    piped = _cli("show", "-", stdin=REPORT.read_bytes())
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == _cli("show", str(REPORT)).stdout  # the same report, the same text
    page = _cli("html", str(REPORT), "-o", "-")
    assert page.returncode == 0 and page.stdout.lstrip().lower().startswith(b"<!doctype html")
    assert not (Path.cwd() / "-").exists() and b"wrote" not in page.stdout


def test_show_and_list_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from heta_nb.cli import main

    report = heta_nb.load_report(REPORT)
    assert main(["show", str(REPORT), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    summary = report.summary_frame()
    assert len(rows) == len(summary) and {r["metric"] for r in rows} == set(summary["metric"])
    store = heta_nb.ReportStore(tmp_path / "store")
    store.save(report)
    assert main(["list", str(tmp_path / "store"), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["report_id"] for r in listed] == [report.report_id]


def test_a_malformed_report_prints_one_problem_per_line(tmp_path: Path) -> None:
    raw = json.loads(REPORT.read_text(encoding="utf-8"))
    raw["case_results"][0]["query_mode"] = 7
    raw["case_results"][1]["latency_ms"] = "slow"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw), encoding="utf-8")
    done = _cli("show", str(bad))
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 1 and len(lines) >= 2, lines
    assert all(line.startswith("heta-nb: error: ") for line in lines)
    assert any("case_results[0].query_mode" in line for line in lines)
    assert any("case_results[1].latency_ms" in line for line in lines)
