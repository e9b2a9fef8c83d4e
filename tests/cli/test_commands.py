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
    capsys.readouterr()
    assert main(["show", NORMAL]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Evaluation report 'fixture-normal'\n") and "EvaluationReport(" not in out
    assert "evidence_recall@3" in out and "skipped score (no gold data) left out of the mean" in out


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
    assert "Comparison of sql_text_search vs baseline 'full_text_search'" in capsys.readouterr().out
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


# -- reading reports in a terminal: a header first, each note once, names checked ----------------


def test_show_starts_with_a_readable_header_and_prints_each_note_once(capsys: pytest.CaptureFixture[str]) -> None:
    report = heta_nb.load_report(NORMAL)
    assert main(["show", NORMAL]) == 0
    out = capsys.readouterr().out
    header = out.split("\n\n")[0].splitlines()
    assert header[0] == "Evaluation report 'fixture-normal'"
    labels = [line.split("  ")[1].strip() for line in header[1:]]
    assert labels[:5] == ["knowledge base", "benchmark", "modes", "results", "started"]
    assert f"  knowledge base  {report.knowledge_base_name}" in header
    assert any(line.startswith("  results ") and f"{report.case_count}" in line for line in header)
    started = next(line for line in header if line.startswith("  started"))
    assert "T" not in started.split()[1] and "." not in started.split()[2]  # to the second, not raw ISO
    frame = report.summary_frame()
    distinct = {note for note in frame.note if note}
    notes = [line for line in out.splitlines() if line.startswith("  - ") and any(n in line for n in distinct)]
    assert len(notes) == len(distinct) < sum(1 for note in frame.note if note)  # grouped, each once
    assert all("(" in line for line in notes)  # each says where it applies


def test_show_filters_modes_and_metrics_and_suggests_the_name_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", NORMAL, "--modes", "sql_text_search", "--metrics", "beir_ndcg@3,answer_contains"]) == 0
    table = capsys.readouterr().out.split("\n\n")[1].splitlines()
    assert len(table) == 3 and all(" sql_text_search " in f" {row} " for row in table[1:])
    assert main(["show", NORMAL, "--metrics", "beir_ndgc@3"]) == 1
    assert capsys.readouterr().err == "heta-nb: error: unknown metric 'beir_ndgc@3'; did you mean 'beir_ndcg@3'?\n"
    assert main(["show", NORMAL, "--modes", "sql_txt_search"]) == 1
    assert capsys.readouterr().err == "heta-nb: error: unknown mode 'sql_txt_search'; did you mean 'sql_text_search'?\n"
    assert main(["show", NORMAL, "--modes", "zzz"]) == 1
    assert "unknown mode 'zzz'; the report has 'full_text_search'" in capsys.readouterr().err


def test_compare_names_the_metric_or_mode_meant(capsys: pytest.CaptureFixture[str]) -> None:
    modes = "full_text_search,sql_text_search"
    assert main(["compare", NORMAL, "--modes", modes, "--metrics", "beir_ndgc@3"]) == 1
    assert capsys.readouterr().err == "heta-nb: error: unknown metric 'beir_ndgc@3'; did you mean 'beir_ndcg@3'?\n"
    assert main(["compare", NORMAL, "--modes", "full_text_search,sql_txt_search"]) == 1
    assert capsys.readouterr().err == "heta-nb: error: unknown mode 'sql_txt_search'; did you mean 'sql_text_search'?\n"
    with pytest.raises(ValueError, match="unknown metric 'beir_ndgc@3'; did you mean 'beir_ndcg@3'"):
        heta_nb.compare(heta_nb.load_report(NORMAL), metrics="beir_ndgc@3")  # the library says the same


def test_comparing_a_report_with_itself_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", NORMAL, NORMAL, "--metrics", "beir_ndcg@3"]) == 0
    err = capsys.readouterr().err
    assert "'fixture-normal' and 'fixture-normal#2' are the same report" in err and err.count("same report") == 1
    report = heta_nb.load_report(NORMAL)
    with pytest.warns(heta_nb.comparison.HetaComparisonWarning, match="same report"):
        comparison = heta_nb.compare(report, report, modes="full_text_search")
    assert any("same report" in warning for warning in comparison.warnings)
    other = heta_nb.load_report({**report.to_dict(), "report_id": "other"})
    assert not any("same report" in w for w in heta_nb.compare(report, other, modes="full_text_search").warnings)


def test_list_counts_results_and_shows_times_to_the_second(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    heta_nb.ReportStore(tmp_path / "store").save(heta_nb.load_report(NORMAL))
    assert main(["list", str(tmp_path / "store")]) == 0
    head, row = capsys.readouterr().out.splitlines()
    assert " results " in f" {head} " and " cases " not in f" {head} " and "started (UTC)" in head
    started = heta_nb.load_report(NORMAL).started_at
    assert started[:10] in row and started not in row  # no raw ISO time with microseconds


def test_a_store_folder_given_as_a_report_says_how_to_name_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "demo-store"
    heta_nb.ReportStore(folder).save(heta_nb.load_report(NORMAL))
    assert main(["show", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"heta-nb: error: {folder}: is a report store, not a report; name a report in it as ")
    example = f"{folder}:lighthouse_mini/fixture-normal"
    assert f"e.g. '{example}'" in err and f"`heta-nb list {folder}` lists them" in err and err.count("\n") == 1
    assert main(["show", example]) == 0  # the example given works
    assert main(["html", str(folder), "-o", str(tmp_path / "x.html")]) == 1  # every command says the same
    assert "is a report store, not a report" in capsys.readouterr().err
