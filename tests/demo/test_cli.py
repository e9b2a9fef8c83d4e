"""heta-nb demo's checks and help."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES

from heta_nb.cli import main


def test_demo_checks_its_targets_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("heta_framework")
    afile = tmp_path / "afile"
    afile.write_text("keep")
    assert main(["demo", "-o", str(afile), "--store", str(tmp_path / "store"), "-q"]) == 1
    assert (
        capsys.readouterr().err
        == f"heta-nb: error: {afile}: is not a folder (-o names the folder the demo writes to)\n"
    )
    assert main(["demo", "-o", str(tmp_path / "out"), "--store", str(afile), "-q"]) == 1
    assert "--store names the folder" in capsys.readouterr().err

    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("precious")  # not a demo's page: kept, and nothing runs
    assert main(["demo", "-o", str(out), "--store", str(tmp_path / "store"), "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "report.html: already exists and was not written by heta-nb demo" in captured.err
    assert (out / "report.html").read_text() == "precious" and not (tmp_path / "store").exists()

    (out / "report.html").unlink()
    shutil.copy(FIXTURES / "report-errors.json", out / "report.report.json")  # another report: never replaced
    assert main(["demo", "-o", str(out), "--store", str(tmp_path / "store"), "-q", "--force"]) == 1
    assert "report.report.json: already exists and is not a demo report" in capsys.readouterr().err
    assert not (tmp_path / "store").exists()


def test_demo_without_heta_says_so_before_printing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "heta_framework", None)  # import heta_framework now fails
    # as on a Python where the [heta] extra installs (on 3.10 / 3.13 the message says to change Python)
    monkeypatch.setattr("heta_nb._util.optional.sys.version_info", (3, 11, 7))
    assert main(["demo", "-o", str(tmp_path / "out"), "--store", str(tmp_path / "store"), "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "heta-nb: error: heta-nb demo needs the optional package 'heta_framework'; "
        "install it with: pip install 'heta-nb[heta]'\n"
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "store").exists()


def test_demo_help_names_the_extra_and_defaults(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # argparse wraps help at hyphens otherwise
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "pip install 'heta-nb[heta]'" in text
    assert "(default: demo-output)" in text and "(default: demo-store)" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "(needs the [heta] extra)" in capsys.readouterr().out
