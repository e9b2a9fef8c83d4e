"""Issue 35's writer families for ``tests/audit/attack_rerun.py``: ``attacks(quick)``.

* lone surrogates x fields x writers: every (field, writer) pair of
  ``tests/render/test_hostile_surrogates.py``; a crash or text UTF-8 cannot encode is a problem;
* prototype keys x JS lookups: the lint of ``tests/render/test_hostile_js_lookups.py`` over
  every shipped script (a plain-object lookup by a possibly untrusted key is a problem), and a
  report export whose case ids are ``Object.prototype``'s members: every row and every gold
  answer must be in the page's data;
* GFM autolinks x untrusted fields: a check's markdown and the notebook's markdown cells, with
  URLs, ``www.`` names and e-mail addresses in every untrusted field, rendered by cmark-gfm:
  each ``<a`` is a problem;
* huge integers x renderers: a 400-digit integer in every numeric field, through every view.

No browser; each family is bounded (``quick``: a few fields).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
for folder in (TESTS, TESTS / "render", TESTS / "gate"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

Attack = tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]


def _crash(exc: BaseException) -> str:
    frames = [line for line in traceback.format_exception(exc) if "heta_nb/" in line]
    where = f"at {frames[-1].strip().split(',')[0].replace('File ', '')}" if frames else "the writer's text"
    return f"{type(exc).__name__}: {str(exc)[:80]} ({where})"


def attack_surrogates(quick: bool) -> dict[str, Any]:
    import test_hostile_surrogates as matrix

    fields = list(matrix.FIELDS)[:: 4 if quick else 1]
    strings = ["mixed"] if quick else ["mixed", "high", "low"]
    problems: list[str] = []
    pairs = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in strings:
            for field in fields if name == "mixed" else fields[::3]:
                for writer in matrix.WRITERS:
                    pairs += 1
                    try:
                        matrix.write(field, writer, matrix.STRINGS[name])
                    except Exception as exc:  # noqa: BLE001 - every crash is a finding
                        where = matrix.ELSEWHERE.get((field, writer))
                        note = f" [known, in {where.split(' ')[0]}]" if where else ""
                        problems.append(f"{field} x {writer} ({name}): {_crash(exc)}{note}")
    return {"fields": len(fields), "writers": len(matrix.WRITERS), "pairs": pairs, "problems": problems}


def attack_prototype_keys(quick: bool) -> dict[str, Any]:
    import test_hostile_js_lookups as lint
    from helpers import FIXTURES

    import heta_nb
    from heta_nb.benchmark.load import load_benchmark

    scripts = lint.scripts()
    problems = [str(finding) for finding in lint.findings()]
    ids = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "prototype"]
    ids += [] if quick else ["isPrototypeOf", "propertyIsEnumerable", "toLocaleString"]
    folder = Path(tempfile.mkdtemp(prefix="h35-proto-"))
    try:
        renamed = {f"c{k + 1:02d}": name for k, name in enumerate(ids)}
        shutil.copytree(FIXTURES, folder / "benchmark")
        cases_file = folder / "benchmark" / "cases.jsonl"
        cases = [json.loads(line) for line in cases_file.read_text(encoding="utf-8").splitlines() if line]
        for case in cases:
            case["case_id"] = renamed.get(case["case_id"], case["case_id"])
        cases_file.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
        data = json.loads((FIXTURES / "report-normal.json").read_text(encoding="utf-8"))
        for result in data["case_results"]:
            result["case_id"] = renamed.get(result["case_id"], result["case_id"])
        benchmark = load_benchmark(folder / "benchmark", manifest=dict(data["benchmark"]))
        html = heta_nb.to_html(heta_nb.load_report(json.dumps(data)), benchmark=benchmark)
        found = re.search(r'<script type="application/json" id="[^"]+">(.*?)</script>', html, re.DOTALL)
        page = json.loads(found.group(1)) if found else {}
        table = next(iter(page.get("tables", {}).values()), {})
        shown = table.get("case_ids", [])
        if len(shown) != len(data["case_results"]):
            problems.append(f"the page's data has {len(shown)} of {len(data['case_results'])} rows")
        problems += [f"case {name!r}: not in the page's rows" for name in ids if name not in shown]
        gold = page.get("expected", {})
        problems += [f"case {name!r}: no gold data in the page" for name in ids if name not in gold]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"scripts": len(scripts), "ids": len(ids), "problems": problems}


def attack_autolinks(quick: bool) -> dict[str, Any]:
    import importlib.util

    if importlib.util.find_spec("cmarkgfm") is None:
        return {"documents": 0, "links": 0, "problems": ["cmarkgfm is not installed (the [test] extra)"]}
    import test_hostile_markdown as gfm_test

    import heta_nb
    from heta_nb.gate.markdown import md
    from heta_nb.notebook import md_escape

    problems: list[str] = []
    documents = links = 0
    forms = gfm_test.LINKS[:: 3 if quick else 1]
    for escape in (md, md_escape):
        for text in forms:
            documents += 1
            found = gfm_test.links(gfm_test.gfm(escape(text)))
            links += len(found)
            problems += [f"{escape.__name__}({text!r}): {a}" for a in found]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for names in (False,) if quick else (False, True):
            new, base = gfm_test._pair(names)
            cells = [c.source for c in heta_nb.sections(new) if c.cell_type == "markdown"]
            for label, markdown in (
                ("check markdown", heta_nb.check(new, base).to_markdown()),
                ("notebook markdown cells", "\n\n".join(cells)),
            ):
                documents += 1
                found = gfm_test.links(gfm_test.gfm(markdown))
                links += len(found)
                problems += [f"{label} (names={names}): {a}" for a in found[:10]]
    return {"documents": documents, "links": links, "problems": problems}


def attack_huge_ints(quick: bool) -> dict[str, Any]:
    import test_hostile_huge_ints as matrix

    fields = list(matrix.FIELDS)[:: 3 if quick else 1]
    problems: list[str] = []
    pairs = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for field in fields:
            for renderer in matrix.RENDERERS:
                pairs += 1
                try:
                    matrix.render(field, renderer)
                except Exception as exc:  # noqa: BLE001 - every crash is a finding
                    where = matrix.ELSEWHERE.get((field, renderer))
                    note = f" [known, in {where.split(' ')[0]}]" if where else ""
                    problems.append(f"{field} x {renderer}: {_crash(exc)}{note}")
    return {"fields": len(fields), "renderers": len(matrix.RENDERERS), "pairs": pairs, "problems": problems}


def attacks(quick: bool) -> list[Attack]:
    """Issue 35's writer families: (title, attack, describe) as ``attack_rerun.py`` runs them."""
    return [
        (
            "lone surrogates x fields x writers",
            lambda: attack_surrogates(quick),
            lambda r: f"{r['fields']} fields x {r['writers']} writers: {r['pairs']} pairs",
        ),
        (
            "prototype keys x JS lookups",
            lambda: attack_prototype_keys(quick),
            lambda r: f"{r['scripts']} scripts linted, {r['ids']} prototype-named case ids exported",
        ),
        (
            "GFM autolinks x untrusted fields",
            lambda: attack_autolinks(quick),
            lambda r: f"{r['documents']} markdown documents rendered by cmark-gfm, {r['links']} links",
        ),
        (
            "huge integers x renderers",
            lambda: attack_huge_ints(quick),
            lambda r: f"{r['fields']} fields x {r['renderers']} views: {r['pairs']} pairs",
        ),
    ]
