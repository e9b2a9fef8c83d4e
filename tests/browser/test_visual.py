"""How the HTML views look in headless Chromium: measured, not eyeballed.

A stress report (2,000 cases x 3 modes, 6 metrics, 2,000-character queries, a 300-character
URL, a 200-character case id, a 5,000-character traceback, RTL text and emoji in names) is
exported with ``heta_nb.to_html`` and shown as notebook output (``_repr_html_``, with and
without JupyterLab's dark-theme variables). At 360, 800 and 1280 px, in the light and dark
colour schemes:

- the page never scrolls sideways (wide tables scroll inside their own box);
- every piece of text has a WCAG contrast of at least 4.5:1 against what is behind it;
- every inline SVG (sparklines, CI bars) has a nonzero box;
- printing the export (media print) still fits the paper width, on white paper.
Screenshots go to test-artifacts/visual-*.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

WIDTHS = (360, 800, 1280)
LONG_URL = "https://example.org/" + "a" * 280
JUPYTERLAB_DARK = (
    "--jp-layout-color0:#111111;--jp-layout-color1:#212121;--jp-layout-color2:#424242;"
    "--jp-ui-font-color0:rgba(255,255,255,1);--jp-ui-font-color1:rgba(255,255,255,0.87);"
    "--jp-ui-font-color2:rgba(255,255,255,0.54);--jp-border-color1:#616161;--jp-border-color2:#424242;"
    "--jp-brand-color1:#42a5f5;--jp-success-color1:#81c784;--jp-error-color1:#e57373;--jp-warn-color1:#ffb74d;"
    "background:#111111;color:#ffffff"
)
JUPYTERLAB_LIGHT = (
    "--jp-layout-color0:#ffffff;--jp-layout-color1:#ffffff;--jp-layout-color2:#eeeeee;"
    "--jp-ui-font-color0:rgba(0,0,0,1);--jp-ui-font-color1:rgba(0,0,0,0.87);--jp-ui-font-color2:rgba(0,0,0,0.54);"
    "--jp-border-color1:#bdbdbd;--jp-border-color2:#e0e0e0;--jp-brand-color1:#1976d2;--jp-success-color1:#388e3c;"
    "--jp-error-color1:#d32f2f;--jp-warn-color1:#f57c00;background:#ffffff"
)

# Measures the page: sideways overflow, the worst text contrast (text colour, times every
# ancestor's opacity, over the composited backgrounds behind it), and the inline SVG boxes.
MEASURE = """() => {
  const parse = c => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (m) {
      const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    const s = c.match(/color\\(srgb ([\\d.e-]+) ([\\d.e-]+) ([\\d.e-]+)(?: \\/ ([\\d.]+))?\\)/);
    return s ? [s[1] * 255, s[2] * 255, s[3] * 255, s[4] === undefined ? 1 : +s[4]] : null;
  };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const behind = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let base = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const channel = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const lum = c => 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const low = [];
  let worst = 99, checked = 0;
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg, script, style, figure')) continue;
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden') continue;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= +getComputedStyle(e).opacity;
    const fg = parse(cs.color), bg = behind(el);
    fg[3] *= opacity;
    const r = ratio(over(fg, bg), bg);
    checked += 1;
    worst = Math.min(worst, r);
    const text = el.textContent.trim().slice(0, 30);
    if (r < 4.5 && low.length < 8) low.push(`${el.tagName.toLowerCase()}.${el.className} ${r.toFixed(2)} "${text}"`);
  }
  const svgs = [...document.querySelectorAll('svg')].map(s => s.getBoundingClientRect());
  return {scrollWidth: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth,
          worst, checked, low, svgs: svgs.length, emptySvgs: svgs.filter(r => !(r.width > 0 && r.height > 0)).length};
}"""


def _stress_report() -> Any:
    from heta_nb.model.io import decode_report
    from heta_nb.model.json import dumps_compact
    from heta_nb.model.report import EvaluationCaseResult
    from heta_nb.model.summary import heta_score_summary
    from heta_nb.testing import synthetic_report_dict

    data = synthetic_report_dict(
        2000, seed=3, error_rate=0.03, report_id="stress-שלום-🚀", knowledge_base_name="קבוצת ידע 🌊 بيانات"
    )
    data["benchmark"]["name"] = "ملف المعايير 📚 benchmark"
    data["benchmark"]["homepage"] = LONG_URL
    traceback_given = False
    for index, result in enumerate(data["case_results"]):
        if index % 7 == 0:
            result["query"] = ("What is the " + "very " * 400 + "long question?")[:2000]
        if index < 2:
            result["case_id"] = "C" * 200
        if index == 5:
            result["query"] = "استعلام طويل 🚀 " + LONG_URL
        if result["error"] is not None:
            if not traceback_given:
                frame = '  File "/srv/{}/m{}.py", line {}, in f{}\n    raise E()\n'
                frames = "".join(frame.format("x" * 60, n, n, n) for n in range(60))
                result["error"]["message"] = f"failed fetching {LONG_URL} " + "detail " * 50
                result["error"]["metadata"] = {"traceback": ("Traceback (most recent call last):\n" + frames)[:5000]}
                traceback_given = True
            continue
        result["scores"] += [
            {"name": "mrr@5 🎯", "value": (index % 10) / 10, "passed": None, "metadata": {"url": LONG_URL}},
            {"name": "دقة_الإجابة", "value": (index % 3) / 2, "passed": None, "metadata": {}},
            {"name": "within_budget_" + "x" * 40, "value": index % 2 == 0, "passed": index % 2 == 0, "metadata": {}},
        ]
    data["score_summary"] = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in data["case_results"])
    return decode_report(dumps_compact(data), source="<stress>")


@pytest.fixture(scope="module")
def stress_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import heta_nb

    report = _stress_report()
    assert len(report.case_results) == 6000
    folder = tmp_path_factory.mktemp("visual")
    pages = {"export": folder / "stress.html"}
    heta_nb.to_html(report, pages["export"])
    error_case = next(c for c in report.case_results if c.error is not None and "traceback" in c.error.metadata)
    body = report._repr_html_() + error_case._repr_html_() + report.case_results[1]._repr_html_()
    for name, style in (("notebook", ""), ("lab-light", JUPYTERLAB_LIGHT), ("lab-dark", JUPYTERLAB_DARK)):
        pages[name] = folder / f"{name}.html"
        pages[name].write_text(
            '<!DOCTYPE html><html><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>body{{margin:8px;{style}}}</style></head><body>{body}</body></html>",
            encoding="utf-8",
        )
    return pages


def _check(page: Any, label: str, problems: list[str]) -> dict[str, Any]:
    found = page.evaluate(MEASURE)
    if found["scrollWidth"] > found["viewport"]:
        problems.append(f"{label}: page is {found['scrollWidth']} px wide in a {found['viewport']} px viewport")
    if found["worst"] < 4.5:
        problems.append(f"{label}: contrast {found['worst']:.2f} < 4.5: {found['low']}")
    if found["emptySvgs"]:
        problems.append(f"{label}: {found['emptySvgs']} of {found['svgs']} inline SVGs have an empty box")
    assert found["checked"] > 50, found
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_stress_views_fit_and_stay_readable(browser, stress_pages, artifacts_dir: Path, scheme: str) -> None:
    problems: list[str] = []
    views = ["export", "notebook"] + (["lab-light"] if scheme == "light" else ["lab-dark"])
    for view in views:
        context = browser.new_context(viewport={"width": WIDTHS[-1], "height": 900}, color_scheme=scheme)
        page = context.new_page()
        page.goto(stress_pages[view].as_uri())
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            found = _check(page, f"{view} {scheme} {width}px", problems)
            assert found["svgs"] >= 18  # one sparkline per mode x metric at least
            page.screenshot(path=str(artifacts_dir / f"visual-{view}-{scheme}-{width}.png"))
        context.close()
    assert problems == []


def test_stress_export_prints_on_white_paper_within_the_page(browser, stress_pages, artifacts_dir: Path) -> None:
    context = browser.new_context(viewport={"width": 718, "height": 1000}, color_scheme="dark")  # A4 at 96 dpi
    page = context.new_page()
    page.goto(stress_pages["export"].as_uri())
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")  # every section opens; a figure's
    page.emulate_media(media="print")  # zoom (the same image full size, in an overlay) stays shut on paper
    found = page.evaluate(MEASURE)
    state = page.evaluate(
        "() => ({closed: document.querySelectorAll('details:not([open]):not(.heta-zoom)').length,"
        " background: getComputedStyle(document.body).backgroundColor})"
    )
    page.screenshot(path=str(artifacts_dir / "visual-export-print.png"))
    context.close()
    assert found["scrollWidth"] <= found["viewport"], found
    assert found["worst"] >= 4.5, found["low"]
    assert state == {"closed": 0, "background": "rgb(255, 255, 255)"}
