"""A regression check as a person sees it in JupyterLab: the verdict first, the failing rows marked,
flipped cases collapsed until opened, hostile report text shown as text. Screenshot in test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import gate_pairs as gp
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

HOSTILE = '<img src=x onerror="window.__pwned=1"> | **bold** '


def test_check_result_in_jupyterlab(page, jupyter_server, artifacts_dir: Path) -> None:
    base = gp.base_dict()
    for result in base["case_results"]:
        result["query"] = HOSTILE + result["query"]
    (jupyter_server.root / "gate-base.json").write_text(gp.as_report(base).to_json())
    (jupyter_server.root / "gate-new.json").write_text(gp.as_report(gp.degraded(base)).to_json())
    name = jupyter_server.add_notebook_from_sources(
        [
            "%load_ext heta_nb\nimport heta_nb",
            'result = heta_nb.check("gate-new.json", "gate-base.json", floors={"beir_ndcg@5": 0.2})\nresult',
        ]
    )
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    wait_all_cells_executed(page)
    view = page.locator(".jp-OutputArea-output [data-testid='heta-check']").first
    expect(view).to_be_visible()
    assert view.get_attribute("data-verdict") == "regression"
    expect(view.locator("[data-testid='heta-check-verdict']")).to_have_text("failed")
    expect(view.locator("h3")).to_have_text("Check: regression")
    headline = view.locator("[data-testid='heta-check-headline']")
    expect(headline).to_contain_text("FAILED: regression in 6 of 6 checks")
    # the verdict comes before the table
    top = view.locator("h3").bounding_box()["y"]
    assert top < view.locator("[data-testid='heta-check-table']").bounding_box()["y"]
    rows = view.locator("[data-testid='heta-check-table'] tbody tr")
    expect(rows).to_have_count(6)
    expect(view.locator("[data-testid='heta-check-table'] td[data-verdict='regression']")).to_have_count(6)
    broke = view.locator("[data-testid='heta-check-cases-that-broke']")
    expect(broke.locator("table")).to_be_hidden()  # collapsed until opened
    broke.locator("summary").click()
    expect(broke.locator("table")).to_be_visible()
    expect(broke.locator("td.heta-q").first).to_contain_text('<img src=x onerror="window.__pwned=1">')
    assert page.evaluate("() => window.__pwned === undefined")
    assert broke.locator("img").count() == 0
    view.scroll_into_view_if_needed()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    view.screenshot(path=str(artifacts_dir / "browser-lab-check.png"))
    assert page.js_errors == []
