"""Outputs are never replaced without --force; inputs and reports never."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.cli import main
from heta_nb.errors import ReportExistsError

NORMAL = str(FIXTURES / "report-normal.json")


def _closed_stdout(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """``heta-nb ARGV >&-``: the process starts with no file descriptor 1."""
    return subprocess.run(["sh", "-c", 'exec "$0" -m heta_nb "$@" >&-', sys.executable, *argv], stderr=subprocess.PIPE)


NORMAL_PATH = FIXTURES / "report-normal.json"


ERRORS = FIXTURES / "report-errors.json"


def _one_error_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("heta-nb: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, err)


class _ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("command", ["html", "notebook", "compare"])
def test_input_named_as_a_store_reference_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    store = heta_nb.ReportStore(tmp_path / "store")
    key = store.save(heta_nb.load_report(NORMAL))
    stored = tmp_path / "store" / key
    before = stored.read_bytes()
    reference = f"{tmp_path / 'store'}:lighthouse mini/fixture-normal"
    extra = ["--modes", "full_text_search,sql_text_search"] if command == "compare" else []
    # compare -o needs .html/.ipynb: a symlink with that name points at the stored report
    target = tmp_path / "alias.html" if command == "compare" else stored
    if command == "compare":
        target.symlink_to(stored)
    for name in (reference, f"{tmp_path / 'store'}:lighthouse mini"):
        assert main([command, name, *extra, "-o", str(target), "--force"]) == 1
        err = capsys.readouterr().err
        assert "is the input report" in err and err.count("\n") == 1, err
        assert stored.read_bytes() == before


def test_unwritable_output_names_the_file_not_its_temporary() -> None:
    if not hasattr(os, "geteuid"):
        pytest.skip("POSIX only")
    base = Path(tempfile.mkdtemp(prefix="heta_nb-cli-"))  # under /tmp, so "nobody" can reach it
    folder = base / "locked"
    try:
        base.chmod(0o755)
        folder.mkdir()
        folder.chmod(0o555)
        prefix: list[str] = []
        if os.access(folder, os.W_OK):  # root: run the CLI as nobody, if we can
            if shutil.which("setpriv") is None:
                pytest.skip("cannot make an unwritable folder as root")
            prefix = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        for argv, written in (
            (["html", NORMAL, "-o", str(folder / "r.html")], folder / "r.html"),
            (["notebook", NORMAL, "-o", str(folder / "r.ipynb")], folder / "r.report.json"),
        ):
            out = subprocess.run([*prefix, sys.executable, "-m", "heta_nb", *argv], capture_output=True, text=True)
            ours = [line for line in out.stderr.splitlines() if line.startswith("heta-nb:")]  # not matplotlib's
            if prefix and not ours:
                pytest.skip(f"nobody cannot run this interpreter: {out.stderr[-200:]}")
            assert out.returncode == 1, out.stderr
            # it used to name the hidden temporary file: /.../.r.html.1a2b3c4d.tmp
            assert ours == [f"heta-nb: error: {written}: cannot write: Permission denied"], out.stderr
            assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)
        shutil.rmtree(base)


def test_closed_or_full_stdout_is_an_error() -> None:
    out = _closed_stdout("show", NORMAL)
    assert out.returncode == 1
    assert out.stderr.decode() == "heta-nb: error: stdout: is closed; nothing can be printed\n"
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            out = subprocess.run([sys.executable, "-m", "heta_nb", "show", NORMAL], stdout=full, stderr=subprocess.PIPE)
        assert out.returncode == 1
        assert out.stderr.decode() == "heta-nb: error: stdout: No space left on device\n"


def test_closed_stdout_still_writes_the_export(tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    out = _closed_stdout("html", NORMAL, "-o", str(target))
    assert out.returncode == 0 and out.stderr == b""
    assert target.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(("command", "name"), [("html", "x.html"), ("notebook", "x.ipynb")])
def test_existing_output_is_kept_unless_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, name: str
) -> None:
    target = tmp_path / name
    target.write_text("precious")
    assert main([command, str(NORMAL_PATH), "-o", str(target)]) == 1
    _one_error_line(capsys.readouterr().err, str(target), "--force")
    assert target.read_text() == "precious"
    assert not (tmp_path / "x.report.json").exists()  # nothing written at all

    assert main([command, str(NORMAL_PATH), "-o", str(target), "--force"]) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    assert target.read_text() != "precious"


def test_compare_output_is_kept_unless_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", str(NORMAL_PATH), "--modes", "full_text_search,sql_text_search", "-o"]
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
        heta_nb.to_notebook(heta_nb.load_report(NORMAL_PATH), tmp_path / "keep.ipynb")
    assert companion.read_bytes() == ERRORS.read_bytes()
    assert not (tmp_path / "keep.ipynb").exists()

    companion.write_text("not a report")  # anything else is not ours to destroy either
    with pytest.raises(ReportExistsError, match="keep.report.json"):
        heta_nb.to_notebook(NORMAL_PATH, tmp_path / "keep.ipynb")
    assert companion.read_text() == "not a report"


def test_companion_holding_another_report_is_never_replaced_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    companion = tmp_path / "keep.report.json"
    companion.write_bytes(ERRORS.read_bytes())
    for extra in ([], ["--force"]):
        assert main(["notebook", str(NORMAL_PATH), "-o", str(tmp_path / "keep.ipynb"), *extra]) == 1
        _one_error_line(capsys.readouterr().err, str(companion), "fixture-errors")
        assert companion.read_bytes() == ERRORS.read_bytes()
        assert not (tmp_path / "keep.ipynb").exists()


def test_companion_with_the_same_report_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "r.ipynb"
    heta_nb.to_notebook(NORMAL_PATH, path)
    companion = tmp_path / "r.report.json"
    before = os.stat(companion)
    heta_nb.to_notebook(NORMAL_PATH, path)  # the API still replaces the notebook itself
    after = os.stat(companion)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    assert companion.read_bytes() == NORMAL_PATH.read_bytes()

    older = json.loads(NORMAL_PATH.read_bytes())  # an earlier run with the same report id (e.g. the demo)
    older["started_at"] = "2020-01-01T00:00:00+00:00"
    companion.write_text(json.dumps(older))
    with pytest.raises(FileExistsError, match="r.ipynb"):
        heta_nb.to_notebook(NORMAL_PATH, path, overwrite=False)
    path.unlink()
    with pytest.raises(FileExistsError, match="r.report.json"):
        heta_nb.to_notebook(NORMAL_PATH, path, overwrite=False)
    assert not path.exists() and json.loads(companion.read_bytes())["started_at"].startswith("2020")
    heta_nb.to_notebook(NORMAL_PATH, path)  # the API's default replaces that older copy
    assert companion.read_bytes() == NORMAL_PATH.read_bytes()


def test_the_input_file_is_never_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pretty = tmp_path / "pretty.report.json"
    pretty.write_text(json.dumps(json.loads(NORMAL_PATH.read_bytes()), indent=2))
    original = pretty.read_bytes()
    notebook = heta_nb.to_notebook(pretty, tmp_path / "pretty.ipynb")
    assert pretty.read_bytes() == original
    assert "load_report('pretty.report.json')" in notebook.cells[1].source

    assert main(["notebook", str(pretty), "-o", str(tmp_path / "pretty.ipynb"), "--force"]) == 0
    assert pretty.read_bytes() == original
    assert main(["html", str(pretty), "-o", str(pretty), "--force"]) == 1  # not even the output itself
    _one_error_line(capsys.readouterr().err, str(pretty), "input")
    assert pretty.read_bytes() == original


# -- the CLI ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["html", "notebook"])
@pytest.mark.parametrize("force", [False, True])
def test_output_that_is_a_folder_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, force: bool
) -> None:
    assert main([command, NORMAL, "-o", str(tmp_path), *(["--force"] if force else [])]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"heta-nb: error: {tmp_path}: is a folder; give the file to write")
    assert ".tmp" not in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_closed_pipe_is_not_an_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())  # `heta-nb show ... | head -1`
    assert main(["show", NORMAL]) == 1
    monkeypatch.undo()
    assert "Broken pipe" not in capsys.readouterr().err
