"""The package's layout rules, read from the code's own imports.

Imports run one way along the chain of layers (imports inside functions and under
``TYPE_CHECKING`` count), no module is over 500 lines, no private name crosses a
package, and the model, store and runner import nothing heavy.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


HEAVY = ("IPython", "ipywidgets", "pandas", "matplotlib", "jinja2", "numpy", "heta_framework", "fsspec")


@pytest.mark.parametrize(
    "statement",
    [
        "import heta_nb",
        "import heta_nb.model",
        "import heta_nb.store",
        "from heta_nb import load_report, ReportStore, EvaluationReport; "
        "load_report('tests/fixtures/heta-0.1.2/report-normal.json')",
    ],
)
def test_no_heavy_imports(statement: str) -> None:
    code = f"import sys; {statement}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"{statement!r} imported {out.stdout.strip()}"


def test_views_import_pandas_only_when_called() -> None:
    code = (
        "import sys, heta_nb; r = heta_nb.load_report('tests/fixtures/heta-0.1.2/report-errors.json');"
        "r.metric_summaries(); assert 'pandas' not in sys.modules;"
        "r.cases_frame(); assert 'pandas' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# -- the layout's rules, read from the code's own imports --------------------------------

PACKAGE = ROOT / "heta_nb"
MAX_LINES = 500

LAYERS: tuple[tuple[str, ...], ...] = (
    ("_util", "errors", "_version"),
    ("stats",),
    ("model",),
    ("store", "evaluators", "benchmark"),
    ("runner",),
    ("comparison", "tables", "plots", "gate"),
    ("render",),
    ("export", "notebook"),
    ("progress", "explorer"),
    ("api", "demo", "testing", "integrations", "sweeps"),
    ("ipython",),
    ("cli", "__main__", "__init__"),
)
"""The chain, low to high: a package imports only from its own layer or lower ones."""

VALUE_OBJECTS = ("model", "comparison", "store", "gate")
VIEWS = ("render", "tables", "plots", "export", "notebook", "explorer")
"""The one way up: an object users hold (a report, a comparison, a store) imports a view inside a
method, for its display and DataFrame conveniences (``report.cases_frame()``, ``_repr_html_``,
``store.list()``)."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _top(module: str) -> str:
    """``heta_nb.runner.engine`` -> ``runner``; the root package is ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _resolve(target: str) -> str | None:
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _imports(module: str, path: Path) -> list[tuple[str, list[str], bool, int]]:
    """``(module imported, names taken, inside a function?, line)`` for each heta_nb import.

    Imports inside functions count, and so do ``if TYPE_CHECKING:`` ones: a type-only
    import of a higher layer still ties the two.
    """
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, list[str], bool, int]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, [], lazy, child.lineno) for a in child.names if a.name.startswith("heta_nb"))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - child.level + 1] + ([base] if base else []))
                if base.startswith("heta_nb"):
                    names = [a.name for a in child.names]
                    submodules = [n for n in names if f"{base}.{n}" in MODULES]
                    found.extend((f"{base}.{n}", [], lazy, child.lineno) for n in submodules)
                    rest = [n for n in names if n not in submodules]
                    if rest or not submodules:
                        found.append((base, rest, lazy, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return found


EDGES: dict[str, set[tuple[str, bool]]] = {}
PRIVATE: list[str] = []
for _name, _path in MODULES.items():
    EDGES[_name] = set()
    for _target, _names, _lazy, _line in _imports(_name, _path):
        _resolved = _resolve(_target)
        if _resolved is None or _resolved == _name:
            continue
        EDGES[_name].add((_resolved, _lazy))
        if _top(_resolved) != _top(_name):
            _private_parts = [p for p in _target.split(".")[1:] if p.startswith("_") and p not in ("_util", "_version")]
            _private_names = [n for n in _names if n.startswith("_") and not n.startswith("__")]
            if _private_parts or _private_names:
                PRIVATE.append(f"{_path.relative_to(ROOT)}:{_line}: {_target} {_private_names or ''}")


def _allowed_upward(source: str, target: str, lazy: bool) -> bool:
    return lazy and _top(source) in VALUE_OBJECTS and _top(target) in VIEWS


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                strong(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strong(node)
    return found


def _layer(top: str) -> int:
    for level, names in enumerate(LAYERS):
        if top in names:
            return level
    raise AssertionError(f"heta_nb.{top} is in no layer of LAYERS: add it where it belongs")


def test_no_import_cycles_between_modules() -> None:
    graph = {m: {t for t, lazy in edges if not _allowed_upward(m, t, lazy)} for m, edges in EDGES.items()}
    assert _cycles(graph) == []


def test_packages_import_only_their_own_layer_or_lower_ones() -> None:
    upward = sorted(
        f"{source} -> {target}"
        for source, edges in EDGES.items()
        for target, lazy in edges
        if _layer(_top(target)) > _layer(_top(source)) and not _allowed_upward(source, target, lazy)
    )
    assert upward == []


def test_no_module_is_over_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in MODULES.values() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_private_name_is_imported_across_packages() -> None:
    assert PRIVATE == []


def test_every_module_says_what_it_owns_and_exports_explicitly() -> None:
    missing_doc = [name for name, path in MODULES.items() if ast.get_docstring(ast.parse(path.read_text())) is None]
    assert missing_doc == []
    no_all = [
        name
        for name, path in MODULES.items()
        if path.name not in ("__main__.py", "_version.py")
        and "__all__"
        not in {
            t.id
            for n in ast.parse(path.read_text()).body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        and any(
            isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")
            for n in ast.parse(path.read_text()).body
        )
    ]
    assert no_all == []


def import_graph_summary() -> str:
    """The figures of the closing note.

    ``python -c "import tests.test_architecture as t; print(t.import_graph_summary())"``
    """
    graph = {m: {t for t, lazy in edges if not _allowed_upward(m, t, lazy)} for m, edges in EDGES.items()}
    sizes = sorted(((len(p.read_text().splitlines()), n) for n, p in MODULES.items()), reverse=True)
    return (
        f"modules: {len(MODULES)}, import edges: {sum(len(e) for e in EDGES.values())}, "
        f"cycles: {len(_cycles(graph))}, private names across packages: {len(PRIVATE)}, "
        f"largest module: {sizes[0][1]} ({sizes[0][0]} lines)"
    )
