"""The heta-nb command line: every subcommand, --help, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.cli import main
from heta_nb.store.locate import split_store_reference

NORMAL = str(FIXTURES / "report-normal.json")


def test_help_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], *([name, "--help"] for name in ("html", "notebook", "compare", "list", "show", "demo"))):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
        assert "usage: heta-nb" in capsys.readouterr().out


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["html", NORMAL])  # -o is required
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2


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


def test_errors_are_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "report.json"
    broken.write_text('{"schema_version": "9"}')
    assert main(["show", str(broken)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("heta-nb: error: ") and "unsupported version '9'" in err and "Traceback" not in err
    assert main(["show", str(tmp_path / "absent.json")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["--debug", "show", str(broken)]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_python_dash_m_and_the_console_script() -> None:
    out = subprocess.run([sys.executable, "-m", "heta_nb", "show", NORMAL], capture_output=True, text=True)
    assert out.returncode == 0 and "fixture-normal" in out.stdout
    script = Path(sys.executable).with_name("heta-nb")
    if script.exists():
        out = subprocess.run([str(script), "list", "/nonexistent-store"], capture_output=True, text=True)
        assert out.returncode == 1 and "/nonexistent-store" in out.stderr and "no such folder" in out.stderr


def test_store_reference_parsing(tmp_path: Path) -> None:
    assert split_store_reference("demo-store:saltmarsh isles/small-chunks") == (
        "demo-store",
        "saltmarsh isles",
        "small-chunks",
    )
    assert split_store_reference("memory://bucket:kb/r1") == ("memory://bucket", "kb", "r1")
    assert split_store_reference("s3://bucket/path/report.json") is None
    # a port is not a store reference's colon (it used to read as store https://host, KB 8443)
    assert split_store_reference("https://host:8443/path/report.json") is None
    assert split_store_reference("HTTP://host:80/store:kb/r1") == ("HTTP://host:80/store", "kb", "r1")
    assert split_store_reference("store:kb") == ("store", "kb", None)
    assert split_store_reference(NORMAL) is None
