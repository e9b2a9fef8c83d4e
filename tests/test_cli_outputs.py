"""What the CLI (and ``to_notebook``) write: never an existing file without --force, never
another report's companion, never the input; warnings once; ``list`` on a bad path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.cli import main
from heta_nb.errors import ReportExistsError

NORMAL = FIXTURES / "report-normal.json"
ERRORS = FIXTURES / "report-errors.json"


def _heta_nb(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "heta_nb", *argv], capture_output=True, text=True)


def _one_error_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("heta-nb: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, err)


@pytest.mark.parametrize(("command", "name"), [("html", "x.html"), ("notebook", "x.ipynb")])
def test_existing_output_is_kept_unless_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, name: str
) -> None:
    target = tmp_path / name
    target.write_text("precious")
    assert main([command, str(NORMAL), "-o", str(target)]) == 1
    _one_error_line(capsys.readouterr().err, str(target), "--force")
    assert target.read_text() == "precious"
    assert not (tmp_path / "x.report.json").exists()  # nothing written at all

    assert main([command, str(NORMAL), "-o", str(target), "--force"]) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    assert target.read_text() != "precious"


def test_compare_output_is_kept_unless_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", str(NORMAL), "--modes", "full_text_search,sql_text_search", "-o"]
    for name in ("c.html", "c.ipynb"):
        target = tmp_path / name
        target.write_text("precious")
        assert main([*argv, str(target)]) == 1
        _one_error_line(capsys.readouterr().err, str(target), "--force")
        assert target.read_text() == "precious"
        assert main([*argv, str(target), "--force"]) == 0
        assert target.read_text() != "precious"
    capsys.readouterr()


def test_companion_holding_another_report_is_never_replaced_api(tmp_path: Path) -> None:
    companion = tmp_path / "keep.report.json"
    companion.write_bytes(ERRORS.read_bytes())
    with pytest.raises(ReportExistsError, match="keep.report.json"):
        heta_nb.to_notebook(heta_nb.load_report(NORMAL), tmp_path / "keep.ipynb")
    assert companion.read_bytes() == ERRORS.read_bytes()
    assert not (tmp_path / "keep.ipynb").exists()

    companion.write_text("not a report")  # anything else is not ours to destroy either
    with pytest.raises(ReportExistsError, match="keep.report.json"):
        heta_nb.to_notebook(NORMAL, tmp_path / "keep.ipynb")
    assert companion.read_text() == "not a report"


def test_companion_holding_another_report_is_never_replaced_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    companion = tmp_path / "keep.report.json"
    companion.write_bytes(ERRORS.read_bytes())
    for extra in ([], ["--force"]):
        assert main(["notebook", str(NORMAL), "-o", str(tmp_path / "keep.ipynb"), *extra]) == 1
        _one_error_line(capsys.readouterr().err, str(companion), "fixture-errors")
        assert companion.read_bytes() == ERRORS.read_bytes()
        assert not (tmp_path / "keep.ipynb").exists()


def test_companion_with_the_same_report_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "r.ipynb"
    heta_nb.to_notebook(NORMAL, path)
    companion = tmp_path / "r.report.json"
    before = os.stat(companion)
    heta_nb.to_notebook(NORMAL, path)  # the API still replaces the notebook itself
    after = os.stat(companion)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    assert companion.read_bytes() == NORMAL.read_bytes()

    older = json.loads(NORMAL.read_bytes())  # an earlier run with the same report id (e.g. the demo)
    older["started_at"] = "2020-01-01T00:00:00+00:00"
    companion.write_text(json.dumps(older))
    with pytest.raises(FileExistsError, match="r.ipynb"):
        heta_nb.to_notebook(NORMAL, path, overwrite=False)
    path.unlink()
    with pytest.raises(FileExistsError, match="r.report.json"):
        heta_nb.to_notebook(NORMAL, path, overwrite=False)
    assert not path.exists() and json.loads(companion.read_bytes())["started_at"].startswith("2020")
    heta_nb.to_notebook(NORMAL, path)  # the API's default replaces that older copy
    assert companion.read_bytes() == NORMAL.read_bytes()


def test_the_input_file_is_never_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pretty = tmp_path / "pretty.report.json"
    pretty.write_text(json.dumps(json.loads(NORMAL.read_bytes()), indent=2))
    original = pretty.read_bytes()
    notebook = heta_nb.to_notebook(pretty, tmp_path / "pretty.ipynb")
    assert pretty.read_bytes() == original
    assert "load_report('pretty.report.json')" in notebook.cells[1].source

    assert main(["notebook", str(pretty), "-o", str(tmp_path / "pretty.ipynb"), "--force"]) == 0
    assert pretty.read_bytes() == original
    assert main(["html", str(pretty), "-o", str(pretty), "--force"]) == 1  # not even the output itself
    _one_error_line(capsys.readouterr().err, str(pretty), "input")
    assert pretty.read_bytes() == original


def test_compare_prints_each_warning_once() -> None:
    out = _heta_nb("compare", str(NORMAL), str(ERRORS))
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert lines and all(line.startswith("heta-nb: warning: ") for line in lines), out.stderr
    assert len(lines) == len(set(lines))
    assert "HetaComparisonWarning" not in out.stderr and "cli.py" not in out.stderr
    assert any("different query modes" in line for line in lines)


def test_list_missing_folder_or_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-store"
    out = _heta_nb("list", str(missing))
    assert out.returncode == 1 and "no reports" not in out.stdout
    _one_error_line(out.stderr, str(missing))
    out = _heta_nb("list", str(NORMAL))
    assert out.returncode == 1 and "no reports" not in out.stdout
    _one_error_line(out.stderr, str(NORMAL))


def test_list_warns_once_about_an_unreadable_report(tmp_path: Path) -> None:
    store = heta_nb.ReportStore(tmp_path / "store")
    report = heta_nb.load_report(NORMAL)
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
    store.save(heta_nb.load_report(NORMAL))
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


@pytest.mark.parametrize(
    "error",
    [OverflowError("int too large to convert to float"), RecursionError("maximum recursion depth exceeded")],
)
def test_data_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def broken(text: str) -> None:
        raise error

    monkeypatch.setattr("heta_nb.cli.output.report", broken)
    assert main(["show", str(NORMAL)]) == 1
    _one_error_line(capsys.readouterr().err, type(error).__name__, str(error))
    assert main(["--debug", "show", str(NORMAL)]) == 1
    assert "Traceback" in capsys.readouterr().err

    def interrupted(text: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("heta_nb.cli.output.report", interrupted)
    assert main(["show", str(NORMAL)]) == 130
