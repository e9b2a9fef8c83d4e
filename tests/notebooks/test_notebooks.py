"""The shipped notebooks: stored clean, generated, executed."""

from __future__ import annotations

import importlib.util
import math
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


# Time budget per notebook on this 2-core machine (KB builds dominate: Heta's ParseDocuments
# tries to download a tokenizer for every document offline, about 0.13 s each).
BUDGET_S = {
    "01-quickstart.ipynb": 150,
    "02-explore-a-report.ipynb": 180,
    "03-your-own-kb.ipynb": 120,
    "04-scale-out.ipynb": 180,
}


def test_there_are_four_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == list(BUDGET_S)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_without_outputs(path: Path) -> None:
    """The nbstripout rule: no outputs, no execution counts, no widget state."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        assert cell.get("id"), "every cell has a stable id"
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    assert "widgets" not in notebook.metadata


def test_generator_and_files_agree(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_notebooks", ROOT / "notebooks" / "make_notebooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for path in NOTEBOOKS:
        assert (tmp_path / path.name).read_text() == path.read_text(), f"run notebooks/make_notebooks.py ({path.name})"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    pytest.importorskip("heta_framework")
    from nbclient import NotebookClient

    work = tmp_path / "run"
    work.mkdir()
    shutil.copy(path, work / path.name)
    notebook = nbformat.read(work / path.name, as_version=4)
    started = time.monotonic()
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    elapsed = time.monotonic() - started
    print(f"{path.name}: executed in {elapsed:.1f} s (budget {BUDGET_S[path.name]} s)")
    assert elapsed < BUDGET_S[path.name]
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html = "\n".join(o.get("data", {}).get("text/html", "") for o in outputs)
    if path.name == "01-quickstart.ipynb":
        assert 'data-testid="heta-report"' in html and 'data-testid="heta-comparison"' in html
        assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
        # the explorers: a widget each, with the static report / comparison as the text/html fallback
        fallbacks = [
            o["data"].get("text/html", "")
            for o in outputs
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {}) and "text/html" in o["data"]
        ]
        assert any('data-testid="heta-report"' in h for h in fallbacks)
        assert any('data-testid="heta-comparison"' in h for h in fallbacks)
    if path.name == "02-explore-a-report.ipynb":
        assert "written-by-heta" in html
        (listing,) = [c for c in notebook.cells if c.cell_type == "code" and c.source.startswith("%heta_runs {recipe")]
        shown = "\n".join(str(v) for o in listing.outputs for v in o.get("data", {}).values())
        assert "written-by-heta" in shown  # the store Heta wrote to lists its report
        plot_cells = [c for c in notebook.cells if c.cell_type == "code" and "heta_nb.plots.plot_" in c.source]
        assert len(plot_cells) >= 3
        for cell in plot_cells:  # an image, not "<Figure size 800x370 with 1 Axes>"
            shown_types = [set(o.get("data", {})) for o in cell.outputs]
            assert any({"image/png", "image/svg+xml"} & types for types in shown_types), (cell.source, shown_types)
    if path.name == "03-your-own-kb.ipynb":
        texts = "\n".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
        assert "True)" in texts and "'complete'" in texts
        # "A custom evaluator": real means (a function KB's list of dicts reaches it as a QueryResponse)
        (custom,) = [c for c in notebook.cells if c.cell_type == "code" and "def distinct_documents" in c.source]
        table = "\n".join(o.get("data", {}).get("text/html", "") for o in custom.outputs)
        for metric in ("distinct_documents", "top_overlap"):
            row = re.search(rf"<td>{metric}</td>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>", table)
            assert row is not None, (metric, table)
            mean, n = float(row[1]), int(row[2])
            assert math.isfinite(mean) and mean >= 1 and n > 0, (metric, row[0])
    if path.name == "04-scale-out.ipynb":
        assert 'data-testid="heta-sweep"' in html and 'data-testid="heta-leaderboard"' in html
        assert html.count('data-phase="done"') == 6 and html.count('data-phase="reused"') == 6
        texts = "\n".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", "")) for o in outputs)
        assert "same board: True" in texts and "Leaderboard: 3 recipe(s)" in texts
