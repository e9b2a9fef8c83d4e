"""The case explorer in a real JupyterLab 4 and Notebook 7 (headless Chromium): open it on
the demo comparison, type a search, filter to regressions, open a case, read both answers,
step with the keyboard. Every expected value comes from the same explorer driven in this
process. Screenshots go to test-artifacts/."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

KNOWN_JS_ERRORS = {"notebook": [re.compile(r"Cannot read properties of undefined \(reading 'schema'\)")], "lab": []}
METRIC = "answer_f1"


@pytest.fixture(scope="module")
def demo_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two demo recipes evaluated once (real Heta KBs), saved as report.json files."""
    pytest.importorskip("heta_framework")
    import heta_nb
    from heta_nb import demo

    folder = tmp_path_factory.mktemp("explorer-demo")
    benchmark = demo.load_benchmark()
    paths = {}
    for name, recipe in demo.recipes(folder / "kbs").items():
        report = heta_nb.evaluate(
            benchmark,
            recipe=recipe,
            query_engines=demo.demo_query_engines(),
            knowledge_base_name="saltmarsh isles",
            report_id=name,
            query_modes=list(demo.DEMO_MODES),
            evaluators=list(demo.DEMO_EVALUATORS),
            top_k=5,
            store=None,
            progress=False,
        )
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(report.to_json() if isinstance(report.to_json(), str) else report.to_json().decode())
    return paths


def _expected(paths: dict[str, Path]):
    """The same explorer in this process: the search term, the counts and both answers to expect."""
    import heta_nb
    from heta_nb import demo

    small, large = (heta_nb.load_report(paths[n]) for n in ("small-chunks", "large-chunks"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(small, large, names=["small chunks", "large chunks"], modes=["extractive_answer"])
    explorer = comparison.explore(benchmark=demo.load_benchmark(), quick="regressions", metric=METRIC)
    assert explorer.matched > 0, "the demo recipes have no answer_f1 regression to explore"
    word = max(re.findall(r"[A-Za-z]{5,}", explorer.selection["query"].iloc[0]), key=len)
    explorer.reset()
    searched = explorer.filter(search=word).matched
    explorer.reset().filter(quick="regressions", metric=METRIC)
    case = explorer.open(0)
    answers = [(r.response.answer or "none (this mode returns results only)") if r else "" for r in case.values()]
    second = explorer.selection["case_id"].iloc[1] if explorer.matched > 1 else None
    return {
        "total": explorer.total,
        "word": word,
        "searched": searched,
        "regressions": explorer.matched,
        "first": case[comparison.baseline].case_id,
        "answers": answers,
        "second": second,
    }


@pytest.mark.slow
@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_explore_the_demo_comparison(page, request, demo_reports, artifacts_dir: Path, ui: str) -> None:
    expected = _expected(demo_reports)
    server = request.getfixturevalue("jupyter_server" if ui == "lab" else "notebook_server")
    name = server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            "import heta_nb\nfrom heta_nb import demo\n"
            f"small = heta_nb.load_report(r'{demo_reports['small-chunks']}')\n"
            f"large = heta_nb.load_report(r'{demo_reports['large-chunks']}')\n"
            'names = ["small chunks", "large chunks"]\n'
            'comparison = heta_nb.compare(small, large, names=names, modes=["extractive_answer"])',
            "explorer = comparison.explore(benchmark=demo.load_benchmark())\nexplorer",
        ]
    )
    open_notebook(page, server, name, ui=ui)
    run_all_cells(page)
    wait_all_cells_executed(page)
    root = page.locator(".jp-OutputArea-output [data-testid='heta-explorer']")
    expect(root).to_be_visible(timeout=30_000)
    count = root.locator("[data-testid='hx-count']")
    expect(count).to_contain_text(f"{expected['total']} of {expected['total']} match")
    assert 0 < root.locator("tbody tr").count() <= 50

    root.locator(".hx-search").fill(expected["word"])
    root.locator(".hx-search").press("Enter")
    expect(count).to_contain_text(f"{expected['searched']} of {expected['total']} match")
    root.locator(".hx-reset").click()
    expect(count).to_contain_text(f"{expected['total']} of {expected['total']} match")

    root.locator(".hx-metric").select_option(METRIC)
    root.locator("[data-quick='regressions']").click()
    expect(count).to_contain_text(f"{expected['regressions']} of {expected['total']} match")
    expect(root.locator("[data-quick='regressions']")).to_have_attribute("aria-pressed", "true")
    rows = root.locator("tbody tr")
    expect(rows).to_have_count(min(expected["regressions"], 50))
    expect(rows.first.locator("td.hx-down").first).to_be_visible()  # the metric's delta, coloured
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    root.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"explorer-{ui}-regressions.png"))

    rows.first.click()
    pair = root.locator("[data-testid='hx-pair']")
    expect(pair).to_be_visible()
    expect(pair.locator("h3")).to_contain_text(expected["first"])
    answers = pair.locator("[data-testid='hx-side'] [data-testid='hx-answer']")
    expect(answers).to_have_count(2)
    assert [a.strip() for a in answers.all_inner_texts()] == [a.strip() for a in expected["answers"]]
    expect(pair.locator(".hx-mark.hx-rel").first).to_be_visible()  # judged from the benchmark
    root.locator(".hx-panel-box").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"explorer-{ui}-case.png"))

    if expected["second"] is not None:  # the keyboard: j opens the next regression
        root.locator("tbody tr.hx-selected").click()
        root.focus()
        page.keyboard.press("j")
        expect(pair.locator("h3")).to_contain_text(expected["second"])
        expect(root.locator(".hx-case-pos")).to_contain_text(f"2 of {expected['regressions']}")
    root.locator(".hx-search").fill("no such words in any query")
    root.locator(".hx-search").press("Enter")
    expect(root.locator("[data-testid='hx-empty']")).to_contain_text("Without the search")
    page.screenshot(path=str(artifacts_dir / f"explorer-{ui}-empty.png"))
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    unexpected = [e for e in page.js_errors if not any(p.search(e) for p in KNOWN_JS_ERRORS[ui])]
    assert unexpected == []


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
