"""Figures a person can read: in a real JupyterLab 4 (light and dark theme) and on the exported
offline page (light and dark scheme, 1280 and 400 px wide).

Each figure's text is measured as it is shown: for an SVG, its smallest font size in the SVG's
units × displayed width / viewBox width; for a PNG, the figure's smallest font size in CSS px ×
displayed width / the width the PNG is drawn for. Every text must be at least 10 CSS px. In dark
Lab no plot may be a near-white box (the screenshot's pixels of the figure are sampled). A click on
a page figure opens it full size (CSS only). Screenshots: test-artifacts/figures-*.png.
"""

from __future__ import annotations

import base64
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

import heta_nb

pytestmark = pytest.mark.browser

MIN_TEXT_PX = 10.0
_FONT = re.compile(r"font-size:\s*([\d.]+)px|font:[^;]*?([\d.]+)px")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An exported report (hand-drawn SVG figures) and comparison (matplotlib SVG figures)."""
    folder = tmp_path_factory.mktemp("figures")
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    comparison = heta_nb.compare(report, metrics=["beir_ndcg@3", "answer_contains"])
    return {
        "report": Path(heta_nb.to_html(report, folder / "report.html")),
        "comparison": Path(heta_nb.to_html(comparison, folder / "comparison.html")),
    }


def _svg_text_sizes(uri: str) -> tuple[float, float]:
    """(the smallest font size of the SVG's texts, in its own units; the viewBox width)."""
    assert uri.startswith("data:image/svg+xml;base64,"), uri[:40]
    root = ET.fromstring(base64.b64decode(uri.split(",", 1)[1]))
    parents = {child: parent for parent in root.iter() for child in parent}

    def size(element: Any) -> float:
        while element is not None:
            if element.get("font-size"):
                return float(element.get("font-size").removesuffix("px"))
            match = _FONT.search(element.get("style") or "")
            if match:
                return float(match.group(1) or match.group(2))
            element = parents.get(element)
        return 16.0  # the browser default

    sizes = [size(e) for e in root.iter() if e.tag.endswith("}text") and "".join(e.itertext()).strip()]
    assert sizes, "an SVG figure without text"
    return min(sizes), float(root.get("viewBox").split()[2])


def _luminance(png: bytes) -> tuple[float, float]:
    """(mean luminance 0..1 of a screenshot, share of near-white pixels)."""
    import numpy as np
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png))[..., :3]
    lum = pixels @ np.array([0.2126, 0.7152, 0.0722])
    return float(lum.mean()), float((lum > 0.9).mean())


@pytest.mark.parametrize(("scheme", "width"), [("light", 1280), ("dark", 1280), ("light", 400), ("dark", 400)], ids=str)
@pytest.mark.parametrize("kind", ["report", "comparison"])
def test_page_figures_are_readable_and_open_full_size(
    browser, pages, artifacts_dir: Path, kind: str, scheme: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    try:
        page.goto(pages[kind].as_uri())
        section = page.locator("[data-testid='heta-figures']")
        images = section.locator("figure img")
        count = images.count()
        assert count >= 2
        page.wait_for_function("() => [...document.querySelectorAll('.heta-figures img')].every(i => i.complete)")
        measured = []
        for index in range(count):
            image = images.nth(index)
            image.scroll_into_view_if_needed()
            shown = image.evaluate("(i) => i.getBoundingClientRect().width")
            smallest, view_width = _svg_text_sizes(image.get_attribute("src") or "")
            text_px = smallest * shown / view_width
            measured.append(round(text_px, 1))
            assert text_px >= MIN_TEXT_PX, f"figure {index}: text {text_px:.1f} px ({shown:.0f} px wide)"
            # nothing of the figure is cut off: it fits, or its own box scrolls sideways
            box = image.evaluate(
                "(i) => { const b = i.closest('figure').getBoundingClientRect(); return [b.left, b.right]; }"
            )
            assert box[0] >= -1 and box[1] <= width + 1, f"figure {index} overflows the page: {box}"
        print(kind, scheme, width, "smallest text per figure (px):", measured)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width  # no sideways page scroll
        section.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / f"figures-page-{kind}-{scheme}-{width}.png"))

        # a click opens the figure full size (no script), a second click closes it
        first = images.first
        first.click()
        zoomed = page.locator(".heta-zoom[open] img")
        expect(zoomed).to_have_count(1)
        natural = zoomed.evaluate("(i) => [i.getBoundingClientRect().width, i.naturalWidth]")
        assert natural[0] >= natural[1] - 1, natural  # at least its own size
        page.screenshot(path=str(artifacts_dir / f"figures-page-{kind}-{scheme}-{width}-zoom.png"))
        zoomed.click()
        expect(page.locator(".heta-zoom[open]")).to_have_count(0)
    finally:
        context.close()
    assert errors == []


@pytest.mark.slow
def test_notebook_plots_are_readable_in_jupyterlab_light_and_dark(page, jupyter_server, artifacts_dir) -> None:
    from matplotlib.text import Text

    from heta_nb import plots

    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    drawn = [plots.plot_scores(report, "answer_contains"), plots.plot_latency(report)]
    # the smallest text of each figure, in CSS px at the size the figure is drawn for
    smallest = [
        min(t.get_fontsize() for t in ax.figure.findobj(Text) if t.get_visible() and t.get_text().strip())
        * ax.figure.dpi
        / 72
        for ax in drawn
    ]
    name = jupyter_server.add_notebook_from_sources(
        [
            "from heta_nb import plots\nimport heta_nb\n"
            f"report = heta_nb.load_report(r'{FIXTURES / 'report-normal.json'}')",
            'plots.plot_scores(report, "answer_contains")',
            "plots.plot_latency(report).figure",
        ]
    )
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_notebook(page, jupyter_server, name, ui="lab")
    run_all_cells(page)
    wait_all_cells_executed(page)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    outputs = page.locator(".jp-Notebook .jp-OutputArea-output")
    expect(outputs).to_have_count(2)
    try:
        for theme, light in (("JupyterLab Light", "true"), ("JupyterLab Dark", "false")):
            page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
            page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
            page.wait_for_timeout(300)  # the theme's styles settle
            for index in range(2):
                shown = outputs.nth(index).locator("img:visible")
                expect(shown).to_have_count(1)
                shown.scroll_into_view_if_needed()
                # the PNG is drawn at 2 image pixels per CSS pixel of the figure
                width, natural = shown.evaluate("(i) => [i.getBoundingClientRect().width, i.naturalWidth]")
                text_px = smallest[index] * width / (natural / 2)
                print(theme, index, f"text {text_px:.1f} px, shown {width:.0f} of {natural / 2:.0f} px")
                assert text_px >= MIN_TEXT_PX
                mean, white = _luminance(shown.screenshot())
                print(theme, index, f"mean luminance {mean:.2f}, near-white share {white:.2f}")
                if light == "false":
                    assert mean < 0.35 and white < 0.2, f"a near-white box in dark Lab: {mean:.2f} / {white:.2f}"
            page.screenshot(path=str(artifacts_dir / f"figures-lab-{'light' if light == 'true' else 'dark'}.png"))
    finally:  # the server (and its settings) serve every later test: back to light
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
    assert page.js_errors == []
