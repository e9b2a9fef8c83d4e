"""Hostile reports in a real Chromium: every export and rich repr stays inert and offline.

A real Heta fixture is rewritten so that every untrusted field (case ids, queries,
answers, result ids, texts and sources, error types and messages, metadata keys and
values, score names, mode names, recipe step names and types, KB names, benchmark
fields, the report id) holds an XSS, CSS-injection, template, bidi, control-character
or very long payload. Each way heta_nb writes HTML (``to_html``/``export`` of a report
and of a comparison, the ``_repr_html_`` of a report, case results, scores and a
comparison wrapped in a page, the exported notebook through nbconvert) is opened from a
``file://`` URL with every other request intercepted and aborted. The interactive parts
are exercised (explorer search, mode / status / metric filters, sorting, paging,
expanding cases and modes, in-page links), then: ``window.__pwned`` is undefined, no
dialog opened, no request left the page, no uncaught JS error, no injected element or
style, and each payload is on the page as text. The same files are also read with
JavaScript disabled and under print media, where nothing may be hidden.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.export import export
from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.model.summary import heta_score_summary

PAYLOADS = {
    "script": "</script><script>window.__pwned=1</script>",
    "img": '"><img src=x onerror=window.__pwned=1>',
    "svg": "'><svg onload=window.__pwned=1>",
    "javascript-url": "javascript:window.__pwned=1",
    "css": "</style><style>body{background:url(http://evil.invalid/css)}</style>",
    "template": "{{7*7}} ${7*7} #{7*7} {% raw %}",
    "bidi": "\u202eabc\u200b\u200d\ufeff\u2066x\u2069 \u200fy",
    "control": "a\x01\x07\x1b[31m\x7f\x85\x9bb",
    "remote": '<iframe src="http://evil.invalid/f"></iframe><link rel=stylesheet href="http://evil.invalid/c.css">',
    "anchor": '<a href="javascript:window.__pwned=1">x</a><meta http-equiv=refresh content="0;url=http://evil.invalid/">',
    "long": "L" * 4000,
}
VALUES = list(PAYLOADS.values())
SHORT = {name: value for name, value in PAYLOADS.items() if name != "long"}
LONG_PREFIX = "L" * 100  # long texts are cut: at least this much is shown
# The ways a payload could escape its text node, checked on the live DOM.
INJECTED_JS = """() => {
  const found = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      if (/^on/i.test(attr.name)) found.push(`${el.tagName} ${attr.name}`);
      if (/^(href|src|xlink:href|action|formaction)$/i.test(attr.name)
          && /^\\s*(javascript|vbscript):/i.test(attr.value)) found.push(`${el.tagName} ${attr.name}=${attr.value}`);
    }
    if (/^(IFRAME|FRAME|OBJECT|EMBED|LINK|BASE|FORM)$/.test(el.tagName)) found.push(el.tagName);
    if (el.tagName === 'META' && el.httpEquiv && el.httpEquiv.toLowerCase() === 'refresh') found.push('META refresh');
    if (el.tagName === 'IMG' && !el.src.startsWith('data:')) found.push(`IMG ${el.src}`);
    const remote = el.src && !el.src.startsWith('data:');
    if (el.tagName === 'SCRIPT' && (remote || el.type !== 'application/json' && /__pwned/.test(el.textContent)))
      found.push(`SCRIPT ${el.src}`);
    if (el.tagName === 'STYLE' && /evil|__pwned/.test(el.textContent)) found.push('STYLE with a payload');
  }
  const bg = getComputedStyle(document.body).backgroundImage;
  if (bg && bg !== 'none') found.push(`body background ${bg}`);
  return found;
}"""


def _pick(index: int, shift: int) -> str:
    return VALUES[(index + shift) % len(VALUES)]


def hostile_data(shift: int = 0, tag: str = "R") -> dict[str, Any]:
    """report-normal.json with a payload in every untrusted field (``shift`` rotates them)."""
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    modes = {mode: f"{20 + j}|{_pick(20 + j, shift)}" for j, mode in enumerate(data["query_modes"])}
    names = sorted({s["name"] for result in data["case_results"] for s in result["scores"]})
    score_names = {name: f"{40 + j}|{_pick(40 + j, shift)}" for j, name in enumerate(names)}
    data["query_modes"] = [modes[mode] for mode in data["query_modes"]]
    for i, result in enumerate(data["case_results"]):
        payload = _pick(i, shift)
        result["case_id"] = f"c{i:02d}{payload}"
        result["query"] = payload
        result["query_mode"] = modes[result["query_mode"]]
        result["metadata"] = {payload: payload, "k": payload}
        for score in result["scores"]:
            score["name"] = score_names[score["name"]]
            score["metadata"] = {payload: payload}
        response = result["response"]
        if i % 7 == 3:  # some errors, in every mode
            result["response"] = None
            result["scores"] = []
            result["error"] = {"message": payload, "error_type": payload, "retryable": False, "metadata": {payload: 1}}
        elif response is not None:
            response["mode"] = result["query_mode"]
            response["answer"] = payload
            response["metadata"] = {payload: payload}
            for item in response["results"]:
                item["id"] = payload
                item["text"] = payload
                item["source"] = {payload: payload, "document_id": payload, "object_name": payload}
                item["metadata"] = {payload: payload}
    data["report_id"] = tag + _pick(0, shift)
    data["knowledge_base_name"] = _pick(1, shift)
    data["knowledge_base_manifest"]["name"] = _pick(2, shift)
    data["knowledge_base_manifest"]["description"] = _pick(3, shift)
    for j, step in enumerate(data["recipe_manifest"]["steps"]):
        step["name"] = f"{60 + j}|{_pick(60 + j, shift)}"
        step["type"] = _pick(61 + j, shift)
    benchmark = data["benchmark"]
    for j, key in enumerate(("name", "version", "split", "task_type", "license", "citation")):
        benchmark[key] = f"{80 + j}|{_pick(80 + j, shift)}"
    benchmark["homepage"] = "javascript:window.__pwned=1"
    benchmark["metadata"] = {value: value for value in VALUES}
    data["metadata"] = {value: value for value in VALUES}
    data["score_summary"] = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in data["case_results"])
    return data


def hostile_report(shift: int = 0, tag: str = "R") -> EvaluationReport:
    return EvaluationReport.from_dict(hostile_data(shift, tag))


def hostile_comparison(shift: int = 0) -> Any:
    first, second = hostile_report(shift, "R"), hostile_report(shift, "S")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.compare(first, second, modes=[first.modes[0]], resamples=200)


def _page_around(fragment: str, title: str) -> str:
    """A rich repr as a notebook front end would show it: inside a page, with no scripts of ours."""
    head = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
    return f"{head}<body>{fragment}</body></html>"


@dataclass
class Visit:
    """What one page did: requests that were stopped, dialogs, uncaught errors."""

    url: str
    blocked: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def open_file(browser: Any) -> Iterator[Callable[..., tuple[Any, Visit]]]:
    """``open_file(path, js=True)``: the file in a fresh context, every other request aborted."""
    contexts: list[Any] = []

    def _open(path: Path, *, js: bool = True) -> tuple[Any, Visit]:
        context = browser.new_context(viewport={"width": 1280, "height": 1000}, java_script_enabled=js)
        context.set_default_timeout(15_000)
        contexts.append(context)
        visit = Visit(path.as_uri())

        def route(route: Any) -> None:
            url = route.request.url
            if url.split("#")[0] == visit.url or url.startswith(("data:", "about:")):
                route.continue_()
            else:
                visit.blocked.append(url)
                route.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.on("pageerror", lambda error: visit.errors.append(str(error)))
        page.on("console", lambda message: visit.errors.append(message.text) if message.type == "error" else None)
        page.on("dialog", lambda dialog: (visit.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("popup", lambda popup: visit.blocked.append(f"popup {popup.url}"))
        page.goto(visit.url)
        return page, visit

    yield _open
    for context in contexts:
        context.close()


def assert_inert(page: Any, visit: Visit) -> None:
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.url.split("#")[0] == visit.url, "the page navigated away"
    assert visit.dialogs == []
    assert visit.blocked == []
    assert visit.errors == []
    assert page.evaluate(INJECTED_JS) == []


def assert_payloads_shown(page: Any, payloads: dict[str, str] = PAYLOADS) -> None:
    text = page.evaluate("() => document.body.textContent")
    missing = [name for name, value in payloads.items() if (value if name != "long" else LONG_PREFIX) not in text]
    assert missing == [], f"not shown literally: {missing}"


def assert_texts(page: Any, selector: str, expected: list[str]) -> None:
    """Every expected text is the textContent of an element matching ``selector`` (or its clipped start)."""
    texts = set(page.eval_on_selector_all(selector, "els => els.map(e => e.textContent)"))

    def shown(value: str) -> bool:
        return value in texts or any(t.startswith(value[:60]) and "…" in t for t in texts)

    missing = [value for value in expected if not shown(value)]
    assert missing == [], (selector, missing[:3])


def expand_everything(page: Any) -> int:
    """Click every closed <details> summary, as a reader would; returns how many opened. A figure's
    zoom (``details.heta-zoom``: the same image full size, in an overlay) hides no text: left shut."""
    closed = "details:not([open]):not(.heta-zoom) > summary"
    summaries = page.locator(closed)
    opened = 0
    for index in range(summaries.count()):
        summary = page.locator(closed).first
        summary.scroll_into_view_if_needed()
        summary.click()
        opened += 1
        assert index < 500
    assert page.locator("details:not([open]):not(.heta-zoom)").count() == 0
    bodies = page.eval_on_selector_all(
        "details:not(.heta-zoom) > :not(summary)", "els => els.filter(e => !e.checkVisibility()).length"
    )
    assert bodies == 0
    return opened


def follow_links(page: Any) -> None:
    links = page.locator("a[href^='#']")
    for index in range(min(links.count(), 12)):
        link = links.nth(index)
        target = link.get_attribute("href")
        link.click()
        assert page.evaluate("() => location.hash") == target


def matching(page: Any) -> int:
    return int(page.locator("[data-testid='heta-explorer']").get_attribute("data-matching") or -1)


def _search(page: Any, value: str) -> None:
    page.fill(".hx-search", value)
    page.press(".hx-search", "Enter")  # (typing waits 250 ms before it searches; Enter searches now)


def exercise_explorer(page: Any, rows: list[dict[str, Any]], search_fields: tuple[str, ...]) -> list[str]:
    """Search for every payload, filter by every mode, status and metric, sort every column,
    page, and open cases (the panel is built from the same hostile data)."""
    explorer = page.locator("[data-testid='heta-explorer']")
    assert explorer.is_visible() and matching(page) == len(rows)
    assert page.locator(".hx-needs-js").first.is_hidden()
    body_text = "() => document.querySelector('[data-testid=heta-explorer] tbody').textContent"
    searched = []
    for name, value in SHORT.items():
        needle = value.strip().lower()
        expected = sum(1 for row in rows if any(needle in str(row.get(k) or "").lower() for k in search_fields))
        if not expected:
            continue
        _search(page, value)
        assert matching(page) >= expected, name
        page.locator(".hx-row").first.click()  # the case panel holds the payload as text
        assert page.locator("[data-testid='hx-panel']").is_visible(), name
        assert value.strip() in page.evaluate(body_text), name
        page.keyboard.press("Escape")
        searched.append(name)
    _search(page, "")
    modes = page.eval_on_selector_all(".hx-mode option", "els => els.map(e => e.value)")[1:]
    assert all(mode in {row["mode"] for row in rows} for mode in modes)
    for mode in modes:
        page.select_option(".hx-mode", value=mode)
        assert matching(page) == sum(1 for row in rows if row["mode"] == mode)
    if modes:
        page.select_option(".hx-mode", value="")
    for status in ("error", "ok", ""):
        page.select_option(".hx-status", value=status)
        assert matching(page) == sum(1 for row in rows if status in ("", row["status"]))
    for metric in page.eval_on_selector_all(".hx-metric option", "els => els.map(e => e.value)")[1:]:
        page.select_option(".hx-metric", value=metric)
        page.fill(".hx-low", "0.5")
        page.press(".hx-low", "Enter")
        above = [r for r in rows if isinstance(r.get(metric), (int, float)) and r[metric] >= 0.5]
        assert matching(page) == len(above), metric
        page.fill(".hx-low", "")
        page.press(".hx-low", "Enter")
    page.select_option(".hx-metric", value="")
    for index in range(page.locator(".hx-sort").count()):
        page.locator(".hx-sort").nth(index).click()
        page.locator(".hx-sort").nth(index).click()
        assert matching(page) == len(rows)
    if page.locator(".hx-next").is_enabled():
        page.click(".hx-next")
        page.click(".hx-prev")
    assert page.locator("[data-testid='heta-explorer'] tbody tr.hx-row").count() == min(len(rows), 50)
    page.locator(".hx-row").first.click()
    for _ in range(3):  # j/k step through the cases, the panel follows
        page.keyboard.press("j")
    assert page.locator("[data-testid='hx-panel']").is_visible()
    page.keyboard.press("Escape")
    return searched


def explorer_rows(page: Any) -> list[dict[str, Any]]:
    """The explorer's rows as plain dicts, from the JSON the page embeds (its first table)."""
    data = page.evaluate(
        "() => JSON.parse(document.getElementById("
        "document.querySelector('[data-heta-explorer]').getAttribute('data-heta-explorer')).textContent)"
    )
    table = next(iter(data["tables"].values()))
    codes = table["status"][""]
    rows = []
    for i, case in enumerate(table["cases"]):
        sides = [case] if table["kind"] == "report" else [side[1] for side in case["s"] if side[1] is not None]
        row = {
            "case_id": table["case_ids"][i],
            "mode": table["modes"][int(table["mode"][i])] if "mode" in table else "",
            "status": data["statuses"][int(codes[i])],
            "query": case["q"],
            "answer": " ".join(s.get("a") or "" for s in sides),
            "error": " ".join(f"{s['e'][0]} {s['e'][1]}" for s in sides if s.get("e")),
            "top_result": " ".join(s["r"][0][4] for s in sides if s.get("r")),
        }
        for column in table["columns"]:  # a metric (or a delta): its sort key is its value
            if column["metric"] and (table["kind"] == "report" or column["key"].startswith("delta ")):
                row[column["metric"]] = column["sort"][i]
        rows.append(row)
    return rows


def check_report_fields(page: Any, report: EvaluationReport) -> None:
    """The hostile names land, whole and as text, in the elements meant for them."""
    short = [value for value in VALUES if value != PAYLOADS["long"]]
    modes = [m for m in report.modes if any(m.endswith(v) for v in short)]
    assert_texts(page, ".heta-chip", modes)
    assert_texts(page, "[data-testid='heta-summary'] .heta-mode-name", modes)
    metrics = [m for m in report.metric_names if any(m.endswith(v) for v in short)]
    assert_texts(page, "th.heta-metric", metrics)
    steps = page.eval_on_selector_all("ul.heta-steps li", "els => els.map(e => e.textContent).join('\\n')")
    missing = [step["name"] for step in report.raw["recipe_manifest"]["steps"] if step["name"][:40] not in steps]
    assert missing == []
    if PAYLOADS["long"] not in report.report_id:
        assert_texts(page, ".heta-title code", [report.report_id])
    if PAYLOADS["long"] not in report.knowledge_base_name:
        assert_texts(page, "dl.heta-meta dd code", [report.knowledge_base_name])
    ids = [r.case_id for r in report.case_results if len(r.case_id) < 60]
    assert_texts(page, "td.heta-id", ids)


SHIFTS = range(len(VALUES))
SEARCHED = ("case_id", "query", "answer", "error")  # what the explorer's search box reads


@pytest.mark.parametrize("shift", SHIFTS)
def test_report_export_is_inert_in_chromium(open_file: Any, tmp_path: Path, shift: int) -> None:
    report = hostile_report(shift)
    path = tmp_path / "report.html"
    heta_nb.to_html(report, path)
    page, visit = open_file(path)
    assert_inert(page, visit)
    assert page.title().startswith("heta_nb report ")
    check_report_fields(page, report)
    rows = explorer_rows(page)
    assert len(rows) == len(report.case_results)
    assert exercise_explorer(page, rows, SEARCHED) == list(SHORT)
    assert expand_everything(page) >= 15  # (the static part: 10 drill-downs, modes, manifests)
    follow_links(page)
    assert_payloads_shown(page)
    assert_inert(page, visit)


def test_export_by_extension_and_comparison_are_inert(open_file: Any, tmp_path: Path) -> None:
    report = hostile_report(3)
    path = export(report, tmp_path / "by-extension.htm")
    page, visit = open_file(path)
    assert_inert(page, visit)
    assert_payloads_shown(page)

    comparison = hostile_comparison()
    path = tmp_path / "comparison.html"
    heta_nb.to_html(comparison, path)
    page, visit = open_file(path)
    assert_inert(page, visit)
    assert page.locator("[data-testid='heta-comparison']").is_visible()
    rows = explorer_rows(page)
    assert rows
    assert len(exercise_explorer(page, rows, SEARCHED)) >= 5
    expand_everything(page)
    assert_payloads_shown(page, {k: v for k, v in SHORT.items() if any(v in str(r) for r in rows)})
    assert_inert(page, visit)


def _repr_pages(tmp_path: Path, shift: int) -> tuple[list[Path], dict[str, EvaluationCaseResult]]:
    report = hostile_report(shift)
    ok = next(r for r in report.case_results if r.ok)
    failed = next(r for r in report.case_results if not r.ok)
    objects: list[tuple[str, Any]] = [("report", report), ("case-ok", ok), ("case-error", failed)]
    objects += [(f"score-{i}", score) for i, score in enumerate(ok.scores[:3])]
    objects.append(("comparison", hostile_comparison(shift)))
    paths = []
    for name, obj in objects:
        html = obj._repr_html_()
        assert html and 'data-testid="heta-render-error"' not in html, name
        path = tmp_path / f"repr-{name}.html"
        path.write_text(_page_around(html, name), encoding="utf-8")
        paths.append(path)
    return paths, {"repr-case-ok.html": ok, "repr-case-error.html": failed}


@pytest.mark.parametrize("shift", [0, 5])
def test_rich_reprs_are_inert_in_chromium(open_file: Any, tmp_path: Path, shift: int) -> None:
    paths, cases = _repr_pages(tmp_path, shift)
    for path in paths:
        page, visit = open_file(path)
        assert_inert(page, visit)
        assert page.locator(".heta-report").first.is_visible(), path.name
        expand_everything(page)
        follow_links(page)
        text = page.evaluate("() => document.body.textContent")
        assert any(value in text for value in SHORT.values()), path.name
        if path.name == "repr-report.html":
            assert_payloads_shown(page, SHORT)
        elif path.name.startswith("repr-case"):
            assert cases[path.name].query in text
        assert_inert(page, visit)
        page.context.close()


def test_notebook_export_through_nbconvert_is_inert(open_file: Any, tmp_path: Path) -> None:
    nbconvert = pytest.importorskip("nbconvert")
    report = hostile_report()
    notebook = export(report, tmp_path / "hostile.ipynb")
    # nbconvert's own template loads require.js and MathJax from a CDN; point them at
    # empty data: scripts so that any request left is one our outputs made.
    exporter = nbconvert.HTMLExporter(require_js_url="data:text/javascript,", mathjax_url="data:text/javascript,")
    body, _ = exporter.from_filename(str(notebook))
    path = tmp_path / "hostile-notebook.html"
    path.write_text(body, encoding="utf-8")
    page, visit = open_file(path)
    assert_inert(page, visit)
    assert page.locator(".heta-report").first.is_visible()
    expand_everything(page)
    assert_payloads_shown(page, SHORT)
    assert_inert(page, visit)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "report.html"
    heta_nb.to_html(hostile_report(), path)
    return path


def test_export_reads_without_javascript(open_file: Any, report_file: Path) -> None:
    page, visit = open_file(report_file, js=False)
    assert page.locator("[data-testid='heta-report']").is_visible()
    assert page.locator("[data-testid='heta-summary'] table").first.is_visible()
    assert page.locator(".hx-needs-js").is_visible()
    assert page.locator("[data-testid='heta-explorer']").is_hidden()
    assert page.locator("[data-testid='heta-trace'] dl").is_visible()
    expand_everything(page)  # <details> opens without scripts
    assert_payloads_shown(page)
    assert visit.blocked == [] and visit.dialogs == [] and page.evaluate(INJECTED_JS) == []


# What print media must show: every static part of the view, including collapsed ones.
PRINTED = (
    "[data-testid='heta-report']",
    "[data-testid='heta-summary'] table",
    "details.heta-mode .heta-scroll",
    ".heta-case-body",
    ".heta-more-details > :not(summary)",
    "[data-testid='heta-trace'] pre",
)


@pytest.mark.parametrize("js", [True, False], ids=["js", "no-js"])
def test_print_media_hides_no_content(open_file: Any, report_file: Path, js: bool) -> None:
    page, visit = open_file(report_file, js=js)
    page.emulate_media(media="print")  # no beforeprint event: CSS alone must do it
    for selector in PRINTED:
        hidden = page.eval_on_selector_all(
            selector, "els => [els.length, els.filter(e => !e.checkVisibility()).length]"
        )
        assert hidden[0] > 0 and hidden[1] == 0, (selector, hidden)
    if js:
        assert page.locator(".hx-scroll").is_visible() and page.locator(".hx-controls").is_hidden()
    assert visit.blocked == [] and visit.errors == []
