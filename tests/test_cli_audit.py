"""CLI audit: usage errors exit 2, outputs match the command, errors name the real file,
a closed or full stdout is an error, inputs named as STORE:KB/ID are never replaced,
and the demo checks its targets before it runs."""

from __future__ import annotations

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

NORMAL = str(FIXTURES / "report-normal.json")


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2, argv
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["show", ""], "argument report: must not be empty"),
        (["list", ""], "argument store: must not be empty"),
        (["html", NORMAL, "-o", ""], "argument -o/--output: must not be empty"),
        (["notebook", NORMAL, "-o", "x.ipynb", "--source", ""], "argument --source: must not be empty"),
        (["compare", NORMAL, "--modes", ","], "argument --modes"),
        (["compare", NORMAL, NORMAL, "--names", " , "], "argument --names"),
        (["compare", NORMAL, NORMAL, "--seed", "-1"], "argument --seed: must be a non-negative integer"),
    ],
)
def test_empty_or_invalid_arguments_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _usage_error(argv, capsys, needle)
    assert list(tmp_path.iterdir()) == []  # nothing written (an empty -o used to mean ".")


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["html", NORMAL, "-o"], "r.ipynb"),
        (["notebook", NORMAL, "-o"], "r.html"),
        (["compare", NORMAL, "-o"], "c.txt"),
    ],
)
def test_output_extension_must_match_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], name: str
) -> None:
    _usage_error([*argv, str(tmp_path / name)], capsys, name)
    assert list(tmp_path.iterdir()) == []  # html used to write a page into r.ipynb


def test_debug_works_after_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "report.json"
    broken.write_text('{"schema_version": "9"}')
    assert main(["show", str(broken), "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert main(["show", str(broken)]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_notebook_into_a_folder_suggests_an_ipynb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["notebook", NORMAL, "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert (
        err.strip() == f"heta-nb: error: {tmp_path}: is a folder; give the file to write (e.g. {tmp_path}/report.ipynb)"
    )


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


def _closed_stdout(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """``heta-nb ARGV >&-``: the process starts with no file descriptor 1."""
    return subprocess.run(["sh", "-c", 'exec "$0" -m heta_nb "$@" >&-', sys.executable, *argv], stderr=subprocess.PIPE)


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


def test_list_of_a_report_folder_says_what_to_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(NORMAL, tmp_path / "report.json")
    assert main(["list", str(tmp_path)]) == 0
    assert f"heta-nb show {tmp_path}" in capsys.readouterr().out


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


def test_help_matches_what_compare_and_the_tool_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "or one report (its modes are compared)" in text and "--debug" in text
    assert main(["compare", NORMAL]) == 0  # one report without --modes compares all of its modes
    assert "Comparison of 3 systems" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Evaluate Heta knowledge-base recipes;" not in text  # the CLI has no evaluate command
    assert "Exit codes: 0 success, 1 the operation failed, 2 bad usage" in text
