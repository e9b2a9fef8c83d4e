"""Usage errors, help texts and exit codes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES

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


NORMAL_PATH = FIXTURES / "report-normal.json"


def _heta_nb(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "heta_nb", *argv], capture_output=True, text=True)


def _one_error_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("heta-nb: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, err)


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


def test_list_of_a_report_folder_says_what_to_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(NORMAL, tmp_path / "report.json")
    assert main(["list", str(tmp_path)]) == 0
    assert f"heta-nb show {tmp_path}" in capsys.readouterr().out


def test_help_matches_what_compare_and_the_tool_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "or one report (its modes are compared)" in text and "--debug" in text
    assert main(["compare", NORMAL]) == 0  # one report without --modes compares all of its modes
    assert "Comparison of extractive_answer, sql_text_search vs baseline 'full_text_search'" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Evaluate Heta knowledge-base recipes;" not in text  # the CLI has no evaluate command
    assert "Exit codes: 0 success, 1 the operation failed, 2 bad usage" in text


def test_list_missing_folder_or_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-store"
    out = _heta_nb("list", str(missing))
    assert out.returncode == 1 and "no reports" not in out.stdout
    _one_error_line(out.stderr, str(missing))
    out = _heta_nb("list", str(NORMAL_PATH))
    assert out.returncode == 1 and "no reports" not in out.stdout
    _one_error_line(out.stderr, str(NORMAL_PATH))


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
    assert main(["show", str(NORMAL_PATH)]) == 1
    _one_error_line(capsys.readouterr().err, type(error).__name__, str(error))
    assert main(["--debug", "show", str(NORMAL_PATH)]) == 1
    assert "Traceback" in capsys.readouterr().err

    def interrupted(text: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("heta_nb.cli.output.report", interrupted)
    assert main(["show", str(NORMAL_PATH)]) == 130
