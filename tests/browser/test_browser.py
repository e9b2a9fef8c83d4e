"""heta_nb in a real JupyterLab 4 / Notebook 7, in headless Chromium (Playwright).

- the live widget of a few-hundred-case run against a deliberately slow KB: the bar
  rises over time, the counters change, the bar ends green at 100 %, and the final
  report renders as ordinary output (summary table, a <details> drill-down opens);
- a second run is cancelled with the widget's Cancel button: red bar, partial report;
- the quickstart notebook runs in JupyterLab;
- an exported standalone HTML file: no console errors, search works, XSS stays inert.
Screenshots go to test-artifacts/ (git-ignored).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from jupyter_browser import (
    open_notebook,
    read_samples,
    run_all_cells,
    start_width_sampler,
    wait_all_cells_executed,
)
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
BAR = ".jp-OutputArea-output .heta-progress-main .progress-bar"
KNOWN_JS_ERRORS = {"notebook": [re.compile(r"Cannot read properties of undefined \(reading 'schema'\)")], "lab": []}

SETUP = """
import asyncio
import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkCase, BenchmarkEvidence, BenchmarkExpected

cases = [
    BenchmarkCase(case_id=f"c{i:03d}", query=f"question {i}",
                  expected=BenchmarkExpected(answers=(f"answer{i % 7}",),
                                             evidence=(BenchmarkEvidence(reference_id=f"d{i % 7}"),)))
    for i in range(240)
]
bench = Benchmark({"name": "browser bench", "version": "1", "split": "test", "task_type": "qa"}, (), cases)

async def slow_kb(query, mode):
    await asyncio.sleep(DELAY)
    i = int(query.split()[-1])
    if i % 50 == 7:
        raise LookupError("deliberately unavailable")
    return {"results": [{"id": f"r{i}", "text": f"text of answer{i % 7}", "source": {"document_id": f"d{i % 7}"}}],
            "answer": f"answer{i % 7}" if i % 3 else None}
"""


def _check_js_errors(page, ui: str) -> None:
    unexpected = [e for e in page.js_errors if not any(p.search(e) for p in KNOWN_JS_ERRORS[ui])]
    assert unexpected == []


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_live_widget_and_final_report(page, request, artifacts_dir: Path, ui: str) -> None:
    server = request.getfixturevalue("jupyter_server" if ui == "lab" else "notebook_server")
    name = server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            SETUP.replace("DELAY", "0.04"),
            'run = heta_nb.start(bench, kb=slow_kb, knowledge_base_name="browser kb", query_modes=["m"],\n'
            '                    evaluators=["recall@5", "answer_contains"], store=None, concurrency=2, retries=0)',
            "report = run.result()\nprint('finished', len(report.case_results), report.error_count)",
        ]
    )
    open_notebook(page, server, name, ui=ui)
    start_width_sampler(page, BAR, "main")
    run_all_cells(page)
    page.locator(BAR).wait_for()
    page.wait_for_function(
        "(sel) => { const v = parseFloat(document.querySelector(sel).style.width); return v > 0 && v < 100; }", arg=BAR
    )
    counter = page.locator(".heta-counter .heta-done").first
    first_count = counter.inner_text()
    first = page.evaluate("(sel) => parseFloat(document.querySelector(sel).style.width)", BAR)
    page.wait_for_function("([sel, v]) => parseFloat(document.querySelector(sel).style.width) > v", arg=[BAR, first])
    assert counter.inner_text() != first_count  # the counters change too
    expect(page.locator(".heta-counter .heta-rate").first).to_contain_text("cases/s")
    page.locator(".heta-run").first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"browser-{ui}-midrun.png"))
    expect(page.locator(BAR)).to_have_attribute("style", re.compile(r"width: 100%"), timeout=60_000)
    expect(page.locator(".jp-OutputArea-output .heta-progress-main .progress-bar-success")).to_have_count(1)
    expect(page.get_by_text("finished 240 5")).to_be_visible(timeout=60_000)
    samples = [s["v"] for s in read_samples(page, "main")]
    assert samples == sorted(samples) and samples[-1] == 100 and len(samples) >= 4, samples
    expect(page.locator(".heta-errors").first).to_contain_text("LookupError")
    # the final report, as ordinary output in place of the placeholder
    report = page.locator(".jp-OutputArea-output [data-testid='heta-report']").first
    expect(report).to_be_visible(timeout=30_000)
    expect(report.locator("[data-testid='heta-summary'] table").first).to_be_visible()
    details = report.locator("[data-testid='heta-case-details'] details").first
    details.locator("summary").first.click()
    expect(details).to_have_attribute("open", "")
    wait_all_cells_executed(page)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    report.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"browser-{ui}-final.png"))
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    _check_js_errors(page, ui)


def test_cancel_button_gives_a_partial_report(page, jupyter_server, artifacts_dir: Path) -> None:
    name = jupyter_server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            SETUP.replace("DELAY", "0.05"),
            'run = heta_nb.start(bench, kb=slow_kb, knowledge_base_name="browser kb", query_modes=["m"],\n'
            '                    evaluators=["recall@5"], store=None, concurrency=1, retries=0)',
        ]
    )
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    wait_all_cells_executed(page)  # start() returned: the kernel is free while the run goes on
    page.wait_for_function(
        "(sel) => { const v = parseFloat(document.querySelector(sel).style.width); return v > 2; }", arg=BAR
    )
    page.locator(".heta-cancel").first.click()
    expect(page.locator(".heta-cancel").first).to_have_text(re.compile("Cancel"))
    expect(page.locator(".jp-OutputArea-output .heta-progress-main .progress-bar-danger")).to_have_count(
        1, timeout=30_000
    )
    banner = page.locator("[data-testid='heta-report'] [data-testid='heta-status']").first
    expect(banner).to_contain_text("cancelled", timeout=30_000)
    width = page.evaluate("(sel) => parseFloat(document.querySelector(sel).style.width)", BAR)
    assert 0 < width < 100
    banner.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "browser-lab-cancelled.png"))
    _check_js_errors(page, "lab")


@pytest.mark.slow
def test_quickstart_in_jupyterlab(page, jupyter_server, artifacts_dir: Path) -> None:
    name = jupyter_server.add_notebook(ROOT / "notebooks" / "01-quickstart.ipynb")
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    page.locator(BAR).first.wait_for(timeout=120_000)
    wait_all_cells_executed(page, timeout=300_000)
    expect(page.locator(".jp-OutputArea-output .heta-progress-main .progress-bar-success")).to_have_count(2)
    expect(page.locator(".jp-OutputArea-output [data-testid='heta-comparison']")).to_have_count(1)
    assert page.locator(".jp-OutputArea-output [data-testid='heta-report']").count() >= 3
    expect(
        page.locator(
            ".jp-OutputArea-output .jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']",
            has_text="Traceback",
        )
    ).to_have_count(0)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    page.locator(".jp-OutputArea-output [data-testid='heta-comparison']").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "browser-lab-quickstart.png"))
    _check_js_errors(page, "lab")


HOSTILE = '<img src=x onerror="window.__pwned=1">'


def test_standalone_export_in_the_browser(browser, tmp_path: Path, artifacts_dir: Path) -> None:
    import heta_nb

    data = json.loads((ROOT / "tests/fixtures/heta-0.1.2/report-normal.json").read_bytes())
    data["case_results"][0]["query"] = f"</script><script>window.__pwned=1</script>{HOSTILE}"
    data["case_results"][1]["case_id"] = 'c02"><svg onload="window.__pwned=1">'
    data["case_results"][2]["response"]["answer"] = "javascript:window.__pwned=1 {{7*7}}"
    data["benchmark"]["homepage"] = "javascript:window.__pwned=1"
    path = tmp_path / "export.html"
    heta_nb.to_html(heta_nb.load_report(data), path)
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    explorer = page.locator("[data-testid='heta-explorer']")
    expect(explorer).to_be_visible()
    expect(explorer).to_have_attribute("data-matching", "30")
    page.fill(".hx-search", "lantern")
    page.press(".hx-search", "Enter")
    assert int(explorer.get_attribute("data-matching") or 0) < 30
    page.fill(".hx-search", "")
    page.press(".hx-search", "Enter")
    page.select_option(".hx-status", "error")
    expect(explorer).to_have_attribute("data-matching", "0")
    page.select_option(".hx-status", "")
    page.locator(".hx-sort", has_text="latency ms").click()
    expect(explorer).to_have_attribute("data-matching", "30")
    assert page.evaluate("() => window.__pwned") is None
    assert errors == []
    assert [url for url in requests if not url.startswith("file:")] == []
    page.screenshot(path=str(artifacts_dir / "browser-export.png"), full_page=True)
    shutil.copy(path, artifacts_dir / "browser-export.html")
    context.close()
