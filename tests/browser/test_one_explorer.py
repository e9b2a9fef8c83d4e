"""One explorer in every client: the same script drives the notebook widget in a real
JupyterLab 4 and Notebook 7 and the standalone page in plain Chromium, on the demo's report
and comparison, and every value it expects comes from the kernel explorer in this process.

The script: the counts; a search; a metric filter whose column comes into view (the table
scrolls sideways in its own box); a sort by that column; a column pinned in the Columns
menu (it stays left while the table scrolls); a case opened by a click, its panel inside
the visible width (a comparison's case: both answers, under 2,000 px tall at 1,400 px);
j to the next case; an empty search and its advice. Pages also at 400 px and in dark mode;
a case whose id is ``constructor`` opens by click and by link. Screenshots go to
test-artifacts/one-explorer-*.png.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

import heta_nb
from heta_nb.explorer import Explorer

pytestmark = pytest.mark.browser

KNOWN_JS_ERRORS = {"notebook": [re.compile(r"Cannot read properties of undefined \(reading 'schema'\)")], "lab": []}
REPORT_METRIC = "ndcg@5"
PAIR_METRIC = "answer_f1"
NOTHING = "zzzz no such words in any case"

# Where the focus column, the pinned columns and the open panel are, against the table's box.
GEOMETRY = """(root) => {
  const scroll = root.querySelector('.hx-scroll');
  const rect = (el) => {
    if (!el) return null;
    const b = el.getBoundingClientRect();
    return {left: b.left, right: b.right, width: b.width, height: b.height, top: b.top};
  };
  const heads = [...root.querySelectorAll('.hx-table thead th.hx-pinned')];
  const focus = root.querySelector('.hx-table thead th.hx-focus');
  const controls = [...root.querySelectorAll('.hx-controls > *')].filter(e => e.offsetParent);
  return {box: rect(scroll), focus: rect(focus), focusKey: focus ? focus.getAttribute('data-key') : null,
          panel: rect(root.querySelector('[data-testid=hx-panel]')),
          pinned: heads.map(th => th.getAttribute('data-key')),
          overflows: scroll.scrollWidth > scroll.clientWidth + 1,
          pageScroll: document.scrollingElement.scrollWidth - document.documentElement.clientWidth,
          controls: controls.map(e => e.getBoundingClientRect().right),
          rootRight: root.getBoundingClientRect().right};
}"""

# Scroll the table's box all the way right: where the pinned columns' headers are before and after.
STICKY = """(root) => {
  const scroll = root.querySelector('.hx-scroll');
  const heads = () => [...root.querySelectorAll('.hx-table thead th.hx-pinned')]
    .map(th => th.getBoundingClientRect().left);
  const before = heads();
  scroll.scrollLeft = scroll.scrollWidth;
  const after = heads();
  const moved = scroll.scrollLeft;
  scroll.scrollLeft = 0;
  return {before, after, moved};
}"""


# The static view's wide tables (around the explorer) scroll in their box; their first column stays put.
STATIC_STICKY = """() => [...document.querySelectorAll('.heta-report .heta-scroll')]
  .filter(b => b.scrollWidth > b.clientWidth + 1)
  .map(box => {
    const first = box.querySelector('tbody tr > :first-child');
    const before = first.getBoundingClientRect().left;
    box.scrollLeft = box.scrollWidth;
    const after = first.getBoundingClientRect().left;
    box.scrollLeft = 0;
    return {before, after, moved: box.scrollWidth - box.clientWidth};
  })"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo's two reports (real Heta KBs), their comparison, the benchmark and the pages."""
    pytest.importorskip("heta_framework")
    from heta_nb import demo as demo_module
    from heta_nb.export import to_html

    work = tmp_path_factory.mktemp("one-explorer")
    demo_module.run_demo(work / "output", work / "store", progress=False)
    store = heta_nb.ReportStore(work / "store")
    paths = {name: work / f"{name}.json" for name in ("small-chunks", "large-chunks")}
    for name, path in paths.items():
        path.write_text(store.load("saltmarsh isles", name).to_json(), encoding="utf-8")
    small, large = (heta_nb.load_report(paths[n]) for n in ("small-chunks", "large-chunks"))
    benchmark = demo_module.load_benchmark()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(small, large, names=["small chunks", "large chunks"], modes=["extractive_answer"])
    pages = {"report": work / "report.html", "comparison": work / "comparison.html"}
    to_html(small, pages["report"], benchmark=benchmark)
    to_html(comparison, pages["comparison"], benchmark=benchmark)
    return {"paths": paths, "report": small, "comparison": comparison, "benchmark": benchmark, "pages": pages}


def _expected(demo: dict[str, Any], kind: str) -> dict[str, Any]:
    """What the script must read, from the kernel explorer driven through the same steps."""
    explorer = Explorer(demo[kind], benchmark=demo["benchmark"])
    metric = REPORT_METRIC if kind == "report" else PAIR_METRIC
    out: dict[str, Any] = {"all": explorer.info()["count_text"], "metric": metric}
    word = max(re.findall(r"[A-Za-z]{6,}", str(explorer.selection["query"].iloc[3])), key=len)
    out["word"] = word
    out["searched"] = explorer.filter(search=word).info()["count_text"]
    explorer.reset()
    if kind == "report":
        explorer.filter(metric=metric, low=0.5)
    else:
        explorer.filter(metric=metric, quick="regressions")
    out["filtered"] = explorer.info()["count_text"]
    key = next(c.key for c in explorer.columns if c.metric == metric)
    out["focus"] = key
    explorer.sort(key, descending=True)  # a click sorts up, a second click down
    out["first"] = str(explorer.selection["case_id"].iloc[0])
    explorer.open(0)
    out["case_text"] = explorer.info()["case_text"]
    case = explorer.case
    if kind == "comparison":
        out["answers"] = [
            (r.response.answer if r and r.response and r.response.answer is not None else "") for r in case.values()
        ]
    else:
        out["query"] = case.query
    explorer.next()
    out["next_text"] = explorer.info()["case_text"]
    return out


def _count(root: Any) -> Any:
    return root.locator("[data-testid='hx-count']")


def run_script(page: Any, root: Any, expected: dict[str, Any], kind: str, *, width: int) -> dict[str, Any]:
    """The one script, on a source's explorer ``root``; returns its geometry with a case open."""
    count = _count(root)
    expect(count).to_have_text(expected["all"])
    # search (Enter: at once, without the 250 ms typing pause)
    root.locator(".hx-search").fill(expected["word"])
    root.locator(".hx-search").press("Enter")
    expect(count).to_have_text(expected["searched"])
    root.locator(".hx-reset").click()
    expect(count).to_have_text(expected["all"])
    # a metric filter: its column comes first after the pinned ones, in view
    root.locator(".hx-metric").select_option(expected["metric"])
    if kind == "report":
        root.locator(".hx-low").fill("0.5")
        root.locator(".hx-low").press("Enter")
    else:
        root.locator("[data-quick='regressions']").click()
        expect(root.locator("[data-quick='regressions']")).to_have_attribute("aria-pressed", "true")
    expect(count).to_have_text(expected["filtered"])
    geometry = root.evaluate(GEOMETRY)
    assert geometry["focusKey"] == expected["focus"], geometry
    focus, box = geometry["focus"], geometry["box"]
    assert focus["width"] > 0 and focus["left"] >= box["left"] - 1 and focus["right"] <= box["right"] + 1, geometry
    # sort by it: up, then down
    header = root.locator(f".hx-table thead th[data-key='{expected['focus']}'] .hx-sort")
    header.click()
    root.locator(f".hx-table thead th[data-key='{expected['focus']}'] .hx-sort").click()
    expect(root.locator(f".hx-table thead th[data-key='{expected['focus']}']")).to_have_attribute(
        "aria-sort", "descending"
    )
    expect(root.locator("tbody tr.hx-row").first.locator("td").first).to_have_text(expected["first"])
    # pin the query column from the Columns menu: it joins the case column on the left
    root.locator(".hx-columns-btn").click()
    menu = root.locator(".hx-columns-menu")
    expect(menu).to_be_visible()
    menu.locator(".hx-menu-row[data-column='query'] .hx-pin").click()
    expect(menu.locator(".hx-menu-row[data-column='query'] .hx-pin")).to_have_attribute("aria-pressed", "true")
    root.locator(".hx-columns-btn").click()
    expect(menu).to_be_hidden()
    expect(root.locator(".hx-table thead th.hx-pinned")).to_have_count(2)
    geometry = root.evaluate(GEOMETRY)
    assert geometry["pinned"] == ["case_id", "query"], geometry
    if geometry["overflows"]:
        sticky = root.evaluate(STICKY)
        assert sticky["moved"] > 0 and all(abs(a - b) <= 1 for a, b in zip(sticky["before"], sticky["after"])), sticky
    # open the first case by a click; then j
    root.locator("tbody tr.hx-row").first.click()
    panel = root.locator("[data-testid='hx-panel']")
    expect(panel).to_be_visible()
    expect(panel.locator(".hx-case-pos")).to_have_text(expected["case_text"])
    if kind == "comparison":
        answers = panel.locator("[data-testid='hx-side'] [data-testid='hx-answer']")
        expect(answers).to_have_count(2)
        shown = [a.strip() for a in answers.all_inner_texts()]
        assert shown == [a.strip() or "none (this mode returns results only)" for a in expected["answers"]]
        expect(panel.locator(".hx-mark.hx-rel").first).to_be_visible()  # judged from the benchmark
    else:
        expect(panel.locator(".hx-query")).to_have_text(expected["query"])
        expect(panel.locator(".hx-expected")).to_be_visible()
    opened = root.evaluate(GEOMETRY)
    assert opened["panel"]["left"] >= opened["box"]["left"] - 1, opened
    assert opened["panel"]["right"] <= opened["box"]["right"] + 1, opened  # the case reads across the visible width
    if kind == "comparison" and width >= 1400:
        assert opened["panel"]["height"] < 2000, opened
    assert opened["pageScroll"] <= 1, opened
    assert all(right <= opened["rootRight"] + 1 for right in opened["controls"]), opened
    root.locator("tbody tr.hx-selected").scroll_into_view_if_needed()
    root.focus()
    page.keyboard.press("j")
    expect(panel.locator(".hx-case-pos")).to_have_text(expected["next_text"])
    page.keyboard.press("k")
    expect(panel.locator(".hx-case-pos")).to_have_text(expected["case_text"])
    return opened


def _empty(root: Any) -> None:
    root.locator(".hx-search").fill(NOTHING)
    root.locator(".hx-search").press("Enter")
    expect(root.locator("[data-testid='hx-empty']")).to_contain_text("Without the search")
    expect(root.locator(".hx-next")).to_be_disabled()


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 400])
@pytest.mark.parametrize("kind", ["report", "comparison"])
def test_the_page_runs_the_script(browser, demo, artifacts_dir: Path, kind: str, width: int, scheme: str) -> None:
    expected = _expected(demo, kind)
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    try:
        page.goto(demo["pages"][kind].as_uri())
        root = page.locator("[data-testid='heta-explorer']")
        expect(root).to_be_visible()
        svgs = page.eval_on_selector_all(
            ".heta-report svg",
            "els => els.map(s => s.getBoundingClientRect().width * s.getBoundingClientRect().height)",
        )
        assert all(area > 0 for area in svgs), svgs  # every inline figure of the static view is drawn
        if width < 1400:
            sticky = page.evaluate(STATIC_STICKY)
            assert sticky, "no static table scrolls sideways at this width"
            for box in sticky:
                assert box["moved"] > 0 and abs(box["after"] - box["before"]) <= 1, sticky
        root.scroll_into_view_if_needed()
        run_script(page, root, expected, kind, width=width)
        page.locator("[data-testid='hx-panel']").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / f"one-explorer-page-{kind}-{width}-{scheme}.png"))
        # the link holds the open case, the pinned columns and the sort: a fresh load reads the same
        link = page.url
        assert "case=" in link and "pin=" in link and "sort=" in link
        fresh = context.new_page()
        fresh.goto(link)
        again = fresh.locator("[data-testid='heta-explorer']")
        expect(again.locator("[data-testid='hx-panel'] .hx-case-pos")).to_have_text(expected["case_text"])
        expect(again.locator(".hx-table thead th.hx-pinned")).to_have_count(2)
        _empty(again)
    finally:
        context.close()
    assert errors == []


@pytest.mark.slow
@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_the_widget_runs_the_script(page, request, demo, artifacts_dir: Path, ui: str) -> None:
    server = request.getfixturevalue("jupyter_server" if ui == "lab" else "notebook_server")
    paths = demo["paths"]
    name = server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            "import heta_nb, warnings\nfrom heta_nb import demo\n"
            f"small = heta_nb.load_report(r'{paths['small-chunks']}')\n"
            f"large = heta_nb.load_report(r'{paths['large-chunks']}')\n"
            "with warnings.catch_warnings():\n"
            "    warnings.simplefilter('ignore')\n"
            "    comparison = heta_nb.compare(small, large, names=['small chunks', 'large chunks'],"
            " modes=['extractive_answer'])",
            "small.explore(benchmark=demo.load_benchmark())",
            "comparison.explore(benchmark=demo.load_benchmark())",
        ]
    )
    page.set_viewport_size({"width": 1400, "height": 1000})
    open_notebook(page, server, name, ui=ui)
    run_all_cells(page)
    wait_all_cells_executed(page)
    roots = page.locator(".jp-OutputArea-output [data-testid='heta-explorer']")
    expect(roots).to_have_count(2, timeout=30_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    for index, kind in enumerate(("report", "comparison")):
        root = roots.nth(index)
        root.scroll_into_view_if_needed()
        run_script(page, root, _expected(demo, kind), kind, width=1400)
        root.locator("[data-testid='hx-panel']").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / f"one-explorer-{ui}-{kind}.png"))
        _empty(root)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    unexpected = [e for e in page.js_errors if not any(p.search(e) for p in KNOWN_JS_ERRORS[ui])]
    assert unexpected == []


def test_a_case_named_like_an_object_key_opens(page, tmp_path: Path, artifacts_dir: Path) -> None:
    """Case ids such as ``constructor`` and ``__proto__`` are data: they open by click and by link."""
    from heta_nb.testing import synthetic_report_dict

    data = synthetic_report_dict(6, seed=2, modes=("full_text_search",))
    names = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "prototype"]
    for result, name in zip(data["case_results"], names):
        result["case_id"] = name
    path = heta_nb.to_html(heta_nb.load_report(data), tmp_path / "keys.html")
    page.goto(path.as_uri())
    root = page.locator("[data-testid='heta-explorer']")
    expect(_count(root)).to_contain_text("6 of 6 match")
    for name in names:
        root.locator(".hx-search").fill(name)
        root.locator(".hx-search").press("Enter")
        expect(_count(root)).to_contain_text("1 of 6 match")
        root.locator("tbody tr.hx-row").first.click()
        expect(root.locator(".hx-case-title")).to_have_text(f"Case {name} · full_text_search")
    link = page.url
    assert "case=prototype" in link
    fresh = page.context.new_page()
    fresh.goto(link)
    expect(fresh.locator(".hx-case-title")).to_have_text("Case prototype · full_text_search")
    fresh.goto(path.as_uri() + "#case=constructor~full_text_search")
    fresh.reload()
    expect(fresh.locator(".hx-case-title")).to_have_text("Case constructor · full_text_search")
    fresh.screenshot(path=str(artifacts_dir / "one-explorer-object-keys.png"))
    assert page.js_errors == []


def test_a_leaderboard_page_explores_its_cells_with_the_same_ui(page, tmp_path: Path) -> None:
    from heta_nb.testing import synthetic_report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports = [synthetic_report(60, seed=1, report_id="a"), synthetic_report(60, seed=2, report_id="b")]
        board = heta_nb.Leaderboard.from_reports(reports, resamples=200)
    cells = [row for row in board.rows() if row["mean"] == row["mean"]]  # (NaN: no mean)
    best = max(cells, key=lambda row: row["mean"])
    path = tmp_path / "board.html"
    path.write_text(board.to_html(), encoding="utf-8")
    page.goto(path.as_uri())
    root = page.locator("[data-testid='heta-explorer']")
    total = len(board.rows())
    expect(_count(root)).to_have_text(f"{total} of {total} match")
    expect(root.locator(".hx-status")).to_be_hidden()  # a board's cells have no status, no metric range
    expect(root.locator(".hx-metric")).to_be_hidden()
    header = root.locator(".hx-table thead th[data-key='mean'] .hx-sort")
    header.click()
    root.locator(".hx-table thead th[data-key='mean'] .hx-sort").click()
    keys = root.locator(".hx-table thead th").evaluate_all("els => els.map(e => e.getAttribute('data-key'))")
    assert keys[:2] == ["benchmark", "mean"]  # the first column pinned, the sorted one next
    first = root.locator("tbody tr.hx-row").first
    expect(first.locator("td").nth(keys.index("system"))).to_have_text(best["system"])
    first.click()
    facts = root.locator("[data-testid='hx-panel'] .hx-facts")
    expect(facts).to_be_visible()
    labels = facts.locator("dt").all_inner_texts()
    values = facts.locator("dd").all_inner_texts()
    shown = dict(zip(labels, values))
    assert shown["system"] == best["system"] and shown["metric"] == best["metric"]
    assert shown["mean"] == f"{best['mean']:.3f}"
    assert page.js_errors == []
