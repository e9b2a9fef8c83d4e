"""Why it changed, seen in a real JupyterLab 4 and on the exported page: the comparison opens with
the stage lines, a table of stage counts, the slices that moved and each test's "detects ≥"
column, all laid out (boxes with a size, nothing clipped, the column in view); on the page a
stage count opens the explorer filtered to those cases; in the notebook's explorer the label
``stage = retrieval`` does the same. Screenshots: test-artifacts/why-*.png.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from comparison.why_cases import bench, kb_with, run
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

import heta_nb

pytestmark = pytest.mark.browser

TESTS = Path(__file__).resolve().parents[1]
"""The tests folder: the notebook's kernel imports the same benchmark from it."""


@pytest.fixture(scope="module")
def why(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A baseline and a recipe that loses retrieval on a third of the cases and answers worse on a
    fifth: their JSON files, the comparison, its exported page."""
    work = tmp_path_factory.mktemp("why-views")
    base = run("baseline", kb_with("", lambda i: False))
    worse = run("worse", kb_with("retrieval", lambda i: i % 3 == 0))
    paths = {}
    for report in (base, worse):
        paths[report.report_id] = work / f"{report.report_id}.json"
        paths[report.report_id].write_text(report.to_json(), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(base, worse, benchmark=bench())
    page = heta_nb.to_html(comparison, work / "why.html", benchmark=bench())
    stages = comparison.stages()
    retrieval = stages[(stages["system"] == "worse/answer") & (stages["stage"] == "retrieval")]
    return {"paths": paths, "page": page, "comparison": comparison, "retrieval": len(retrieval)}


LAYOUT = """(root) => {
  const why = root.querySelector('[data-testid=heta-comparison-why]');
  const table = root.querySelector('[data-testid=heta-comparison-table]');
  const box = (el) => {
    const b = el.getBoundingClientRect();
    return {width: b.width, height: b.height, left: b.left, right: b.right};
  };
  const clipped = [...why.querySelectorAll('*')].filter((el) => el.offsetParent !== null
      && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'hidden').map((el) => el.tagName);
  const header = [...table.querySelectorAll('thead th')].find((th) => th.textContent.trim() === 'detects ≥');
  const scroller = table.closest('.heta-scroll');
  if (scroller) scroller.scrollLeft = header.offsetLeft - 20;
  const h = header.getBoundingClientRect(), s = (scroller || table).getBoundingClientRect();
  return {why: box(why), lines: [...why.querySelectorAll('[data-testid=heta-stage-lines] li')].map(box),
          cells: [...why.querySelectorAll('[data-testid=heta-stage-table] td')].map(box), clipped,
          header: {left: h.left, right: h.right, width: h.width}, scroller: {left: s.left, right: s.right}};
}"""


def _check_why(root: Any, retrieval: int) -> None:
    why = root.locator("[data-testid='heta-comparison-why']")
    expect(why).to_be_visible()
    lines = why.locator("[data-testid='heta-stage-lines'] li")
    expect(lines.first).to_contain_text(f"of {retrieval} regressed cases, {retrieval} lost their evidence in retrieval")
    expect(why.locator("[data-testid='heta-slices']")).to_be_visible()
    layout = root.evaluate(LAYOUT)
    assert layout["why"]["width"] > 300 and layout["why"]["height"] > 80, layout
    assert all(line["width"] > 100 and line["height"] > 10 for line in layout["lines"]), layout["lines"]
    assert all(cell["width"] > 10 and cell["height"] > 10 for cell in layout["cells"]), layout["cells"]
    assert layout["clipped"] == [], layout["clipped"]
    header, scroller = layout["header"], layout["scroller"]
    assert header["width"] > 20 and scroller["left"] - 1 <= header["left"] and header["right"] <= scroller["right"] + 1


@pytest.mark.slow
def test_why_it_changed_in_jupyterlab(page, jupyter_server, why, artifacts_dir: Path) -> None:
    base, worse = (str(why["paths"][name]) for name in ("baseline", "worse"))
    name = jupyter_server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            "import sys, warnings\nwarnings.simplefilter('ignore')\nimport heta_nb\n"
            f"sys.path.insert(0, r'{TESTS}')\nfrom comparison.why_cases import bench\n"
            f"c = heta_nb.compare(heta_nb.load_report(r'{base}'), heta_nb.load_report(r'{worse}'),\n"
            "                    benchmark=bench())\nc",
            "explorer = c.explore(benchmark=bench())\nexplorer.choose_system('worse/answer')\nexplorer",
        ]
    )
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    wait_all_cells_executed(page)
    root = page.locator(".jp-OutputArea-output [data-testid='heta-comparison']")
    expect(root).to_have_count(1, timeout=30_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    root.locator("[data-testid='heta-comparison-why']").scroll_into_view_if_needed()
    _check_why(root, why["retrieval"])
    page.screenshot(path=str(artifacts_dir / "why-lab.png"))
    explorer = page.locator(".jp-OutputArea-output [data-testid='heta-explorer']")
    expect(explorer).to_have_count(1, timeout=30_000)
    explorer.scroll_into_view_if_needed()
    explorer.locator("select.hx-label").select_option("stage = retrieval")
    expect(explorer.locator("[data-testid='hx-count']")).to_have_text(re.compile(rf"^{why['retrieval']} of \d+ match"))
    page.screenshot(path=str(artifacts_dir / "why-lab-explorer.png"))
    assert page.js_errors == []


def test_a_stage_count_on_the_page_opens_its_cases(browser, why, artifacts_dir: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 1300})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url) if not request.url.startswith("file:") else None)
    try:
        page.goto(Path(why["page"]).as_uri())
        root = page.locator("[data-testid='heta-comparison']")
        _check_why(root, why["retrieval"])
        root.locator("[data-testid='heta-comparison-why']").screenshot(path=str(artifacts_dir / "why-page.png"))
        row = root.locator("[data-testid='heta-stage-table'] tbody tr", has_text="worse/answer").filter(
            has_text="regressed"
        )
        row.locator("td[data-stage='retrieval'] a").click()
        explorer = page.locator("[data-testid='heta-explorer']")
        expect(explorer.locator("[data-testid='hx-count']")).to_have_text(
            re.compile(rf"^{why['retrieval']} of \d+ match")
        )
        assert "label=stage%20%3D%20retrieval" in page.url
        explorer.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / "why-page-explorer.png"))
    finally:
        context.close()
    assert errors == [] and requests == []
