"""What a person sees of reports and comparisons: in JupyterLab 4 and in the standalone exports.

- ``notebooks/01-quickstart.ipynb`` and ``02-explore-a-report.ipynb`` run in a real JupyterLab
  at 1400 px with the file browser open: every inline SVG of every output has a nonzero box
  (the comparison's CI bars were 0x0), no output scrolls the page sideways, and the key
  columns (the score summary's last metric, the comparison's verdict) are inside the
  visible output area;
- the demo's exported report is no larger than its report.json (the exported pages' explorer
  at 1400 and 400 px, light and dark: test_one_explorer.py).
Screenshots go to test-artifacts/views-*.png.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed

ROOT = Path(__file__).resolve().parents[2]

# Boxes of what must be seen, measured in the page (any client: Lab or a standalone file).
MEASURE = """(scope) => {
  const root = scope ? document.querySelector(scope) : document;
  const view = document.documentElement.clientWidth;
  const svgs = [...root.querySelectorAll('.heta-report svg')].map(s => {
    const b = s.getBoundingClientRect(); return {w: b.width, h: b.height, cls: s.getAttribute('class') || ''};
  });
  const inside = (el) => {
    if (!el) return null;
    const b = el.getBoundingClientRect();
    let box = el.closest('.heta-scroll, .jp-OutputArea-output, .heta-page') || document.body;
    const c = box.getBoundingClientRect();
    const cell = el.closest('.jp-Cell');
    const source = cell ? cell.querySelector('.jp-InputArea-editor').textContent.slice(0, 60) : '';
    return {right: b.right, left: b.left, boxRight: c.right, view: view, text: el.textContent.slice(0, 40), source};
  };
  const summaries = [...root.querySelectorAll('table.heta-summary-t')]
    .map(t => inside(t.querySelector('thead th:last-child')));
  const verdicts = [...root.querySelectorAll('[data-testid=heta-comparison-table] td.heta-verdict')].map(inside);
  return {svgs, summaries, verdicts, pageScroll: document.scrollingElement.scrollWidth - view};
}"""


def _check_views(measured: dict, *, keys: bool) -> None:
    assert measured["pageScroll"] <= 1, measured["pageScroll"]  # no output scrolls the page sideways
    for svg in measured["svgs"]:
        assert svg["w"] > 0 and svg["h"] > 0, measured["svgs"]
    for key in measured["summaries"] + measured["verdicts"] if keys else ():
        # inside the visible output area (its scroll box, the output, the page) and the window
        assert key["right"] <= key["boxRight"] + 1 and key["right"] <= key["view"] + 1, key


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("heta_framework")
    import heta_nb
    from heta_nb import demo
    from heta_nb.export import to_html

    work = tmp_path_factory.mktemp("views")
    demo.run_demo(work / "output", work / "store", progress=False)
    store = heta_nb.ReportStore(work / "store")
    small = store.load("saltmarsh isles", "small-chunks")
    large = store.load("saltmarsh isles", "large-chunks")
    benchmark = demo.load_benchmark()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(small, large)
    paths = {"report": work / "report.html", "comparison": work / "comparison.html"}
    to_html(small, paths["report"], benchmark=benchmark)
    to_html(comparison, paths["comparison"], benchmark=benchmark)
    evaluations = Path(store.location) / "_heta/knowledge_bases/saltmarsh_isles/evaluations"
    paths["report.json"] = evaluations / "small-chunks/report.json"
    return paths


def test_the_exported_report_is_no_larger_than_its_report_json(exports: dict[str, Path]) -> None:
    assert exports["report"].stat().st_size <= exports["report.json"].stat().st_size


LAB_OUTPUTS = """() => [...document.querySelectorAll('.jp-OutputArea-output')]
  .filter(o => o.querySelector('.heta-report')).length"""


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["01-quickstart.ipynb", "02-explore-a-report.ipynb"])
def test_reports_fit_the_lab_output_area_with_the_file_browser_open(
    browser, jupyter_server, artifacts_dir: Path, notebook: str
) -> None:
    pytest.importorskip("heta_framework")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.js_errors = []
    page.jupyter_server = None
    try:
        name = jupyter_server.add_notebook(ROOT / "notebooks" / notebook)
        open_notebook(page, jupyter_server, name, ui="lab")
        page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
        run_all_cells(page)
        wait_all_cells_executed(page, timeout=400_000)
        page.wait_for_timeout(1000)
        assert page.locator(".jp-FileBrowser").first.is_visible()
        assert page.evaluate(LAB_OUTPUTS) >= 1
        outputs = page.locator(".jp-OutputArea-output:has(.heta-report)")
        for index in range(min(outputs.count(), 8)):
            outputs.nth(index).evaluate("node => node.scrollIntoView({block: 'start'})")
            page.screenshot(path=str(artifacts_dir / f"views-lab-{notebook[:2]}-{index}.png"))
        page.screenshot(path=str(artifacts_dir / f"views-lab-{notebook[:2]}-window.png"))
        measured = page.evaluate(MEASURE, ".jp-NotebookPanel:not(.lm-mod-hidden)")
        assert measured["svgs"], "no inline SVG in the outputs"
        _check_views(measured, keys=True)
    finally:
        context.close()
        jupyter_server.shutdown_kernels()


IMAGES = """(scope) => [...document.querySelector(scope).querySelectorAll('.jp-OutputArea-output img')]
  .filter(i => i.offsetParent !== null)  // shown (a plot's dark copy waits, hidden, for a dark theme)
  .map(i => ({src: (i.getAttribute('src') || '').slice(0, 40), w: i.naturalWidth, h: i.naturalHeight}))"""

SIDEWAYS = """(scope) => [...document.querySelector(scope).querySelectorAll('.jp-WindowedPanel-outer, .jp-Notebook')]
  .map(e => e.scrollWidth - e.clientWidth)"""


@pytest.mark.slow
def test_the_quickstart_fits_notebook_7(browser, notebook_server, artifacts_dir: Path) -> None:
    """The quickstart in Notebook 7 at 1400 px: every inline SVG has a box, no output scrolls the
    page or the notebook sideways, the key columns are inside the output area, plot images load."""
    pytest.importorskip("heta_framework")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.js_errors = []
    page.jupyter_server = None
    scope = ".jp-NotebookPanel"
    try:
        import nbformat

        notebook = nbformat.read(ROOT / "notebooks" / "01-quickstart.ipynb", as_version=4)
        # the quickstart draws no plot: one plot cell after it (a Figure made without pyplot)
        notebook.cells.append(nbformat.v4.new_code_cell('heta_nb.plots.plot_scores(small, "recall@5").figure'))
        name = "quickstart-nb7.ipynb"
        nbformat.write(notebook, notebook_server.root / name)
        open_notebook(page, notebook_server, name, ui="notebook")
        run_all_cells(page)
        wait_all_cells_executed(page, timeout=400_000)
        page.wait_for_timeout(1000)
        assert page.evaluate(LAB_OUTPUTS) >= 1, "no report output in Notebook 7"
        outputs = page.locator(".jp-OutputArea-output:has(.heta-report)")
        for index in range(min(outputs.count(), 8)):
            outputs.nth(index).evaluate("node => node.scrollIntoView({block: 'start'})")
            page.screenshot(path=str(artifacts_dir / f"views-nb7-01-{index}.png"))
        measured = page.evaluate(MEASURE, scope)
        assert measured["svgs"], "no inline SVG in the outputs"
        _check_views(measured, keys=True)
        assert all(extra <= 1 for extra in page.evaluate(SIDEWAYS, scope)), page.evaluate(SIDEWAYS, scope)
        page.wait_for_function(
            f"() => [...document.querySelectorAll('{scope} .jp-OutputArea-output img')].every(i => i.complete)"
        )
        images = page.evaluate(IMAGES, scope)
        assert images, "the plot cell shows no image"
        for image in images:
            assert image["w"] > 0 and image["h"] > 0, image  # a plot that shows, not a broken image
        page.locator(".jp-OutputArea-output img:visible").last.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / "views-nb7-01-plot.png"))
    finally:
        context.close()
        notebook_server.shutdown_kernels()
