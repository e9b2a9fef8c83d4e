"""Every widget heta_nb displays reads well where widgets do not run (nbconvert, nbviewer, GitHub).

A small notebook is executed for real (nbclient): a blocking evaluation with the live widget,
a sweep with its live table, the explorer of a report store before a report is chosen and of
a report. Each widget output must carry our own ``text/plain`` (a readable line, never the
widget's repr) and a ``text/html`` saying what was there; the notebook, exported to HTML
without widget state (as GitHub and nbviewer show it), must show no widget repr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

TESTS = Path(__file__).resolve().parents[1]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
REPRS = ("VBox(", "HBox(", "HTML(value=", "IntProgress(", "<Explorer", "IPython.core.display.HTML object")
"""What a widget's (or a bare ``IPython.display.HTML``'s) repr looks like: never shown as text."""

SETUP = f"""\
import sys
sys.path.insert(0, {str(TESTS)!r})
import heta_nb
from heta_nb.store import ReportStore
from runner_support import toy_benchmark

def kb(query, *, mode, top_k):
    doc = int(query.rstrip("?").split()[-1])
    key = f"raw/benchmarks/toy/test/d{{doc}}/d{{doc}}.txt"
    results = [{{"id": f"c{{doc}}", "text": f"answer{{doc}}", "score": 1.0, "source": {{"object_key": key}}}}]
    return {{"mode": mode, "results": results, "answer": f"answer{{doc}}"}}

bench = toy_benchmark(6)
SETTINGS = dict(query_modes=["good"], evaluators=["recall@1", "answer_contains"], top_k=3)
"""

CELLS = {
    "setup": SETUP,
    "evaluate": 'report = heta_nb.evaluate(bench, kb=kb, store="store", report_id="live", progress=True, **SETTINGS)',
    "sweep": 'board = heta_nb.sweep({"toy": bench}, kbs={"one": kb, "two": kb}, store="swept", executor="threads",'
    " progress=True, **SETTINGS)",
    "store": 'heta_nb.explore(ReportStore("store"))',
    "report": "heta_nb.explore(report)",
}


def _notebook() -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("%load_ext heta_nb")]
    notebook.cells += [nbformat.v4.new_code_cell(source, metadata={"name": name}) for name, source in CELLS.items()]
    return notebook


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from nbclient import NotebookClient

    work = tmp_path_factory.mktemp("static-widgets")
    notebook = _notebook()
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    # as it is saved from a kernel that saves no widget state (nbclient keeps it apart): what GitHub shows
    notebook.metadata.pop("widgets", None)
    return notebook


def _outputs(notebook: Any, name: str) -> list[dict[str, Any]]:
    (cell,) = [c for c in notebook.cells if c.metadata.get("name") == name]
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert not errors, errors
    return [o for o in cell.outputs if o.output_type in ("display_data", "execute_result")]


def _widgets(notebook: Any, name: str) -> list[dict[str, Any]]:
    return [o["data"] for o in _outputs(notebook, name) if WIDGET_VIEW in o["data"]]


def test_no_output_reads_as_a_widget_repr(executed: Any) -> None:
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            text = str(output.get("data", {}).get("text/plain", ""))
            assert not [r for r in REPRS if r in text], (cell.source[:40], text[:200])
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(executed)
    shown = [r for r in ("VBox(", "HBox(", "HTML(value=", "IntProgress(", "IPython.core.display.HTML") if r in html]
    assert not shown, shown


def test_every_widget_output_has_a_text_and_html_fallback(executed: Any) -> None:
    for name in ("evaluate", "sweep", "store", "report"):
        widgets = _widgets(executed, name)
        assert widgets, f"{name}: no widget shown"
        for data in widgets:
            assert data.get("text/plain", "").strip(), (name, data)
            assert data.get("text/html", "").strip(), (name, data)


def test_the_run_widget_ends_on_its_final_line_and_the_report_follows(executed: Any) -> None:
    (widget,) = _widgets(executed, "evaluate")
    line = widget["text/plain"]
    assert line.startswith("heta_nb evaluation of 'kb' on toy (test): ") and line.endswith("the report is below")
    assert "6/6 results" in line and "complete" in line, line
    assert "6/6 results" in widget["text/html"] and "complete" in widget["text/html"]
    reports = [o["data"] for o in _outputs(executed, "evaluate") if WIDGET_VIEW not in o["data"]]
    assert any('data-testid="heta-report"' in d.get("text/html", "") for d in reports)
    assert any(d.get("text/plain", "").startswith("EvaluationReport live") for d in reports)  # its summary


def test_the_sweep_widget_ends_on_its_summary_and_the_table_follows(executed: Any) -> None:
    (widget,) = _widgets(executed, "sweep")
    assert widget["text/plain"].startswith("sweep: 2/2 finished"), widget["text/plain"]
    assert "2/2 finished" in widget["text/html"]
    tables = [o["data"] for o in _outputs(executed, "sweep") if WIDGET_VIEW not in o["data"]]
    assert any("one" in d.get("text/html", "") and "two" in d.get("text/html", "") for d in tables)
    assert all(d.get("text/plain", "").startswith("sweep: 2/2 finished") for d in tables)


def test_the_explorers_read_as_what_they_show(executed: Any) -> None:
    (store,) = _widgets(executed, "store")
    assert "report store" in store["text/plain"] and "choose one of 1 report," in store["text/plain"]
    assert "kb / live · 6 results" in store["text/plain"]
    assert 'data-testid="heta-store"' in store["text/html"]
    (report,) = _widgets(executed, "report")
    assert "6 of 6 match" in report["text/plain"] and "EvaluationReport live" in report["text/plain"]
    assert 'data-testid="heta-report"' in report["text/html"]
