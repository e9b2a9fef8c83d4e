"""A newcomer's mistakes get one line that says what to do instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.cli import main

NORMAL = str(FIXTURES / "report-normal.json")


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of a usage error (exit 2, after the usage lines)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2, argv
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def _failure(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line of a failed command (exit 1)."""
    capsys.readouterr()
    assert main(argv) == 1, argv
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_misspelt_command_names_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert _usage_error(["chek"], capsys) == "heta-nb: error: unknown command 'chek'; did you mean 'check'?"
    assert _usage_error(["--debug", "shwo", NORMAL], capsys) == (
        "heta-nb: error: unknown command 'shwo'; did you mean 'show'?"
    )
    assert "invalid choice: 'zzzz'" in _usage_error(["zzzz"], capsys)  # nothing close: argparse's own list


def test_check_with_a_misspelt_metric_or_mode_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error(["check", NORMAL, "--baseline", NORMAL, "--metric", "beir_ndgc@3"], capsys)
    assert line == "heta-nb check: error: unknown metric 'beir_ndgc@3'; did you mean 'beir_ndcg@3'?"
    line = _usage_error(["check", NORMAL, "--baseline", NORMAL, "--mode", "ful_text_search"], capsys)
    assert line == "heta-nb check: error: unknown mode 'ful_text_search'; did you mean 'full_text_search'?"
    line = _usage_error(["check", NORMAL, "--baseline", NORMAL, "--metric", "zzz"], capsys)
    assert line.startswith("heta-nb check: error: unknown metric 'zzz'; the reports have 'evidence_recall@3', ")
    assert line.count("'evidence_recall@3'") == 1  # each name once


def test_a_wrong_kb_lists_the_stores_kbs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    heta_nb.ReportStore(store).save(heta_nb.load_report(NORMAL))
    listing = f"knowledge bases in {store}: 'lighthouse mini'; did you mean 'lighthouse mini'?"
    assert _failure(["show", f"{store}:lighthous mini"], capsys) == (
        f"heta-nb: error: {store}: no reports for knowledge base 'lighthous mini'; {listing}"
    )
    assert _failure(["show", f"{store}:lighthous mini/fixture-normal"], capsys).endswith(f"; {listing}")
    line = _failure(["show", f"{store}:elsewhere"], capsys)
    assert line.endswith(f"; knowledge bases in {store}: 'lighthouse mini'")
    # a known KB and a wrong id lists its ids, as before (not the KBs)
    line = _failure(["show", f"{store}:lighthouse mini/nope"], capsys)
    assert line.endswith("reports for 'lighthouse_mini': fixture-normal") and "knowledge bases in" not in line


def test_an_html_export_given_as_a_report_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "r.html"
    assert main(["html", NORMAL, "-o", str(page)]) == 0
    expected = (
        f"heta-nb: error: {page}: this is an HTML export (heta-nb html), not a report.json; "
        "pass the report it was made from"
    )
    for argv in (
        ["show", str(page)],
        ["compare", str(page), NORMAL],
        ["notebook", str(page), "-o", str(tmp_path / "x.ipynb")],
    ):
        assert _failure(argv, capsys) == expected, argv
    assert not (tmp_path / "x.ipynb").exists()
    lowercase = tmp_path / "lower.json"
    lowercase.write_text("\ufeff\n  <html><body>hi</body></html>")
    assert "this is an HTML export" in _failure(["show", str(lowercase)], capsys)


def test_html_refuses_an_output_that_is_not_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, shown in (("r.pdf", ", not '.pdf'"), ("report", "")):
        line = _usage_error(["html", NORMAL, "-o", str(tmp_path / name)], capsys)
        assert (
            line
            == f"heta-nb html: error: {tmp_path / name}: html writes an HTML page{shown}; name a .html or .htm file"
        )
        assert not (tmp_path / name).exists()
    assert main(["html", NORMAL, "-o", str(tmp_path / "r.HTM")]) == 0


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("html", "heta-nb html runs/report.json -o report.html"),
        ("notebook", "heta-nb notebook runs/report.json -o report.ipynb"),
        ("compare", "heta-nb compare baseline.json candidate.json"),
        ("list", "heta-nb list demo-store"),
        ("show", "heta-nb show runs/report.json"),
    ],
)
def test_help_has_a_description_and_an_example(command: str, example: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    usage, _, rest = text.partition("\n\n")
    assert usage.startswith(f"usage: heta-nb {command}")
    assert not rest.startswith(("positional arguments", "options")), "no description"
    assert "\nexample:\n  " + example in text
