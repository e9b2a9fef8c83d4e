"""What a person sees in a real JupyterLab 4: plots as images, a bar that moves, a Cancel that works.

- ``notebooks/02-explore-a-report.ipynb`` runs in Lab and every plot cell shows an image
  with a nonzero natural size (not ``<Figure size 800x370 with 1 Axes>``);
- the demo's two recipes run with blocking ``heta_nb.evaluate()`` calls: the first one's
  bar takes at least 10 distinct widths; during the second, a click on Cancel stops it
  early with a partial report, and the cell queued behind it (Run All) still runs, after it.
Screenshots go to test-artifacts/plots-*.png and widget-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jupyter_browser import open_notebook, read_samples, run_all_cells, start_width_sampler, wait_all_cells_executed
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
BAR = ".jp-OutputArea-output .heta-progress-main .progress-bar"

# Every code cell of the notebook in front whose source calls a plot function: its images.
PLOT_IMAGES = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets
    .filter(cell => cell.model.type === 'code' && cell.model.sharedModel.getSource().includes('heta_nb.plots.plot_'))
    .map(cell => ({
      source: cell.model.sharedModel.getSource(),
      texts: [...cell.node.querySelectorAll('.jp-OutputArea-output pre')].map(p => p.textContent.slice(0, 80)),
      // the images shown (a plot's dark copy waits, hidden, for a dark theme)
      images: [...cell.node.querySelectorAll('.jp-OutputArea-output img')]
        .filter(img => img.offsetParent !== null).map(img => {
        const box = img.getBoundingClientRect();
        return {natural: [img.naturalWidth, img.naturalHeight], shown: [box.width, box.height], complete: img.complete};
      }),
    }));
}"""


@pytest.mark.slow
def test_every_plot_cell_of_the_explore_notebook_shows_an_image(page, jupyter_server, artifacts_dir: Path) -> None:
    pytest.importorskip("heta_framework")
    name = jupyter_server.add_notebook(ROOT / "notebooks" / "02-explore-a-report.ipynb")
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    wait_all_cells_executed(page, timeout=300_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    cells = page.evaluate(PLOT_IMAGES)
    assert len(cells) >= 3, cells
    for cell in cells:
        assert len(cell["images"]) == 1, cell  # one image each, no "<Figure size ...>" text instead
        image = cell["images"][0]
        assert image["complete"] and image["natural"][0] > 300 and image["natural"][1] > 150, cell
        assert image["shown"][0] > 300 and image["shown"][1] > 150, cell  # laid out, not 0x0
        assert not any(text.startswith("<Figure size") for text in cell["texts"]), cell
    images = page.locator(".jp-OutputArea-output img:visible")
    for index in range(images.count()):
        images.nth(index).scroll_into_view_if_needed()
        images.nth(index).screenshot(path=str(artifacts_dir / f"plots-lab-explore-{index}.png"))
    expect(
        page.locator(".jp-OutputArea-output [data-mime-type='application/vnd.jupyter.stderr']", has_text="Traceback")
    ).to_have_count(0)


SETUP = """
import tempfile
from pathlib import Path

import heta_nb
from heta_nb import demo

work = Path(tempfile.mkdtemp(prefix="heta-widget-"))
benchmark = demo.load_benchmark()
recipes = demo.recipes(work / "kbs")
settings = dict(query_engines=demo.demo_query_engines(), query_modes=list(demo.DEMO_MODES),
                evaluators=list(demo.DEMO_EVALUATORS), knowledge_base_name="saltmarsh isles", top_k=5, store=None)
total = len(demo.DEMO_MODES) * len(benchmark.cases)
"""

SECOND_BAR_SAMPLER = """(sel) => {
  const s = window.__second = [];
  setInterval(() => {
    const el = document.querySelectorAll(sel)[1];
    if (!el || !el.style.width) return;
    const v = parseFloat(el.style.width);
    if (!s.length || s[s.length - 1] !== v) s.push(v);
  }, 20);
}"""


@pytest.mark.slow
def test_the_bar_follows_cases_and_cancel_stops_a_blocking_evaluate(page, jupyter_server, artifacts_dir: Path) -> None:
    pytest.importorskip("heta_framework")
    name = jupyter_server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            SETUP,
            'small = heta_nb.evaluate(benchmark, recipe=recipes["small-chunks"], report_id="small", **settings)',
            'large = heta_nb.evaluate(benchmark, recipe=recipes["large-chunks"], report_id="large", **settings)',
            'print("large:", large.metadata["heta_nb"]["status"], len(large.case_results), "of", total)',
        ]
    )
    open_notebook(page, jupyter_server, name, ui="lab")
    start_width_sampler(page, BAR, "first")
    page.evaluate(SECOND_BAR_SAMPLER, BAR)
    run_all_cells(page)

    # the first run: the bar follows finished cases, not 32-case batches
    first_bar = page.locator(BAR).first
    expect(first_bar).to_have_attribute("style", re.compile(r"width: 100%"), timeout=180_000)
    widths = [s["v"] for s in read_samples(page, "first")]
    assert widths == sorted(widths) and widths[-1] == 100
    assert len(set(widths)) >= 10, widths

    # the second run blocks the kernel in evaluate(); Cancel is shown and works
    second = page.locator(BAR).nth(1)
    second.wait_for(timeout=120_000)
    page.wait_for_function(
        "(sel) => { const el = document.querySelectorAll(sel)[1];"
        " const v = el ? parseFloat(el.style.width) : 0; return v > 0 && v < 60; }",
        arg=BAR,
        timeout=120_000,
    )
    cancel = page.locator(".heta-cancel").nth(1)
    expect(cancel).to_be_visible()
    page.locator(".heta-run").nth(1).scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "widget-lab-before-cancel.png"))
    cancel.click()
    printed = page.locator(".jp-OutputArea-output pre", has_text="large: ")
    expect(printed).to_be_visible(timeout=60_000)  # the queued cell ran after the cancelled one
    match = re.search(r"large: (\w+) (\d+) of (\d+)", printed.inner_text())
    assert match is not None and match.group(1) == "cancelled", printed.inner_text()
    done, total = int(match.group(2)), int(match.group(3))
    assert 0 < done < total  # ended early, with the finished cases
    expect(page.locator(".jp-OutputArea-output .heta-progress-main .progress-bar-danger")).to_have_count(1)
    second_widths = page.evaluate("() => window.__second")
    assert 0 < second_widths[-1] < 100, second_widths
    wait_all_cells_executed(page)
    page.locator(".heta-run").nth(1).scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "widget-lab-cancelled.png"))
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert page.js_errors == []
