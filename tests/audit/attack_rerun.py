"""Re-run of issue 23's attack list, with counts: ``python tests/audit/attack_rerun.py [--quick]``.

Not a test module (pytest does not collect it: no ``test_`` prefix, and ``tests/audit/conftest.py``
ignores it even when named). It attacks the installed package as an adversary would and prints
a table; the exit status is 1 when anything got through.

1. XSS: vectors (the payload lists of the hostile tests, plus classic ones) rotated
   through every untrusted field of a real Heta fixture, rendered through every view
   (report, case and score reprs, comparison, check, leaderboard, sweep progress, the
   explorer's case panel, standalone exports, notebook sections); each document is
   parsed with an HTML parser: no script, event handler, ``javascript:`` URL or foreign
   resource may survive.
2. SIGKILL mid-run: an evaluation with a checkpoint, killed at random moments, resumed:
   no case lost or duplicated.
3. SIGKILL during save: overwriting saves killed at random moments: the stored report is
   always one whole version; stale temporaries go with the next save.
4. Fuzzed reports: mutations of the fixtures: ``load_report`` loads or raises
   ``ReportFormatError`` naming the file (and, for JSON that parses, the field).
5. Malformed benchmark files: ``load_benchmark`` raises ``BenchmarkFormatError`` only.
6. Hostile names: ``UnsafeNameError``, never a path outside the store root.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
for folder in (TESTS, TESTS / "browser", TESTS / "render", TESTS / "store"):
    sys.path.insert(0, str(folder))

import heta_nb  # noqa: E402
from heta_nb.errors import BenchmarkFormatError, ReportFormatError, UnsafeNameError  # noqa: E402

FIXTURES = Path("/work/shared/fixtures/heta-0.1.2")
if not FIXTURES.exists():
    from helpers import FIXTURES  # type: ignore[no-redef]  # noqa: E402


# -- 1. XSS ---------------------------------------------------------------------------------

EXTRA_VECTORS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=http://evil.invalid/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)//",
    '<IMG SRC="jav&#x09;ascript:alert(1)">',
    "<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>",
    "<svg><script>alert(1)</script></svg>",
    "<svg/onload=alert(1)>",
    "<body onload=alert(1)>",
    "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
    "<object data=javascript:alert(1)></object>",
    "<embed src=javascript:alert(1)>",
    "<details open ontoggle=alert(1)>",
    "<video><source onerror=alert(1)></video>",
    "<audio src=x onerror=alert(1)>",
    "<input autofocus onfocus=alert(1)>",
    "<select autofocus onfocus=alert(1)>",
    "<textarea autofocus onfocus=alert(1)>",
    "<keygen autofocus onfocus=alert(1)>",
    "<marquee onstart=alert(1)>",
    "<form action=javascript:alert(1)><button>x</button></form>",
    "<button formaction=javascript:alert(1)>x</button>",
    "<math><a xlink:href=javascript:alert(1)>x</a></math>",
    "<base href=http://evil.invalid/>",
    "<link rel=import href=http://evil.invalid/x>",
    "<meta http-equiv=refresh content='0;url=javascript:alert(1)'>",
    '<div style="background:url(javascript:alert(1))">',
    '<div style="width:expression(alert(1))">',
    "<style>@import 'http://evil.invalid/x.css';</style>",
    "';alert(1);//",
    '";alert(1);//',
    "</textarea><script>alert(1)</script>",
    "</title><script>alert(1)</script>",
    "<!--<script>alert(1)//-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href=" javascript:alert(1)">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    '<img srcset="http://evil.invalid/x.png 1x">',
    "<image href=http://evil.invalid/x.svg>",
    "<x onclick=alert(1)>click</x>",
    "`${alert(1)}`",
    "{{constructor.constructor('alert(1)')()}}",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
    "<svg><use href=\"data:image/svg+xml,<svg id='x' xmlns='http://www.w3.org/2000/svg'>"
    "<image href='1' onerror='alert(1)'/></svg>#x\"/></svg>",
    "<template><script>alert(1)</script></template>",
]


def vectors() -> list[str]:
    """The hostile tests' payloads first, then classic ones: 71 distinct vectors."""
    import test_hostile_exports as exports  # the browser tests' payloads
    import test_safety as safety  # the HTML safety tests' corpus

    found: list[str] = []
    for value in [
        *exports.PAYLOADS.values(),
        *(v for v in safety.CORPUS if v is not safety.BIG),  # (1 MB: a size test, rotated into every field here)
        *safety.HOSTILE_KEYS,
        "</details><script>alert(1)</script> | `x` *b* [l](javascript:alert(1)) @octocat \x1b {{ 7*7 }}",  # gate
        '<img src=x onerror="alert(1)"><script>alert(2)</script>',  # explorer panel
        '<img src=x onerror="alert(1)">',  # leaderboard, sweep progress
        "</style><script>alert(2)</script>{{ 7*7 }}",
        *EXTRA_VECTORS,
    ]:
        if value not in found:
            found.append(value)
    return found[:71]


_URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "srcset", "srcdoc"}
_FOREIGN_TAGS = {"iframe", "frame", "object", "embed", "link", "base", "form", "applet", "portal", "frameset"}


def _scheme(value: str) -> str:
    cleaned = "".join(ch for ch in value if ch > " ").lower()
    return cleaned.split(":", 1)[0] if ":" in cleaned else ""


class Inspector(HTMLParser):
    """What a browser would load or run from a document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.scripts: list[str] = []
        """Script code, style sheets and comments: allowed only when they are the page's own."""
        self._in: str | None = None
        self._script_attrs: dict[str, str | None] = {}
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in _FOREIGN_TAGS:
            self.problems.append(f"<{tag}>")
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "refresh":
            self.problems.append("<meta refresh>")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=>")
            elif name in _URL_ATTRS and value:
                scheme = _scheme(value)
                if scheme in ("javascript", "vbscript") or (scheme == "data" and "text/html" in value.lower()):
                    self.problems.append(f"<{tag} {name}={value[:40]!r}>")
                elif name != "href" or tag != "a":  # a resource the page would load
                    if not (scheme == "data" or value.startswith("#")):
                        self.problems.append(f"<{tag} {name}={value[:40]!r}> (foreign resource)")
                elif tag == "a" and "evil" in value:
                    self.problems.append(f"<a href={value[:40]!r}>")
            elif name == "style" and any(w in value.lower() for w in ("url(", "expression(", "@import")):
                self.problems.append(f"<{tag} style={value[:40]!r}>")
        if tag in ("script", "style"):
            self._in, self._script_attrs, self._text = tag, values, []

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._in == tag:
            text = "".join(self._text)
            if tag == "script":
                if self._script_attrs.get("src"):
                    self.problems.append("<script src>")
                kind = (self._script_attrs.get("type") or "").lower()
                if kind != "application/json":
                    self.scripts.append(text)
                elif "</script" in text.lower():
                    self.problems.append("</script> inside a JSON script")
            else:
                self.scripts.append(text)
            self._in = None

    def handle_comment(self, data: str) -> None:
        self.scripts.append(f"<!--{data}-->")


def inspect_html(html: str, own_scripts: set[str]) -> list[str]:
    """Problems in ``html``; scripts are allowed only when they are the page's own (``own_scripts``)."""
    parser = Inspector()
    parser.feed(html)
    parser.close()
    problems = list(parser.problems)
    problems += [
        f"a script, style or comment not the page's own: {s[:60]!r}" for s in parser.scripts if s not in own_scripts
    ]
    if "«49»" in html:
        problems.append("template syntax was evaluated")
    return problems


def _documents(report: Any, other: Any, tmp: Path) -> dict[str, str | BaseException]:
    """Every rendered document of one hostile report (and a second one to compare it with).

    A view that fails to render is returned as its exception (a finding, though not an injection).
    """
    from heta_nb.sweeps.progress import render_sweep_html
    from heta_nb.sweeps.status import PairStatus, SweepState

    docs: dict[str, str | BaseException] = {}

    def add(kind: str, render: Callable[[], str]) -> None:
        try:
            docs[kind] = render()
        except Exception as exc:  # noqa: BLE001 - reported
            docs[kind] = exc

    add("report repr", report._repr_html_)
    for i in (0, 3, len(report.case_results) - 1):  # a success, an error, the last
        add(f"case repr {i}", report.case_results[i]._repr_html_)
    first_with_scores = next(r for r in report.case_results if r.scores)
    add("score repr", first_with_scores.scores[0]._repr_html_)
    comparison = heta_nb.compare(report, other, modes=[report.modes[0]], resamples=200)
    add("comparison repr", comparison._repr_html_)
    add("check repr", lambda: heta_nb.check(report, other, resamples=200, require_same_cases=False)._repr_html_())
    board = heta_nb.Leaderboard.from_reports([report, other], resamples=200)
    add("leaderboard repr", lambda: board._repr_mimebundle_()["text/html"])
    name = report.knowledge_base_name
    pairs = (
        PairStatus(0, name, report.report_id, "running", 1, 4, 1, 0, name, name),
        PairStatus(1, report.report_id, name, "failed", 0, 4, 0, 0, None, report.report_id),
    )
    add("sweep progress", lambda: render_sweep_html(SweepState(pairs, name, 2, "javascript:alert(1)", 0.0, 1.0)))

    add("report export", lambda: heta_nb.to_html(report))
    add("comparison export", lambda: heta_nb.to_html(comparison))
    add("leaderboard export", board.to_html)
    try:
        notebook = Path(tempfile.mkdtemp(dir=tmp)) / "n.ipynb"
        heta_nb.to_notebook(report, notebook)
        cells = json.loads(notebook.read_text())["cells"]
    except Exception as exc:  # noqa: BLE001 - reported
        docs["notebook sections"] = docs["notebook markdown"] = exc
        return docs
    html_outputs = [
        "".join(out["data"]["text/html"]) if isinstance(out["data"]["text/html"], list) else out["data"]["text/html"]
        for cell in cells
        for out in cell.get("outputs", [])
        if "text/html" in out.get("data", {})
    ]
    markdown = [
        ("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
        for c in cells
        if c["cell_type"] == "markdown"  # (code cells are Python, shown as text)
    ]
    docs["notebook sections"] = "\n".join(html_outputs)
    docs["notebook markdown"] = "\n".join(markdown)
    return docs


def attack_xss(quick: bool) -> dict[str, Any]:
    import test_hostile_exports as exports

    all_vectors = vectors()
    group = 6
    groups = [all_vectors[i : i + group] for i in range(0, len(all_vectors), group)]
    if quick:
        groups = groups[:2]
    tmp = Path(tempfile.mkdtemp(prefix="h23-xss-"))
    saved = exports.VALUES
    problems: list[str] = []
    failures: list[str] = []
    documents = pairs = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clean = heta_nb.load_report(FIXTURES / "report-normal.json")
        clean_other = clean.replace(report_id="other")
        own: set[str] = set()
        for html in _documents(clean, clean_other, tmp).values():
            if isinstance(html, str):
                parser = Inspector()
                parser.feed(html)
                own.update(parser.scripts)
        try:
            for index, values in enumerate(groups):
                exports.VALUES = values
                report = exports.hostile_report(index, "R")
                other = exports.hostile_report(index, "S")
                for kind, html in _documents(report, other, tmp).items():
                    if not isinstance(html, str):
                        failures.append(f"group {index} / {kind}: {type(html).__name__}: {html}"[:200])
                        continue
                    documents += 1
                    pairs += len(values)
                    if kind == "notebook markdown":  # markdown: raw HTML would be rendered by the front end
                        found = inspect_html(html, set())
                    else:
                        found = inspect_html(html, own)
                    problems += [f"group {index} / {kind}: {p}" for p in found]
        finally:
            exports.VALUES = saved
    shutil.rmtree(tmp, ignore_errors=True)
    # the inspector's own check: how many vectors it flags when they reach a page unescaped
    flagged = sum(1 for group_values in groups for v in group_values if inspect_html(f"<div>{v}</div>", set()))
    return {
        "flagged": flagged,
        "vectors": sum(len(g) for g in groups),
        "documents": documents,
        "pairs": pairs,
        "problems": problems,
        "failures": failures,
    }


# -- 2. SIGKILL mid-run -----------------------------------------------------------------------
# The victims are forked from this process (heta_nb already imported: a kill every ~0.1 s
# instead of one per interpreter start-up); these attacks run first, before this process
# has started any thread of its own.


def _forked(work: Callable[[], None]) -> int:
    """A child process running ``work()`` (it never returns into this script)."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            work()
        except BaseException:  # noqa: BLE001 - the parent reads the outcome from the store
            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    return pid


def _kill(pid: int) -> bool:
    """SIGKILL ``pid`` if it still runs; True if it was killed."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _slow_kb(query: str, *, mode: str, top_k: int) -> Any:
    from runner_support import exact_kb

    time.sleep(0.004)
    return exact_kb(query, mode=mode, top_k=top_k)


def attack_kill_run(kills: int) -> dict[str, Any]:
    from runner_support import toy_benchmark

    cases = 1500
    root = Path(tempfile.mkdtemp(prefix="h23-run-"))
    rng = random.Random(23)

    def run() -> Any:
        return heta_nb.evaluate(
            toy_benchmark(cases),
            kb=_slow_kb,
            query_modes=["good", "poor"],
            store=root,
            report_id="killed",
            knowledge_base_name="toy kb",
            progress=False,
            concurrency=4,
            resume=True,
            lint=False,
        )

    killed = 0
    problems: list[str] = []
    for _ in range(kills):
        pid = _forked(run)
        time.sleep(rng.uniform(0.05, 0.5))
        killed += _kill(pid)
    pid = _forked(run)  # the last resume, to the end
    _, status = os.waitpid(pid, 0)
    if status != 0:
        problems.append(f"the resumed run failed (status {status})")
    else:
        report = heta_nb.ReportStore(root).load("toy kb", "killed")
        keys = [(r.case_id, r.query_mode) for r in report.case_results]
        if len(keys) != len(set(keys)):
            problems.append(f"{len(keys) - len(set(keys))} duplicated results")
        if len(set(keys)) != 2 * cases:
            problems.append(f"{2 * cases - len(set(keys))} results lost")
        if report.metadata["heta_nb"]["status"] != "complete":
            problems.append(f"status {report.metadata['heta_nb']['status']}")
    shutil.rmtree(root, ignore_errors=True)
    return {"kills": killed, "cases": 2 * cases, "problems": problems}


# -- 3. SIGKILL during save -------------------------------------------------------------------


def attack_kill_save(kills: int) -> dict[str, Any]:
    from heta_nb._util.atomic import temporaries_of
    from heta_nb.testing import synthetic_report

    root = Path(tempfile.mkdtemp(prefix="h23-save-"))
    store = heta_nb.ReportStore(root)
    reports = [synthetic_report(150, report_id="r", knowledge_base_name="kb", seed=s) for s in (1, 2)]
    versions = {json.dumps(r.to_dict()["case_results"]) for r in reports}
    key = store.save(reports[0])
    target = root / key
    sidecar = target.with_name("heta_nb.summary.json")
    rng = random.Random(40)
    problems: list[str] = []
    left = 0

    def save_forever() -> None:
        for i in range(10_000):
            store.save(reports[i % 2], overwrite=True)

    for _ in range(kills):
        pid = _forked(save_forever)
        time.sleep(rng.uniform(0.05, 1.0))
        if not _kill(pid):
            problems.append("a saving process ended before it was killed")
        try:
            loaded = store.load("kb", "r")
            if json.dumps(loaded.to_dict()["case_results"]) not in versions:
                problems.append("a report that is neither version")
        except Exception as exc:  # noqa: BLE001 - a torn report
            problems.append(f"torn: {type(exc).__name__}: {exc}"[:200])
        temporaries = temporaries_of(target) + temporaries_of(sidecar)
        left += len(temporaries)
        for temporary in temporaries:  # as old as a save killed a while ago
            old = time.time() - 3600
            os.utime(temporary.path, (old, old))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        listed = len(store.list().attrs["temporaries"])
    store.save(reports[0], overwrite=True)
    remaining = temporaries_of(target) + temporaries_of(sidecar)
    if remaining:
        problems.append(f"{len(remaining)} stale temporaries left after the next save")
    shutil.rmtree(root, ignore_errors=True)
    return {"kills": kills, "temporaries": left, "listed": listed, "problems": problems}


# -- 4. fuzzed reports ------------------------------------------------------------------------

_ODD_VALUES: list[Any] = [None, True, -1, 1e308, float("inf"), "", "x" * 3, [], {}, [None], {"": None}, "\ud800"]


def _mutate_json(data: Any, rng: random.Random) -> Any:
    """One structural change somewhere in ``data``: a value replaced, a key deleted or an item removed."""
    path: list[Any] = []
    node = data
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(key)
        node = node[key]
    if not path:
        return rng.choice(_ODD_VALUES)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    action = rng.random()
    if action < 0.6:
        parent[path[-1]] = rng.choice(_ODD_VALUES)
    elif isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent.pop(path[-1])
    return data


def attack_fuzz_reports(count: int) -> dict[str, Any]:
    rng = random.Random(1100)
    sources = sorted(FIXTURES.glob("report-*.json"))
    texts = {p: p.read_bytes() for p in sources}
    tmp = Path(tempfile.mkdtemp(prefix="h23-fuzz-"))
    outcomes = {"loaded": 0, "ReportFormatError": 0}
    problems: list[str] = []
    for i in range(count):
        source = rng.choice(sources)
        raw = texts[source]
        structural = i % 2 == 0
        if structural:
            data = _mutate_json(json.loads(raw), rng)
            for _ in range(rng.randrange(3)):
                data = _mutate_json(data, rng) if isinstance(data, (dict, list)) else data
            blob = json.dumps(data, allow_nan=True).encode("utf-8", "surrogatepass")
        else:
            blob = bytearray(raw)
            for _ in range(rng.randrange(1, 8)):
                how = rng.random()
                at = rng.randrange(len(blob))
                if how < 0.4:
                    blob[at] = rng.randrange(256)
                elif how < 0.7:
                    del blob[at : at + rng.randrange(1, 50)]
                else:
                    blob[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 10)))
            if rng.random() < 0.2:
                blob = blob[: rng.randrange(len(blob))]
            blob = bytes(blob)
        path = tmp / f"fuzz-{i}.json"
        path.write_bytes(blob)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                heta_nb.load_report(path)
            outcomes["loaded"] += 1
        except ReportFormatError as exc:
            outcomes["ReportFormatError"] += 1
            message = str(exc)
            if path.name not in message:
                problems.append(f"{path.name}: the message does not name the file: {message[:120]}")
            elif structural and "invalid JSON" not in message and ":" not in message.split(path.name, 1)[1]:
                problems.append(f"{path.name}: the message names no field: {message[:120]}")
        except Exception as exc:  # noqa: BLE001 - the finding
            problems.append(f"{path.name} ({source.name}): {type(exc).__name__}: {exc}"[:200])
            shutil.copy(path, Path(tempfile.gettempdir()) / f"h23-finding-{path.name}")
        path.unlink()
    shutil.rmtree(tmp, ignore_errors=True)
    return {"count": count, **outcomes, "problems": problems}


# -- 5. malformed benchmark files -------------------------------------------------------------


def attack_benchmarks(count: int) -> dict[str, Any]:
    rng = random.Random(800)
    jsonl = tmp_root = Path(tempfile.mkdtemp(prefix="h23-bench-"))
    jsonl = tmp_root / "jsonl"
    beir = tmp_root / "beir"
    outcomes = {"loaded": 0, "BenchmarkFormatError": 0}
    problems: list[str] = []
    originals = {
        "jsonl": {name: (FIXTURES / name).read_bytes() for name in ("cases.jsonl", "documents.jsonl")},
        "beir": {
            "corpus.jsonl": (FIXTURES / "beir_mini" / "corpus.jsonl").read_bytes(),
            "queries.jsonl": (FIXTURES / "beir_mini" / "queries.jsonl").read_bytes(),
            **{f"qrels/{p.name}": p.read_bytes() for p in (FIXTURES / "beir_mini" / "qrels").iterdir() if p.is_file()},
        },
    }
    for i in range(count):
        kind = "jsonl" if i % 2 == 0 else "beir"
        folder = jsonl if kind == "jsonl" else beir
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "qrels").mkdir(parents=True)
        files = dict(originals[kind])
        target = rng.choice(sorted(files))
        lines = files[target].split(b"\n")
        how = rng.random()
        line = rng.randrange(len(lines))
        if how < 0.3:  # a line's JSON changed structurally
            try:
                data = json.loads(lines[line])
                data = _mutate_json(data, rng)
                lines[line] = json.dumps(data).encode("utf-8", "surrogatepass")
            except ValueError:
                lines[line] = b"{"
        elif how < 0.55:  # bytes flipped, cut or inserted
            blob = bytearray(lines[line])
            if blob:
                at = rng.randrange(len(blob))
                blob[at : at + rng.randrange(1, 6)] = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 4)))
            lines[line] = bytes(blob)
        elif how < 0.7:  # a line duplicated (duplicate ids)
            lines.insert(line, lines[line])
        elif how < 0.8:  # the file emptied, or deleted
            lines = [] if rng.random() < 0.5 else None  # type: ignore[assignment]
        elif how < 0.9:  # wrong type at the top
            lines[line] = rng.choice([b"[]", b"1", b'"x"', b"null", b"\xff\xfe", b"\x00" * 5])
        else:  # truncated mid-file
            blob = b"\n".join(lines)
            lines = [blob[: rng.randrange(max(1, len(blob)))]]
        if lines is not None:
            files[target] = b"\n".join(lines)
        else:
            del files[target]
        for name, blob in files.items():
            (folder / name).write_bytes(blob)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                heta_nb.load_benchmark(folder)
            outcomes["loaded"] += 1
        except BenchmarkFormatError:
            outcomes["BenchmarkFormatError"] += 1
        except Exception as exc:  # noqa: BLE001 - the finding
            problems.append(f"{kind} {target} ({how:.2f}): {type(exc).__name__}: {exc}"[:220])
            keep = Path(tempfile.gettempdir()) / f"h23-finding-bench-{i}"
            shutil.copytree(folder, keep, dirs_exist_ok=True)
    shutil.rmtree(tmp_root, ignore_errors=True)
    return {"count": count, **outcomes, "problems": problems}


# -- 6. hostile names -------------------------------------------------------------------------


def hostile_names() -> list[str]:
    from test_names import HOSTILE

    names = [name for name, _ in HOSTILE]
    bases = ["..", ".", "../x", "..\\x", "/etc/passwd", "/tmp/x", "C:\\x", "C:x", "\\\\server\\share", "~", "~root"]
    tricks = [
        "\u2215",  # division slash
        "\uff0f",  # fullwidth solidus
        "\u2044",  # fraction slash
        "\uff3c",  # fullwidth reverse solidus
        "\u2024\u2024",  # one dot leader x2
        "\uff0e\uff0e",  # fullwidth full stops: NFKC '..'
        "\u202e",  # right-to-left override
        "\u200b",  # zero-width space
        "\ufeff",  # byte order mark
        "\u0338",  # combining long solidus overlay
        "\x00",
        "\x1b[31m",
        "\r\n",
        "\t",
        "\x7f",
        "\ud800",  # lone surrogate
        "%2e%2e%2f",
        "%00",
        "\u00a0",
        "\u3000",
    ]
    for base in bases:
        names.append(base)
        for trick in tricks:
            names.extend([base + trick, trick + base])
    for trick in tricks:
        names.extend([trick, f"a{trick}b", f"..{trick}..", f"{trick}{trick}"])
    names += ["CON", "nul", "aux.json", "COM1", "LPT9.txt", "x" * 129, "é" * 65, "a" * 128 + "\u200b", "..."]
    unique: list[str] = []
    for name in names:
        if name not in unique:
            unique.append(name)
    return unique


def attack_names(limit: int | None) -> dict[str, Any]:
    from heta_nb.testing import synthetic_report

    names = hostile_names()[:limit]
    sandbox = Path(tempfile.mkdtemp(prefix="h23-names-"))
    root = sandbox / "store"
    store = heta_nb.ReportStore(root)
    outcomes = {"UnsafeNameError": 0, "accepted": 0}
    problems: list[str] = []
    for name in names:
        for field in ("report_id", "knowledge_base_name"):
            kb, rid = (name, "r") if field == "knowledge_base_name" else ("kb", name)
            try:
                key = store.key_for(kb, rid)
                resolved = (root / key).resolve()
                if not resolved.is_relative_to(root.resolve()):
                    problems.append(f"{name!r} ({field}): a key outside the root: {resolved}")
                outcomes["accepted"] += 1
                try:
                    report = synthetic_report(1).replace(report_id=rid, knowledge_base_name=kb)
                except ValueError:  # the model refuses it (an empty name, say): the store never sees it
                    continue
                if store.save(report, overwrite=True) != key:
                    problems.append(f"{name!r} ({field}): saved under another key than key_for's")
                store.load(kb, rid)
                store.delete(kb, rid)
            except UnsafeNameError:
                outcomes["UnsafeNameError"] += 1
                for call in (store.load, store.delete):
                    try:
                        call(kb, rid)
                        problems.append(f"{name!r} ({field}): refused for save, accepted for load/delete")
                    except UnsafeNameError:
                        pass
                    except Exception as exc:  # noqa: BLE001
                        problems.append(f"{name!r} ({field}): {type(exc).__name__}: {exc}"[:160])
            except Exception as exc:  # noqa: BLE001 - the finding
                problems.append(f"{name!r} ({field}): {type(exc).__name__}: {exc}"[:160])
            try:  # STORE:KB/REPORT_ID references too
                heta_nb.load_report(f"{root}:{kb}/{rid}")
            except (UnsafeNameError, heta_nb.errors.ReportNotFoundError, heta_nb.errors.StoreError):
                pass
            except ReportFormatError:
                pass
            except Exception as exc:  # noqa: BLE001
                problems.append(f"reference {name!r} ({field}): {type(exc).__name__}: {exc}"[:160])
    outside = [p for p in sandbox.rglob("*") if root not in p.parents and p != root]
    if outside:
        problems.append(f"files outside the store root: {outside[:3]}")
    shutil.rmtree(sandbox, ignore_errors=True)
    return {"names": len(names), "attempts": 2 * len(names), **outcomes, "problems": problems}


# -- the families of later audits ------------------------------------------------------------

Attack = tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]


def family_attacks(quick: bool) -> list[Attack]:
    """The attacks of ``tests/audit/families_*.py``: each module's ``attacks(quick)`` list.

    A family's attack returns a dict with a ``problems`` list (empty: nothing got through)
    and whatever counts its ``describe`` prints.
    """
    import importlib.util

    found: list[Attack] = []
    for path in sorted(HERE.glob("families_*.py")):
        spec = importlib.util.spec_from_file_location(f"audit_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.extend(module.attacks(quick))
    return found


# -- the table --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few of each, for a smoke run")
    args = parser.parse_args(argv)
    q = args.quick
    attacks: list[Attack] = [
        (
            "SIGKILLs mid-run, then resume",
            lambda: attack_kill_run(2 if q else 10),
            lambda r: f"{r['kills']} kills, {r['cases']} case x mode results",
        ),
        (
            "SIGKILLs during save",
            lambda: attack_kill_save(4 if q else 40),
            lambda r: f"{r['kills']} kills, {r['temporaries']} temporaries left, {r['listed']} listed",
        ),
        (
            "XSS vectors x rendered documents",
            lambda: attack_xss(q),
            lambda r: (
                f"{r['vectors']} vectors ({r['flagged']} flagged if unescaped), {r['documents']} documents,"
                f" {r['pairs']} vector-document pairs"
                + (f"; {len(r['failures'])} views failed to render" if r["failures"] else "")
            ),
        ),
        (
            "fuzzed reports",
            lambda: attack_fuzz_reports(60 if q else 1100),
            lambda r: f"{r['count']} files: {r['loaded']} loaded, {r['ReportFormatError']} ReportFormatError",
        ),
        (
            "malformed benchmark files",
            lambda: attack_benchmarks(40 if q else 800),
            lambda r: f"{r['count']} folders: {r['loaded']} loaded, {r['BenchmarkFormatError']} BenchmarkFormatError",
        ),
        (
            "hostile names",
            lambda: attack_names(30 if q else None),
            lambda r: f"{r['names']} names x 2 fields: {r['UnsafeNameError']} UnsafeNameError, {r['accepted']} inside",
        ),
    ]
    attacks += family_attacks(q)
    rows: list[tuple[str, str, str, str]] = []
    failed = False
    for title, attack, describe in attacks:
        started = time.perf_counter()
        try:
            result = attack()
            counts, problems = describe(result), result["problems"]
        except Exception:  # noqa: BLE001 - the harness itself broke: report it, go on
            result = {}
            counts, problems = "(the attack did not run)", [traceback.format_exc().strip().splitlines()[-1]]
        seconds = f"{time.perf_counter() - started:.0f} s"
        rows.append((title, counts, str(len(problems)), seconds))
        for problem in problems[:15]:
            print(f"  {title}: {problem}", flush=True)
        for failure in result.get("failures", [])[:5] if problems is not None else []:
            print(f"  {title}: did not render: {failure}", flush=True)
        failed = failed or bool(problems)
    width = [max(len(r[i]) for r in [*rows, ("attack", "counts", "got through", "time")]) for i in range(4)]
    line = "  ".join(f"{{:<{w}}}" for w in width)
    print(line.format("attack", "counts", "got through", "time"))
    print(line.format(*("-" * w for w in width)))
    for row in rows:
        print(line.format(*row))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
