"""The "Explore results so far" button in a real JupyterLab 4 and Notebook 7 (headless Chromium):
start an evaluation with a slow KB, click the live widget's button, see the match count grow (also
while the kernel is busy in another cell), then see the final report; re-run the cell, open the new
run's explorer and cancel the run: the explorer ends on the cancelled report. Screenshots go to
test-artifacts/."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from jupyter_browser import open_notebook
from playwright.sync_api import expect

TESTS = Path(__file__).resolve().parents[1]
KNOWN_JS_ERRORS = {"notebook": [re.compile(r"Cannot read properties of undefined \(reading 'schema'\)")], "lab": []}
COUNT = re.compile(r"([\d,]+) of ([\d,]+) match")
CELL_SET_ACTIVE = (
    "(i) => { const nb = window.jupyterapp.shell.currentWidget.content;"
    " nb.deselectAll(); nb.activeCellIndex = i; nb.deselectAll(); }"
)
EXECUTION_COUNT = "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount"


def _run_cell(page, index: int) -> None:
    """Make cell ``index`` the active one and run it (as Shift+Enter would, without moving on)."""
    page.evaluate(CELL_SET_ACTIVE, index)
    # (not awaited: the command's promise settles only once the cell has run)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-cell'); }")


def _total(count) -> int:
    """The table's size in the explorer's count line ("12 of 12 match · ...")."""
    match = COUNT.search(count.inner_text())
    assert match, count.inner_text()
    return int(match.group(2).replace(",", ""))


@pytest.mark.slow
@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_explore_results_so_far(page, request, artifacts_dir: Path, ui: str) -> None:
    server = request.getfixturevalue("jupyter_server" if ui == "lab" else "notebook_server")
    name = server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            f"import sys\nsys.path.insert(0, r'{TESTS}')\nimport heta_nb\n"
            "from runner_support import SlowKB, toy_benchmark\n"
            "run = heta_nb.start(toy_benchmark(60), kb=SlowKB(0.12), query_modes=['good', 'poor'], store=None,\n"
            "                    concurrency=1, knowledge_base_name='toy kb', report_id='live-run')",
            "import time\ntime.sleep(4)\nprint('slept', run.state.done)",
        ]
    )
    open_notebook(page, server, name, ui=ui)
    _run_cell(page, 0)
    _run_cell(page, 1)
    run_widget = page.locator(".heta-run").first
    expect(run_widget).to_be_visible(timeout=60_000)
    button = run_widget.locator(".heta-explore")
    expect(button).to_have_text("Explore results so far")
    expect(run_widget.locator(".heta-counter")).to_contain_text("/120", timeout=30_000)
    button.click()
    root = run_widget.locator("[data-testid='heta-explorer']")
    expect(root).to_be_visible(timeout=30_000)
    count = root.locator("[data-testid='hx-count']")
    expect(count).to_contain_text("results so far", timeout=30_000)
    first = _total(count)
    assert 0 <= first < 120
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    root.scroll_into_view_if_needed()
    expect(count).not_to_contain_text(f"{first} of {first} match", timeout=10_000)  # it grows by itself
    page.screenshot(path=str(artifacts_dir / f"explorer-live-{ui}-running.png"))
    second = _total(count)
    assert second > first

    assert page.evaluate(EXECUTION_COUNT, 2) is None
    _run_cell(page, 2)  # the kernel is now busy for 4 s: the explorer still follows the run
    slept = page.locator(".jp-Cell").nth(2).locator(".jp-OutputArea-output")
    during = [second]
    started = time.monotonic()
    while slept.count() == 0 and time.monotonic() - started < 10:  # the cell still runs: the kernel is busy
        if len(during) < 4 and time.monotonic() - started > 0.9 * len(during):
            during.append(_total(count))
            if len(during) == 3:
                root.scroll_into_view_if_needed()
                page.screenshot(path=str(artifacts_dir / f"explorer-live-{ui}-busy-kernel.png"))
        time.sleep(0.05)
    expect(slept).to_contain_text("slept")
    assert time.monotonic() - started > 3.5 and len(during) == 4
    assert during == sorted(during) and during[-1] > during[0], during

    expect(count).to_contain_text("final report (complete)", timeout=60_000)
    expect(count).to_contain_text("120 of 120 match")
    expect(button).to_have_text("Hide the explorer")
    root.locator("tbody tr").first.click()
    expect(root.locator("[data-testid='hx-panel']")).to_contain_text("c000")
    root.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"explorer-live-{ui}-final.png"))
    button.click()
    expect(root).to_be_hidden()
    button.click()
    expect(root).to_be_visible()

    # re-run the cell: a new run, a new widget; its explorer follows it, and Cancel ends it
    _run_cell(page, 1)
    fresh = page.locator(".heta-run").first
    expect(fresh.locator(".heta-counter")).to_contain_text("/120", timeout=30_000)
    expect(fresh.locator(".heta-explore")).to_have_text("Explore results so far")
    fresh.locator(".heta-explore").click()
    fresh_count = fresh.locator("[data-testid='heta-explorer'] [data-testid='hx-count']")
    expect(fresh_count).to_contain_text("results so far", timeout=30_000)
    fresh.locator(".heta-cancel").click()
    expect(fresh_count).to_contain_text("final report (cancelled)", timeout=30_000)
    cancelled = _total(fresh_count)
    assert 0 < cancelled < 120
    fresh.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"explorer-live-{ui}-cancelled.png"))
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    unexpected = [e for e in page.js_errors if not any(p.search(e) for p in KNOWN_JS_ERRORS[ui])]
    assert unexpected == []
