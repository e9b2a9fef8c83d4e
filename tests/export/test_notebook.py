"""Notebook sections and notebooks (nbformat)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.notebook import md_escape


def test_sections_are_valid_cells_with_html_and_text() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    cells = heta_nb.sections(report, source="report.json")
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("## Evaluation report fixture\\-normal")
    code = [c for c in cells if c.cell_type == "code"]
    assert code[0].source.startswith("import heta_nb") and "load_report('report.json')" in code[0].source
    for cell in code:
        data = cell.outputs[0]["data"]
        assert "text/plain" in data
        assert "text/html" in data or "image/svg+xml" in data
    nbformat.validate(nbformat.v4.new_notebook(cells=cells))


@pytest.mark.hostile
def test_markdown_escapes_untrusted_text() -> None:
    assert md_escape("<img src=x onerror=alert(1)> *bold* [link](javascript:x)") == (
        "&lt;img src=x onerror=alert\\(1\\)&gt; \\*bold\\* \\[link\\]\\(javascript:x\\)"
    )
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    data["knowledge_base_name"] = "kb <script>alert(1)</script>"
    cells = heta_nb.sections(heta_nb.load_report(data))
    assert "<script>" not in cells[0].source and "&lt;script&gt;" in cells[0].source


def test_to_notebook_is_deterministic_and_valid(tmp_path: Path) -> None:
    report = heta_nb.load_report(FIXTURES / "report-errors.json")
    first = tmp_path / "a" / "report.ipynb"
    second = tmp_path / "b" / "report.ipynb"
    heta_nb.to_notebook(report, first)
    heta_nb.to_notebook(report, second)
    assert first.read_text() == second.read_text()  # ids and outputs are deterministic
    notebook = nbformat.read(first, as_version=4)
    nbformat.validate(notebook)
    assert all(cell.id.startswith("heta-") for cell in notebook.cells)
    companion = first.parent / "report.report.json"
    assert heta_nb.load_report(companion) == report


@pytest.mark.slow
def test_executing_the_exported_notebook_reproduces_its_outputs(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    path = tmp_path / "report.ipynb"
    stored = heta_nb.to_notebook(report, path)
    executed = nbformat.read(path, as_version=4)
    for cell in executed.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    NotebookClient(
        executed, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    for before, after in zip(stored.cells, executed.cells):
        if before.cell_type != "code":
            continue
        old = before.outputs[0]["data"]
        new = next(o for o in after.outputs if o.get("output_type") in ("execute_result", "display_data"))["data"]
        assert set(old) <= set(new), before.source
        for mime in ("text/plain", "text/html", "image/svg+xml"):
            if mime in old:
                assert new[mime] == old[mime], f"{before.source!r}: {mime} differs"
