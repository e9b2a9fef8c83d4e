"""``heta-nb leaderboard STORE``: the board of a store's reports, printed or written as HTML, a notebook or CSV."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.cli import main


def second_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """exact_kb with the first two results swapped: worse on recall@1."""
    response = exact_kb(query, mode=mode, top_k=top_k)
    results = response["results"]
    response["results"] = [results[1], results[0], *results[2:]]
    return response


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("board-store")
    heta_nb.sweep(
        {"toy": toy_benchmark(20)}, kbs={"exact": exact_kb, "swapped": second_kb}, store=folder, executor="serial",
        progress=False, query_modes="good", evaluators=["recall@1", "answer_contains"], top_k=3,
    )  # fmt: skip
    return folder


def test_prints_the_board(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", str(store)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Leaderboard: 2 recipe(s) × 1 benchmark(s) × 2 metric(s), mode good; baseline exact")
    assert "swapped on toy recall@1: -1.000" in out
    assert main(["leaderboard", str(store), "--baseline", "swapped", "--metrics", "recall@1"]) == 0
    out = capsys.readouterr().out
    assert "baseline swapped" in out and "exact on toy recall@1: +1.000" in out and "answer_contains" not in out


def test_writes_html_notebook_and_csv(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", str(store), "-o", str(tmp_path / "board.html")]) == 0
    assert 'data-testid="heta-leaderboard"' in (tmp_path / "board.html").read_text(encoding="utf-8")
    assert main(["leaderboard", str(store), "--sweep", "sweep", "-o", str(tmp_path / "board.ipynb")]) == 0
    notebook = nbformat.read(tmp_path / "board.ipynb", as_version=4)
    nbformat.validate(notebook)
    assert f"from_store({str(store)!r}, sweep='sweep')" in notebook.cells[1].source
    assert main(["leaderboard", str(store), "-o", str(tmp_path / "board.csv")]) == 0
    frame = pd.read_csv(tmp_path / "board.csv")
    assert len(frame) == 4 and set(frame["recipe"]) == {"exact", "swapped"}
    # an existing file is kept unless --force
    assert main(["leaderboard", str(store), "-o", str(tmp_path / "board.csv")]) == 1
    assert "already exists; --force replaces it" in capsys.readouterr().err
    assert main(["leaderboard", str(store), "-o", str(tmp_path / "board.csv"), "--force"]) == 0


def test_errors_are_one_line(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", str(tmp_path / "nothing")]) == 1
    assert "nothing: no such folder" in capsys.readouterr().err
    assert main(["leaderboard", str(store), "--baseline", "nope"]) == 1
    assert "baseline 'nope' is not a recipe of the board; recipes: ['exact', 'swapped']" in capsys.readouterr().err
    assert main(["leaderboard", str(store), "--sweep", "other"]) == 1
    assert "no report of sweep 'other'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["leaderboard", str(store), "-o", str(tmp_path / "board.pdf")])
    assert stop.value.code == 2
    assert "unknown output format '.pdf'; use .html, .ipynb or .csv" in capsys.readouterr().err
    empty = tmp_path / "empty"
    heta_nb.ReportStore(empty).save(heta_nb.load_report(json.dumps(_report_without_sweep(store))))
    assert main(["leaderboard", str(empty)]) == 0  # reports a sweep did not write still go on a board
    assert "exact" in capsys.readouterr().out


def _report_without_sweep(store: Path) -> dict[str, Any]:
    report = heta_nb.ReportStore(store).load("exact", "sweep--toy").to_dict()
    report["metadata"].pop("sweep")
    return report
