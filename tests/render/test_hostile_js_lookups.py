"""No untrusted key is ever looked up on a plain JavaScript object (a lint of every script heta_nb ships).

A case id, metric, mode or label may be ``constructor``, ``__proto__`` or ``toString``:
``obj[id]`` on a plain object then finds ``Object.prototype``'s member (a function, the
prototype itself), ``id in obj`` is true for a case that is not there, and
``obj.hasOwnProperty(id)`` breaks once the data holds a ``hasOwnProperty`` key. The
scripts (``heta_nb/**/*.js`` and the inline scripts of the templates) keep such keys in
``Map``s. This lint reads them with comments, strings and regular expressions blanked and
reports:

* a computed lookup ``x[key]`` whose key is not an index (a number, a loop counter, an
  arithmetic of those) on a receiver not reviewed in :data:`REVIEWED` (with why its keys
  are safe);
* ``key in obj`` with a key that is not a string literal, and every ``for ... in`` loop;
* ``obj.hasOwnProperty(...)`` called as a method (``Object.prototype.hasOwnProperty.call``
  or ``Object.hasOwn`` instead).

``tests/audit/families_writers.py`` runs the same scan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "heta_nb"

INDEX_NAMES = frozenset(
    {"i", "j", "k", "n", "a", "b", "r", "row", "code", "at", "position", "index", "start", "rank", "title"}
)
"""Loop counters and positions: a key made only of these, numbers and operators is an index."""
INDEX_PATHS = frozenset({"this.selected", "s.index"})
"""Row numbers and column positions read from the scripts' own state."""

REVIEWED: dict[str, str] = {
    # engine.js
    "object": "mapOf(): copies a JSON object's own keys (Object.keys) into a Map, the one place data keys are read",
    "kept": "blindCase(): writes the constant BLIND_KEYS",
    "d": "blindCase(): reads the constant BLIND_KEYS, each checked with Object.prototype.hasOwnProperty.call",
    "this.outputs": "PageModel.get(): guarded by Object.prototype.hasOwnProperty.call; names are the widget API's",
    "this.state": "PageModel.get()/set(): guarded by Object.prototype.hasOwnProperty.call",
    "s": "readHash(): writes the state's fixed field names (a constant list)",
    "this.classes": "an array of CSS classes indexed by a column's numeric class codes",
    "d.texts": "an array of hover texts indexed by numeric codes",
    "counts": "an array indexed by a numeric status code",
    # explorer.js / grid.js
    "attrs": "h(): the attributes of the scripts' own object literals (Object.keys), never data keys",
    "value": "h(): the event handlers of the scripts' own `on: {...}` literals",
    "MARKS": "mark(): the key is one of three string literals",
    "SCORE_CLASSES": "scoresTable(): guarded by Object.prototype.hasOwnProperty.call",
    "selects": "the UI's own select boxes, by names from constant lists",
    "fields": "the UI's own fields, by names from constant lists",
    "values": "the grid's callback: its own object literal's keys (Object.keys)",
    "columns": "an array indexed by a Map's value (byKey.get)",
}
"""Receivers of non-index computed lookups, each reviewed: why no data key reaches it."""

_KEYWORDS = frozenset({"const", "let", "var", "of", "in", "return", "typeof", "case", "new", "yield", "await", "else"})


@dataclass(frozen=True)
class Finding:
    """One lookup the lint refuses."""

    where: str
    line: int
    code: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: {self.code}: {self.why}"


def code_only(source: str) -> str:
    """The source with comments removed and string, template and regex literals blanked to
    ``"S"`` / ``/R/`` (newlines kept, so line numbers stay)."""
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        char = source[i]
        if source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            out.append("\n" * source.count("\n", i, n if end < 0 else end))
            i = n if end < 0 else end + 2
            continue
        if char == "/":
            before = "".join(out[-40:]).rstrip()
            if not before or before[-1] in "(,=:[!&|?{};+" or before.endswith("return"):
                j, in_class = i + 1, False
                while j < n and (source[j] != "/" or in_class) and source[j] != "\n":
                    if source[j] == "\\":
                        j += 1
                    elif source[j] == "[":
                        in_class = True
                    elif source[j] == "]":
                        in_class = False
                    j += 1
                out.append("/R/")
                i = j + 1
                continue
        if char in "\"'`":
            j = i + 1
            while j < n and source[j] != char:
                j += 2 if source[j] == "\\" else 1
            out.append(char + "S" + char + "\n" * source.count("\n", i, j))
            i = j + 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _bracket(code: str, start: int) -> int:
    depth, j = 1, start
    while depth and j < len(code):
        depth += {"[": 1, "]": -1}.get(code[j], 0)
        j += 1
    return j


def _is_index(key: str) -> bool:
    if '"S"' in key or "'S'" in key or "`S`" in key:
        return False
    if key.strip() in INDEX_PATHS:
        return True
    names = re.findall(r"[A-Za-z_$][\w$]*", re.sub(r"\.length\b", "", key))
    return all(name in INDEX_NAMES for name in names) and not re.search(r"[^\w\s+\-*/%()<>=?:!.|&$]", key)


def scan(source: str, where: str) -> list[Finding]:
    """Every plain-object lookup by a possibly untrusted key in one script."""
    code = code_only(source)
    found: list[Finding] = []

    def line(at: int) -> int:
        return code.count("\n", 0, at) + 1

    for match in re.finditer(r"((?:this\.)?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\[", code):
        receiver = match.group(1)
        if receiver.split(".")[0] in _KEYWORDS:
            continue  # an array literal or a destructuring pattern
        end = _bracket(code, match.end())
        key = code[match.end() : end - 1]
        if _is_index(key) or receiver in REVIEWED:
            continue
        found.append(
            Finding(where, line(match.start()), f"{receiver}[{key}]", "a lookup by a non-index key: use a Map")
        )
    for match in re.finditer(r"(?<![\w$.\"'])([\w$.]+|\"S\"|'S')\s+in\s+[A-Za-z_$(]", code):
        left = match.group(1)
        if left in ('"S"', "'S'"):
            continue
        loop = re.search(r"for\s*\(\s*(?:const|let|var)?\s*$", code[max(0, match.start() - 24) : match.start()])
        why = "for...in walks an object's keys: use a Map" if loop else "`in` by a key"
        found.append(Finding(where, line(match.start()), match.group(0), why + " (a Map's has())"))
    for match in re.finditer(r"(?<!prototype)\.hasOwnProperty\s*\(", code):
        found.append(Finding(where, line(match.start()), match.group(0), "use Object.prototype.hasOwnProperty.call"))
    return found


_INLINE = re.compile(r"<script(?![^>]*application/json)[^>]*>(.*?)</script>", re.DOTALL)


def scripts() -> list[tuple[str, str]]:
    """``(where, source)`` of every script heta_nb ships: the assets and the templates' inline ones."""
    found = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.js"))]
    for template in sorted(PACKAGE.rglob("*.j2")):
        for k, block in enumerate(_INLINE.findall(template.read_text(encoding="utf-8"))):
            found.append((f"{template.relative_to(ROOT)}<script {k + 1}>", block))
    return found


def findings() -> list[Finding]:
    return [finding for where, source in scripts() for finding in scan(source, where)]


@pytest.mark.hostile
def test_no_script_looks_up_an_untrusted_key_on_a_plain_object() -> None:
    assert len(scripts()) >= 4  # engine.js, explorer.js, grid.js, the page's inline script
    problems = findings()
    assert problems == [], "\n".join(map(str, problems))


@pytest.mark.hostile
def test_the_lint_finds_each_kind_of_prototype_lookup() -> None:
    """The lint itself: the lookups that broke a page on a case named ``constructor``."""
    bad = """
    const expected = {};  // a comment with expected[x] is ignored
    for (const row of rows) expected[row.case_id] = row;
    if (caseId in seen) return;
    for (const key in labels) use(key);
    if (gold.hasOwnProperty(id)) draw(titles[c.metric]);
    const ok = "a[b]" + list[i + 1] + ("t" in d) + Object.prototype.hasOwnProperty.call(d, k) + /[x]/.test(s);
    """
    found = scan(bad, "bad.js")
    assert [(f.line, f.code.split("[")[0].split(" ")[0]) for f in found] == [
        (3, "expected"),
        (6, "titles"),
        (4, "caseId"),
        (5, "key"),
        (6, ".hasOwnProperty("),
    ], found
