"""The case explorer's table in a real JupyterLab 4: wider than the output area, it scrolls in
its own box (the widget, the notebook and the page do not), directly and nested in widget
boxes. (The explorer's script in every client: test_one_explorer.py.) Screenshots go to
test-artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

KNOWN_JS_ERRORS = {"notebook": [re.compile(r"Cannot read properties of undefined \(reading 'schema'\)")], "lab": []}
METRIC = "answer_f1"


FITS = """(index) => {
  const shown = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output";
  const root = document.querySelectorAll(shown + " [data-testid='heta-explorer']")[index];
  const output = root.closest('.jp-OutputArea-output').getBoundingClientRect();
  const box = root.getBoundingClientRect();
  const scroll = root.querySelector('.hx-scroll');
  const table = root.querySelector('.hx-table').getBoundingClientRect();
  const view = document.documentElement.clientWidth;
  const area = root.closest('.jp-WindowedPanel-outer, .jp-Notebook');
  scroll.scrollLeft = scroll.scrollWidth;  // the last column is reachable inside the box
  const last = root.querySelector('.hx-table thead th:last-child').getBoundingClientRect();
  scroll.scrollLeft = 0;
  return {outputRight: output.right, rootRight: box.right, rootWidth: box.width, outputWidth: output.width,
          scrollRight: scroll.getBoundingClientRect().right, scrollWidth: scroll.scrollWidth,
          clientWidth: scroll.clientWidth, tableWidth: table.width,
          notebookScroll: area ? area.scrollWidth - area.clientWidth : 0,
          lastRight: last.right, lastLeft: last.left, scrollLeftEdge: scroll.getBoundingClientRect().left,
          pageScroll: document.scrollingElement.scrollWidth - view};
}"""


@pytest.mark.slow
def test_a_wide_report_table_stays_inside_its_lab_output_area(browser, jupyter_server, artifacts_dir: Path) -> None:
    """At 1400 px with the file browser open the explorer's table is wider than the output
    area: it scrolls inside its own box; the widget, the notebook and the page do not."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "heta-0.1.2" / "report-normal.json"
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.js_errors = []
    try:
        name = jupyter_server.add_notebook_from_sources(
            [
                f"import heta_nb\nreport = heta_nb.load_report(r'{fixture}')\nreport.explore()",
                # nested in widget boxes, as the live run widget shows it ("Explore results so far")
                "import ipywidgets as w\n"
                "inner = w.VBox([report.explore().widget], layout=w.Layout(width='100%'))\n"
                "w.VBox([inner], layout=w.Layout(width='100%', max_width='1100px'))",
            ]
        )
        open_notebook(page, jupyter_server, name, ui="lab")
        page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
        run_all_cells(page)
        wait_all_cells_executed(page)
        root = page.locator(".jp-OutputArea-output [data-testid='heta-explorer']")
        expect(root.first.locator("tbody tr").first).to_be_visible(timeout=30_000)
        assert page.locator(".jp-FileBrowser").first.is_visible()
        expect(root.first.locator("td", has_text="n/a").first).to_be_visible()  # not a cross
        expect(root).to_have_count(2)
        for index, label in enumerate(("direct", "nested")):
            expect(root.nth(index).locator("tbody tr").first).to_be_visible(timeout=30_000)
            root.nth(index).scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts_dir / f"explorer-lab-wide-report-{label}.png"))
            fits = page.evaluate(FITS, index)
            assert fits["scrollWidth"] > fits["clientWidth"], f"{label}: the table fits anyway {fits}"
            assert fits["rootRight"] <= fits["outputRight"] + 1, (label, fits)
            assert fits["scrollRight"] <= fits["outputRight"] + 1, (label, fits)
            assert fits["notebookScroll"] <= 1 and fits["pageScroll"] <= 1, (label, fits)
            assert fits["scrollLeftEdge"] <= fits["lastLeft"] and fits["lastRight"] <= fits["scrollRight"] + 1, fits
    finally:
        context.close()
        jupyter_server.shutdown_kernels()
