"""The LLM judges in the one explorer, in a real JupyterLab 4 (light and dark theme) and on the
exported offline page (light and dark scheme): an opened case shows each judge's card (name,
value, pass, reason, model, usage, cost), its claims with coloured verdict badges, and the
retrieved result the claims cite is marked (and lit while a claim is hovered); context
precision's verdict sits beside each result. Nothing is clipped sideways, badges are readable
against their background, hostile claims stay text, and the ``judges disagree`` filter keeps
the case whose repeats disagreed. Screenshots: test-artifacts/judge-panel-*.png.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from explorer.judge_cases import capital_kb
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

import heta_nb
from heta_nb.benchmark import Benchmark
from heta_nb.explorer.judge_data import UNSTABLE
from heta_nb.llm_judges import STANDIN_NAME, standin_model

pytestmark = pytest.mark.browser

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A report judged by the stand-in (3 cases); case c1's faithfulness repeats disagreed and
    case c2 holds a hostile claim. Its JSON, its exported page (light and dark read the same file)."""
    rows = [
        {"case_id": f"c{i}", "query": f"What is the capital of country {i}?", "answers": [f"City{i}."]}
        for i in range(3)
    ]
    benchmark = Benchmark.from_frame(
        pd.DataFrame(rows), manifest={"name": "capitals", "version": "1", "split": "test", "task_type": "qa"}
    )
    report = heta_nb.evaluate(
        benchmark,
        kb=capital_kb,
        evaluators=["faithfulness", "context_precision", "answer_relevance"],
        judge_model=standin_model(),
        judge_cache=None,
        store=None,
        progress=False,
    )
    data = copy.deepcopy(report.to_dict())
    for result in data["case_results"]:
        scores = {s["name"]: s for s in result["scores"]}
        if result["case_id"] == "c1":
            meta = scores["faithfulness"]["metadata"]
            meta["repeats"] = [
                {"value": 0.5, "reason": "r"},
                {"value": 0.5, "reason": "r"},
                {"value": 1.0, "reason": "r"},
            ]
            meta["agreement"] = 0.666667
        if result["case_id"] == "c2":
            meta = scores["faithfulness"]["metadata"]
            meta["claims"][1].update(
                claim=HOSTILE, verdict="__proto__", reason={"__proto__": {"x": 1}, "constructor": 1}
            )
            meta["cost"], meta["cost_unknown"] = None, "no price for model 'x'"
            index = result["scores"].index(scores["answer_relevance"])  # a judge that failed, one that could not judge
            result["scores"][index] = {
                "name": "answer_relevance",
                "value": "error",
                "passed": None,
                "metadata": {
                    "error": {"type": "JudgeOutputError", "message": "the model's answers stayed unusable"},
                    "judge": scores["answer_relevance"]["metadata"]["judge"],
                    "raw_answers": ["The answer is relevant, I think.", HOSTILE],
                    "calls": 2,
                    "cached_calls": 0,
                    "tokens_in": 300,
                    "tokens_out": 12,
                    "cost": 0.0,
                },
            }
            index = result["scores"].index(scores["context_precision"])
            result["scores"][index] = {
                "name": "context_precision",
                "value": 0.0,
                "passed": None,
                "metadata": {
                    "skipped": True,
                    "reason": "nothing with text was retrieved",
                    "judge": scores["context_precision"]["metadata"]["judge"],
                },
            }
    work = tmp_path_factory.mktemp("judge-views")
    path = work / "judged.json"
    changed = heta_nb.load_report(data)
    path.write_text(changed.to_json(), encoding="utf-8")
    page = heta_nb.to_html(changed, work / "judged.html", benchmark=benchmark)
    return {"path": path, "page": page, "report": changed}


# Where the panel's parts are; what overflows sideways; colours of the badges and their background.
GEOMETRY = """(root) => {
  const panel = root.querySelector('[data-testid=hx-panel]');
  const box = panel.getBoundingClientRect();
  const rect = (el) => {
    const b = el.getBoundingClientRect();
    return {left: b.left, right: b.right, width: b.width, height: b.height};
  };
  const clipped = [...panel.querySelectorAll('*')]
    .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1
            && getComputedStyle(el).overflowX !== 'visible' && !el.matches('.hx-pre, .hx-clamped, .hx-verdict'))
    .map((el) => el.className);
  const outside = [...panel.querySelectorAll('.hx-judge, .hx-judge *, .hx-chunk, .hx-jnotes *')]
    .filter((el) => el.offsetParent !== null)
    .filter((el) => { const b = el.getBoundingClientRect(); return b.right > box.right + 1 || b.left < box.left - 1; })
    .map((el) => el.className || el.tagName);
  const rgb = (text) => (text.match(/[0-9.]+/g) || []).slice(0, 4).map(Number);
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const c = rgb(getComputedStyle(node).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const luminance = (c) => {
    const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (el) => {  // WCAG: the text's colour against the first opaque background behind it
    const a = luminance(rgb(getComputedStyle(el).color).slice(0, 3)), b = luminance(background(el));
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  };
  const badges = [...panel.querySelectorAll('.hx-verdict, .hx-judge-name, .hx-judge-usage, .hx-claim-text .hx-text')]
    .filter((el) => el.offsetParent !== null).map((el) => ({text: el.textContent, contrast: contrast(el)}));
  return {panel: rect(panel), cards: [...panel.querySelectorAll('[data-testid=hx-judge]')].map(rect),
          claims: [...panel.querySelectorAll('[data-testid=hx-claim]')].map(rect), clipped, outside, badges,
          pageScroll: document.scrollingElement.scrollWidth - document.documentElement.clientWidth};
}"""


def _check_panel(root: Any) -> dict[str, Any]:
    """Open case c0 and read its judges (the same in every client)."""
    root.locator("tbody tr.hx-row").first.click()
    panel = root.locator("[data-testid='hx-panel']")
    expect(panel.locator(".hx-case-title")).to_contain_text("Case c0")
    cards = panel.locator("[data-testid='hx-judge']")
    expect(cards).to_have_count(3)
    faithful = panel.locator("[data-testid='hx-judge'][data-judge='faithfulness']")
    expect(faithful.locator("[data-testid='hx-judge-value']")).to_have_text("0.500")
    expect(faithful.locator(".hx-judge-why")).to_have_text("1 of 2 claims supported by the retrieved chunks")
    expect(faithful.locator(".hx-judge-model")).to_have_text(STANDIN_NAME)
    expect(faithful.locator("[data-testid='hx-judge-usage']")).to_contain_text("1 call · ")
    expect(faithful.locator("[data-testid='hx-judge-cost']")).to_have_text("$0")  # the stand-in is free: a known $0
    claims = faithful.locator("[data-testid='hx-claim']")
    expect(claims).to_have_count(2)
    expect(claims.nth(0).locator(".hx-verdict")).to_have_text("supported")
    expect(claims.nth(0).locator(".hx-verdict")).to_have_class(re.compile(r"\bhx-v-ok\b"))
    expect(claims.nth(1).locator(".hx-verdict")).to_have_text("not found")
    expect(claims.nth(1).locator(".hx-verdict")).to_have_class(re.compile(r"\bhx-v-none\b"))
    expect(claims.nth(0).locator(".hx-chunk-link")).to_have_text("#2")
    # the cited result is marked with the claim's number and context precision's verdict
    cited = panel.locator("li.hx-chunk[data-rank='2']")
    expect(cited).to_have_class(re.compile(r"\bhx-cited\b"))
    expect(cited.locator("[data-testid='hx-jnotes']")).to_contain_text("faithfulness · claim 1")
    expect(cited.locator("[data-testid='hx-jnotes']")).to_contain_text("context_precision · relevant")
    expect(panel.locator("li.hx-chunk[data-rank='1'] [data-testid='hx-jnotes']")).to_contain_text(
        "context_precision · not relevant"
    )
    expect(panel.locator("li.hx-chunk[data-rank='1']")).not_to_have_class(re.compile(r"\bhx-cited\b|\bhx-hl\b"))
    # hovering the claim lights its result; clicking its chunk link too (and scrolls to it)
    claims.nth(0).hover()
    expect(cited).to_have_class(re.compile(r"\bhx-hl\b"))
    claims.nth(1).hover()
    expect(cited).not_to_have_class(re.compile(r"\bhx-hl\b"))
    precision = panel.locator("[data-testid='hx-judge'][data-judge='context_precision']")
    expect(precision.locator("[data-testid='hx-judge-chunks'] .hx-chunk-link")).to_have_text(
        ["#1 not relevant", "#2 relevant"]
    )
    relevance = panel.locator("[data-testid='hx-judge'][data-judge='answer_relevance']")
    expect(relevance.locator(".hx-judge-head .hx-verdict")).to_have_text("relevant")
    geometry = root.evaluate(GEOMETRY)
    assert all(c["width"] > 100 and c["height"] > 20 for c in geometry["cards"]), geometry["cards"]
    assert all(c["width"] > 100 and c["height"] > 10 for c in geometry["claims"]), geometry["claims"]
    assert geometry["clipped"] == [] and geometry["outside"] == [], geometry
    assert geometry["pageScroll"] <= 1, geometry
    low = [b for b in geometry["badges"] if b["contrast"] < 3.0]
    assert low == [], low
    return geometry


def _check_filter_and_hostile(root: Any, shot: Path | None = None) -> None:
    """The quick filter keeps c1 (its repeats disagreed); c2's hostile claim reads as text."""
    count = root.locator("[data-testid='hx-count']")
    expect(count).to_have_text(re.compile(r"^3 of 3 match"))
    root.locator(f"[data-quick='{UNSTABLE}']").click()
    expect(count).to_have_text(re.compile(r"^1 of 3 match"))
    root.locator("tbody tr.hx-row").first.click()
    panel = root.locator("[data-testid='hx-panel']")
    expect(panel.locator(".hx-case-title")).to_contain_text("Case c1")
    expect(panel.locator("[data-testid='hx-agreement']").first).to_have_text(
        "⚠ judges disagree · agreement 0.67 over 3 repeats"
    )
    root.locator(".hx-reset").click()
    expect(count).to_have_text(re.compile(r"^3 of 3 match"))
    root.locator(".hx-search").fill("country 2")
    root.locator(".hx-search").press("Enter")
    expect(count).to_have_text(re.compile(r"^1 of 3 match"))
    root.locator("tbody tr.hx-row").first.click()
    faithful = root.locator("[data-testid='hx-judge'][data-judge='faithfulness']")
    claim = faithful.locator("[data-testid='hx-claim']").nth(1)
    expect(claim.locator(".hx-claim-text .hx-text").first).to_have_text(HOSTILE)
    expect(claim.locator(".hx-verdict")).to_have_text("__proto__")
    expect(claim.locator(".hx-verdict")).to_have_class(re.compile(r"\bhx-v-none\b"))
    expect(claim.locator(".hx-claim-why")).to_contain_text("__proto__")
    expect(faithful.locator("[data-testid='hx-judge-cost']")).to_have_text("cost unknown: no price for model 'x'")
    failed = root.locator("[data-testid='hx-judge'][data-judge='answer_relevance']")
    expect(failed).to_have_class(re.compile(r"\bhx-judge-err\b"))
    expect(failed).to_contain_text("JudgeOutputError: the model's answers stayed unusable")
    expect(failed.locator("[data-testid='hx-judge-usage']")).to_contain_text("2 calls · 300 in / 12 out tokens · $0")
    failed.locator("details summary").click()
    expect(failed.locator("details pre").nth(1)).to_have_text(HOSTILE)
    skipped = root.locator("[data-testid='hx-judge'][data-judge='context_precision']")
    expect(skipped).to_contain_text("not judged: nothing with text was retrieved")
    expect(skipped.locator("[data-testid='hx-judge-usage']")).to_have_text(f"model {STANDIN_NAME} · no model call")
    assert root.locator("img").count() == 0
    if shot is not None:
        root.locator("[data-testid='hx-judges']").scroll_into_view_if_needed()
        root.page.screenshot(path=str(shot))
    root.locator(".hx-reset").click()
    root.locator(".hx-case-close").click()


def _shoot(page: Any, root: Any, path: Path) -> None:
    """A screenshot of the judges with the first claim hovered (its result lit)."""
    panel = root.locator("[data-testid='hx-judges']")
    panel.scroll_into_view_if_needed()
    panel.locator("[data-testid='hx-claim']").first.hover()
    expect(root.locator("li.hx-chunk.hx-hl")).to_have_count(1)
    root.evaluate("(r) => { r.querySelector('.hx-scroll').scrollLeft = 0; }")  # (hover() may scroll the table sideways)
    expect(root.locator("li.hx-chunk.hx-hl")).to_have_count(1)  # the panel stays put: still hovered
    page.screenshot(path=str(path))


@pytest.mark.slow
def test_the_judges_read_the_same_in_jupyterlab_light_and_dark(page, jupyter_server, judged, artifacts_dir) -> None:
    name = jupyter_server.add_notebook_from_sources(
        ["%load_ext heta_nb", f"import heta_nb\nreport = heta_nb.load_report(r'{judged['path']}')\nreport.explore()"]
    )
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    wait_all_cells_executed(page)
    root = page.locator(".jp-OutputArea-output [data-testid='heta-explorer']")
    expect(root).to_have_count(1, timeout=30_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    root.scroll_into_view_if_needed()
    _check_filter_and_hostile(root)
    try:
        for theme, light in (("JupyterLab Light", "true"), ("JupyterLab Dark", "false")):
            page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
            page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
            _check_panel(root)
            _shoot(page, root, artifacts_dir / f"judge-panel-{'light' if light == 'true' else 'dark'}.png")
            root.locator(".hx-case-close").click()
    finally:  # the server (and its settings) serve every later test: back to light
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert page.js_errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_exported_page_shows_the_same_judges(browser, judged, artifacts_dir: Path, scheme: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 1300}, color_scheme=scheme)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    try:
        page.goto(Path(judged["page"]).as_uri())
        lines = page.locator("[data-testid='heta-judges'] [data-testid='heta-judge-line']")
        expect(lines).to_have_count(3)
        expect(lines.first).to_contain_text(STANDIN_NAME)
        expect(page.locator("[data-testid='heta-judges-total']")).to_contain_text("all judges")
        page.locator("[data-testid='heta-header']").screenshot(
            path=str(artifacts_dir / f"judge-header-page-{scheme}.png")
        )
        root = page.locator("[data-testid='heta-explorer']")
        root.scroll_into_view_if_needed()
        _check_filter_and_hostile(root, artifacts_dir / f"judge-panel-page-failed-{scheme}.png")
        _check_panel(root)
        _shoot(page, root, artifacts_dir / f"judge-panel-page-{scheme}.png")
    finally:
        context.close()
    assert errors == []


def test_the_judges_fit_a_narrow_page(browser, judged, artifacts_dir: Path) -> None:
    context = browser.new_context(viewport={"width": 400, "height": 1400})
    page = context.new_page()
    try:
        page.goto(Path(judged["page"]).as_uri())
        root = page.locator("[data-testid='heta-explorer']")
        root.scroll_into_view_if_needed()
        _check_panel(root)
        _shoot(page, root, artifacts_dir / "judge-panel-page-400.png")
    finally:
        context.close()
