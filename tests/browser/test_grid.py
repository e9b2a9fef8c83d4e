"""The case × system grid in a real JupyterLab 4 (light and dark theme, and 400 px wide) and on
the exported offline page (light, dark, 400 px): three recipes with an error, a missing result,
a metric n/a in one system's mode and answers that differ. The cells have boxes and nothing in
them or in the column headers is clipped, the headers are in view, the disagreement filter
changes the rows to the kernel's count, a cell's hover title is its answer, and two clicks in a
row show a word diff with deleted and inserted words marked. The page's PageGrid gives the
kernel's own grid, state for state; hostile system names, case ids and answers stay text and
the page loads nothing. Screenshots: test-artifacts/grid-*.png.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from explorer.grid_cases import ERROR_CASE, HOSTILE, MISSING_CASE, recipe_reports
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect
from test_hostile_exports import INJECTED_JS

import heta_nb
from heta_nb.explorer.grid_view import GridView
from heta_nb.explorer.widget import ASSETS

pytestmark = pytest.mark.browser

METRIC = "answer_contains"
"""A pass / fail metric, n/a in recipe C's mode."""
SCORES = "beir_ndcg@5"
"""A score in [0, 1] (its cells are coloured by band)."""

# Every cell's and header's box, what is clipped, where the headers are against the table's box.
GEOMETRY = """(root) => {
  const grid = root.querySelector('[data-testid=hx-grid]');
  const scroll = grid.querySelector('.hx-gscroll');
  const rect = (el) => {
    const b = el.getBoundingClientRect();
    return {left: b.left, right: b.right, top: b.top, width: b.width, height: b.height};
  };
  const cells = [...grid.querySelectorAll('td.hx-g-cell')];
  const heads = [...grid.querySelectorAll('thead th')];
  const parts = 'td.hx-g-cell, th .hx-g-th, .hx-g-key, .hx-grid-controls > *, .hx-grid-pager > *';
  const clipped = [...grid.querySelectorAll(parts)]
    .filter((el) => el.offsetParent !== null
            && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1))
    .map((el) => el.className + ': ' + el.textContent.slice(0, 40));
  return {box: rect(scroll), cells: cells.map(rect), heads: heads.map(rect),
          clipped, overflows: scroll.scrollWidth > scroll.clientWidth + 1,
          pageScroll: document.scrollingElement.scrollWidth - document.documentElement.clientWidth,
          gridRight: grid.getBoundingClientRect().right, rootRight: root.getBoundingClientRect().right};
}"""


@pytest.fixture(scope="module")
def grids(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The recipes (plain and hostile) as report files, their comparisons and exported pages."""
    work = tmp_path_factory.mktemp("grid")
    out: dict[str, Any] = {}
    for kind, hostile in (("plain", False), ("hostile", True)):
        paths = []
        for k, report in enumerate(recipe_reports(60, hostile=hostile)):
            path = work / f"{kind}-{k}.json"
            path.write_text(report.to_json(), encoding="utf-8")
            paths.append(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comparison = heta_nb.compare(*(heta_nb.load_report(p) for p in paths), resamples=200)
        out[kind] = {
            "paths": paths,
            "comparison": comparison,
            "page": heta_nb.to_html(comparison, work / f"{kind}.html"),
        }
    return out


def _kernel(comparison: Any, metric: str = METRIC, *, disagree: bool = False) -> dict[str, Any]:
    """What the grid must show: the kernel's own grid value for this state."""
    return GridView(comparison).show(metric, disagree=disagree).output()


def _diff_row(expected: dict[str, Any]) -> tuple[int, str, str]:
    """A row shown on the first page whose first two systems' answers differ, and those answers."""
    for position, row in enumerate(expected["rows"]):
        a, b = (cell[2] if cell[3] == 1 else "" for cell in row["c"][:2])
        if a and b and a != b and set(a.split()) - set(b.split()) and set(b.split()) - set(a.split()):
            return position, a, b
    raise AssertionError("no row with two different answers")


def check_grid(root: Any, comparison: Any, *, width: int) -> dict[str, Any]:
    """The one script of the grid, on an explorer ``root`` already in the grid view (any source)."""
    expected = _kernel(comparison)
    grid = root.locator("[data-testid='hx-grid']")
    expect(grid).to_be_visible()
    expect(root.locator(".hx-view-btn[data-view='grid']")).to_have_attribute("aria-pressed", "true")
    grid.locator(".hx-grid-metric").select_option(METRIC)
    count = grid.locator("[data-testid='hx-grid-count']")
    expect(count).to_have_text(expected["count_text"])
    rows = grid.locator("tbody tr.hx-g-row")
    expect(rows).to_have_count(len(expected["rows"]))
    heads = grid.locator("thead th.hx-g-system")
    expect(heads).to_have_text([s[0] for s in expected["systems"]])
    for k, system in enumerate(expected["systems"]):
        assert heads.nth(k).get_attribute("title") == system[1]
    first = expected["rows"][0]
    expect(rows.first.locator("td.hx-g-cell")).to_have_text([c[0] for c in first["c"]])
    geometry = root.evaluate(GEOMETRY)
    assert geometry["cells"] and all(c["width"] > 20 and c["height"] > 10 for c in geometry["cells"]), geometry["cells"]
    assert geometry["clipped"] == [], geometry["clipped"]
    assert geometry["pageScroll"] <= 1, geometry
    assert geometry["gridRight"] <= geometry["rootRight"] + 1, geometry
    box = geometry["box"]
    for head in geometry["heads"]:  # every header is in view, or the table scrolls in its own box
        assert head["width"] > 20 and head["height"] > 10, head
        assert head["top"] >= box["top"] - 1, (head, box)
        if not geometry["overflows"]:
            assert head["left"] >= box["left"] - 1 and head["right"] <= box["right"] + 1, (head, box)
    if geometry["overflows"]:
        last = heads.last
        last.scroll_into_view_if_needed()
        moved = root.evaluate(GEOMETRY)
        right = moved["heads"][-1]
        assert right["left"] >= moved["box"]["left"] - 1 and right["right"] <= moved["box"]["right"] + 1, moved
        case_head = moved["heads"][0]
        assert abs(case_head["left"] - box["left"]) <= 2, (case_head, box)  # the case column stays left
        root.evaluate("(r) => { r.querySelector('[data-testid=hx-grid] .hx-gscroll').scrollLeft = 0; }")

    # the hover: each cell's title is its answer (or why there is none)
    for position, row in enumerate(expected["rows"][:8]):
        for k, cell in enumerate(row["c"]):
            td = rows.nth(position).locator("td.hx-g-cell").nth(k)
            assert td.get_attribute("title") == cell[2]
            assert cell[3] in (0, 1, 2)
    by_id = {row["id"]: position for position, row in enumerate(expected["rows"])}
    assert rows.nth(by_id[ERROR_CASE]).locator("td.hx-g-cell").first.text_content() == "error"
    assert rows.nth(by_id[MISSING_CASE]).locator("td.hx-g-cell").nth(1).text_content() == "missing"
    cell = rows.first.locator("td.hx-g-cell").nth(1)
    cell.hover()
    assert cell.get_attribute("title") == first["c"][1][2] and first["c"][1][3] == 1

    # two clicks in a row: the word diff, deletions and insertions marked
    position, a, b = _diff_row(expected)
    target = rows.nth(position).locator("td.hx-g-cell")
    target.nth(0).click()
    expect(grid.locator("[data-testid='hx-grid-hint']")).to_be_visible()
    target.nth(1).click()
    diff = grid.locator("[data-testid='hx-grid-diff']")
    expect(diff).to_be_visible()
    answers = diff.locator("[data-testid='hx-grid-answer']")
    expect(answers).to_have_text([a, b])
    deleted = diff.locator(".hx-del").all_text_contents()
    inserted = diff.locator(".hx-ins").all_text_contents()
    assert deleted and inserted
    assert set(deleted) <= set(a.split()) and set(inserted) <= set(b.split())
    assert set(deleted) == set(a.split()) - set(b.split()) or set(deleted) <= set(a.split())
    panel = diff.bounding_box()
    view = root.evaluate(GEOMETRY)["box"]
    assert panel and panel["width"] > 100 and panel["x"] >= view["left"] - 1
    assert panel["x"] + panel["width"] <= view["right"] + 1, (panel, view)
    geometry = root.evaluate(GEOMETRY)
    return {"expected": expected, "geometry": geometry, "position": position}


def check_filter_and_metric(root: Any, comparison: Any) -> None:
    """The disagreement filter keeps the kernel's rows; the metric chooser switches to pass / fail."""
    grid = root.locator("[data-testid='hx-grid']")
    count = grid.locator("[data-testid='hx-grid-count']")
    rows = grid.locator("tbody tr.hx-g-row")
    everything = _kernel(comparison)
    only = _kernel(comparison, disagree=True)
    assert 0 < only["matched"] < everything["matched"]
    button = grid.locator("[data-testid='hx-grid-disagree']")
    expect(button).to_have_text(f"only where the systems disagree · {only['disagreeing']}")
    button.click()
    expect(button).to_have_attribute("aria-pressed", "true")
    expect(count).to_have_text(only["count_text"])
    expect(rows).to_have_count(len(only["rows"]))
    expect(rows.locator("td.hx-g-case")).to_have_text([r["id"] for r in only["rows"]])
    button.click()
    expect(count).to_have_text(everything["count_text"])
    expect(rows).to_have_count(len(everything["rows"]))
    expect(rows.first.locator("td.hx-g-cell").nth(2)).to_have_text("n/a")
    expect(grid.locator("[data-testid='hx-grid-legend'] .hx-g-key").first).to_have_text("✓ pass")
    grid.locator(".hx-grid-metric").select_option(SCORES)
    scores = _kernel(comparison, SCORES)
    expect(count).to_have_text(scores["count_text"])
    expect(rows.first.locator("td.hx-g-cell")).to_have_text([c[0] for c in scores["rows"][0]["c"]])
    expect(rows.first.locator("td.hx-g-cell").first).to_have_class(re.compile(r"\bhx-g-b[0-4]\b"))
    expect(grid.locator("[data-testid='hx-grid-legend'] .hx-g-key").first).to_have_text("0.00–0.20")
    grid.locator(".hx-grid-metric").select_option(METRIC)
    expect(count).to_have_text(everything["count_text"])


def _shoot(page: Any, root: Any, path: Path, position: int, metric: str = METRIC) -> None:
    """The grid on ``metric`` with a diff open, its rows from the top in view."""
    grid = root.locator("[data-testid='hx-grid']")
    if grid.locator(".hx-grid-metric").input_value() != metric:
        grid.locator(".hx-grid-metric").select_option(metric)
        expect(grid.locator("[data-testid='hx-grid-count']")).to_contain_text(f"({metric})")
    rows = grid.locator("tbody tr.hx-g-row")
    if not grid.locator("[data-testid='hx-grid-diff']").count():
        rows.nth(position).locator("td.hx-g-cell").nth(0).click()
        rows.nth(position).locator("td.hx-g-cell").nth(1).click()
    root.locator(".hx-views").evaluate("(el) => el.scrollIntoView({block: 'start'})")
    grid.locator(".hx-gscroll").evaluate("(el) => { el.scrollLeft = 0; }")
    expect(grid.locator(".hx-scrollbox")).not_to_have_class(re.compile(r"\bhx-more-left\b"))
    page.wait_for_timeout(300)  # (the shadow's fade)
    page.screenshot(path=str(path))


@pytest.mark.slow
def test_the_grid_in_jupyterlab_light_dark_and_narrow(page, jupyter_server, grids, artifacts_dir: Path) -> None:
    plain, hostile = grids["plain"], grids["hostile"]
    load = "\n".join(
        f"{name} = heta_nb.compare(*(heta_nb.load_report(p) for p in {[str(p) for p in grids[name]['paths']]!r}),"
        " resamples=200)"
        for name in ("plain", "hostile")
    )
    name = jupyter_server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            "import heta_nb, warnings\nwarnings.simplefilter('ignore')\n" + load,
            f"plain.explore(view='grid', metric={METRIC!r})",
            "hostile.explore()",
        ]
    )
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    wait_all_cells_executed(page)
    roots = page.locator(".jp-OutputArea-output [data-testid='heta-explorer']")
    expect(roots).to_have_count(2, timeout=30_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    root = roots.nth(0)
    root.scroll_into_view_if_needed()
    result = check_grid(root, plain["comparison"], width=1280)
    check_filter_and_metric(root, plain["comparison"])
    try:
        for theme, light in (("JupyterLab Light", "true"), ("JupyterLab Dark", "false")):
            page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
            page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
            shade, metric = ("light", METRIC) if light == "true" else ("dark", SCORES)
            _shoot(page, root, artifacts_dir / f"grid-lab-{shade}.png", result["position"], metric)
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
    # the pair table and back: one explorer, two views
    root.locator("[data-testid='hx-grid'] .hx-grid-metric").select_option(METRIC)
    root.locator(".hx-view-btn[data-view='']").click()
    expect(root.locator("[data-testid='hx-grid']")).to_be_hidden()
    expect(root.locator(".hx-table").first).to_be_visible()
    root.locator(".hx-view-btn[data-view='grid']").click()
    expect(root.locator("[data-testid='hx-grid']")).to_be_visible()
    # hostile names, ids and answers: switched to the grid from the pair table, text only
    other = roots.nth(1)
    other.scroll_into_view_if_needed()
    other.locator(".hx-view-btn[data-view='grid']").click()
    check_hostile(other, hostile["comparison"])
    assert page.evaluate("() => window.__pwned") is None
    # narrow: the notebook at 400 px
    page.evaluate("() => { window.jupyterapp.shell.collapseLeft(); window.jupyterapp.shell.collapseRight(); }")
    page.set_viewport_size({"width": 400, "height": 1000})
    root.scroll_into_view_if_needed()
    narrow = check_grid(root, plain["comparison"], width=400)
    _shoot(page, root, artifacts_dir / "grid-lab-narrow.png", narrow["position"])
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert page.js_errors == []


def check_hostile(root: Any, comparison: Any) -> None:
    """Hostile system names, case ids, answers and error messages are the cells' text and titles."""
    expected = _kernel(comparison)
    grid = root.locator("[data-testid='hx-grid']")
    grid.locator(".hx-grid-metric").select_option(METRIC)
    heads = grid.locator("thead th.hx-g-system")
    expect(heads).to_have_text([HOSTILE["system"], HOSTILE["proto"], HOSTILE["constructor"]])
    expect(grid.locator("[data-testid='hx-grid-count']")).to_have_text(expected["count_text"])
    rows = grid.locator("tbody tr.hx-g-row")
    expect(rows.locator("td.hx-g-case")).to_have_text([r["id"] for r in expected["rows"]])
    at = [r["id"] for r in expected["rows"]].index("q00002")
    cells = rows.nth(at).locator("td.hx-g-cell")
    assert cells.nth(0).get_attribute("title") == HOSTILE["answer"] + " 0"
    error = rows.nth([r["id"] for r in expected["rows"]].index(ERROR_CASE)).locator("td.hx-g-cell").first
    assert error.get_attribute("title") == "RuntimeError: " + HOSTILE["answer"]
    cells.nth(0).click()
    cells.nth(1).click()
    answers = grid.locator("[data-testid='hx-grid-diff'] [data-testid='hx-grid-answer']")
    expect(answers).to_have_text([HOSTILE["answer"] + " 0", HOSTILE["answer"] + " 1"])
    expect(grid.locator("[data-testid='hx-grid-diff'] .hx-del")).to_have_text(["0"])
    expect(grid.locator("[data-testid='hx-grid-diff'] .hx-ins")).to_have_text(["1"])
    grid.locator("[data-testid='hx-grid-disagree']").click()
    expect(grid.locator("[data-testid='hx-grid-count']")).to_have_text(_kernel(comparison, disagree=True)["count_text"])
    grid.locator("[data-testid='hx-grid-disagree']").click()
    assert (
        root.evaluate("(r) => r.querySelectorAll('[data-testid=hx-grid] img, [data-testid=hx-grid] script').length")
        == 0
    )


def _offline(context: Any) -> list[str]:
    """Abort every request that is not the page's own file; the list of what was tried."""
    tried: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith("file://"):
            request_route.continue_()
        else:
            tried.append(url)
            request_route.abort()

    context.route("**/*", route)
    return tried


@pytest.mark.parametrize(("scheme", "width"), [("light", 1280), ("dark", 1280), ("light", 400)])
def test_the_grid_on_the_offline_page(browser, grids, artifacts_dir: Path, scheme: str, width: int) -> None:
    plain = grids["plain"]
    context = browser.new_context(viewport={"width": width, "height": 1100}, color_scheme=scheme)
    tried = _offline(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    try:
        page.goto(Path(plain["page"]).as_uri())
        root = page.locator("[data-testid='heta-explorer']")
        root.scroll_into_view_if_needed()
        expect(root.locator(".hx-table").first).to_be_visible()  # the pair table first
        root.locator(".hx-view-btn[data-view='grid']").click()
        result = check_grid(root, plain["comparison"], width=width)
        name = "grid-page-narrow.png" if width < 1000 else f"grid-page-{scheme}.png"
        _shoot(page, root, artifacts_dir / name, result["position"], SCORES if scheme == "dark" else METRIC)
        grid = root.locator("[data-testid='hx-grid']")
        grid.locator(".hx-grid-metric").select_option(METRIC)
        check_filter_and_metric(root, plain["comparison"])
        # the link keeps the grid, its metric and its filter
        root.locator("[data-testid='hx-grid-disagree']").click()
        assert "view=grid" in page.url and "disagree=1" in page.url
        fresh = context.new_page()
        fresh.goto(page.url)
        again = fresh.locator("[data-testid='heta-explorer'] [data-testid='hx-grid-count']")
        expect(again).to_have_text(_kernel(plain["comparison"], disagree=True)["count_text"])
    finally:
        context.close()
    assert errors == [] and tried == []


def test_the_hostile_page_stays_text_and_offline(browser, grids, artifacts_dir: Path) -> None:
    hostile = grids["hostile"]
    context = browser.new_context(viewport={"width": 1280, "height": 1100})
    tried = _offline(context)
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(Path(hostile["page"]).as_uri())
        root = page.locator("[data-testid='heta-explorer']")
        root.scroll_into_view_if_needed()
        root.locator(".hx-view-btn[data-view='grid']").click()
        check_hostile(root, hostile["comparison"])
        root.locator(".hx-views").evaluate("(el) => el.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(artifacts_dir / "grid-page-hostile.png"))
        assert page.evaluate("() => window.__pwned") is None
        assert page.evaluate(INJECTED_JS) == []
    finally:
        context.close()
    assert errors == [] and dialogs == [] and tried == []


def _grid_engine() -> str:
    source = (ASSETS / "engine.js").read_text(encoding="utf-8")
    return re.sub(r"^export ", "", source, flags=re.MULTILINE) + "\nwindow.HetaPageGrid = PageGrid;\n"


def test_the_page_grid_is_the_kernel_grid(browser, grids) -> None:
    """engine.js's PageGrid over the embedded rows gives GridView's value, state for state."""
    from heta_nb.explorer.grid_view import grid_page_data

    context = browser.new_context()
    page = context.new_page()
    try:
        page.set_content("<!DOCTYPE html><html><body></body></html>")
        page.add_script_tag(content=_grid_engine())
        for kind in ("plain", "hostile"):
            comparison = grids[kind]["comparison"]
            data = grid_page_data(comparison)
            states = [
                {"grid_metric": metric, "grid_disagree": disagree, "grid_page": page_number}
                for metric in comparison.metrics
                for disagree in (False, True)
                for page_number in (0, 1, 7)
            ]
            shown = page.evaluate(
                "([data, states]) => states.map((s) => new window.HetaPageGrid(data).output(s))", [data, states]
            )
            for state, got in zip(states, shown):
                view = GridView(comparison, page_size=data["size"])
                view.show(state["grid_metric"], disagree=state["grid_disagree"], page=state["grid_page"])
                assert json.loads(json.dumps(view.output())) == got, state
    finally:
        context.close()
