"""The package's layout rules, read from the code's own imports.

Imports run one way along the chain of layers (imports inside functions and under
``TYPE_CHECKING`` count), no module is over 500 lines, no private name crosses a
package, and the model, store and runner import nothing heavy. The model imports nothing
above it, not even inside a function: its one way up is the seam ``heta_nb/model/views.py``,
which names the views and imports them by name (``importlib``), so no import cycle runs
through the model.
"""

from __future__ import annotations

import ast
import importlib
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
    ("store", "evaluators", "llm_judges", "reviews", "benchmark"),
    ("runner",),
    ("comparison", "tables", "plots", "gate"),
    ("render",),
    ("explorer",),
    ("export", "notebook"),
    ("progress",),
    ("api", "demo", "testing", "integrations", "sweeps"),
    ("ipython",),
    ("cli", "__main__", "__init__"),
)
"""The chain, low to high: a package imports only from its own layer or lower ones."""

VALUE_OBJECTS = ("comparison", "store", "gate")
VIEWS = ("render", "tables", "plots", "export", "notebook", "explorer")
"""The one way up of the layers above the model: an object users hold (a comparison, a store, a
check) may import a view inside a method, for its display and DataFrame conveniences
(``comparison.explore()``, ``store.list()``). The model has no such allowance: it imports
nothing above it, and reaches its views (``report.cases_frame()``, ``_repr_html_``) only by
name, through :data:`SEAM`."""

MODEL = "model"
SEAM = "heta_nb.model.views"
"""The model's one way up: a table of ``"module:attribute"`` names, imported by name on first use."""

BY_NAME: dict[str, str] = {
    SEAM: "the model's one way up: the names are its VIEWS table, checked below",
    "heta_nb": "PEP 562: public names and submodules imported on first attribute access (the top layer)",
    "heta_nb._util.optional": "require(): optional third-party packages; its callers' names are read here",
}
"""The modules that import a module by a name they compute (``importlib.import_module(name)``,
``__import__``, ``require``), and why; no module imports a heta_nb module by a literal name."""


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


def _full_graph() -> dict[str, set[str]]:
    """Every static import, lazy and ``TYPE_CHECKING`` ones too, with no allowance."""
    return {m: {t for t, _lazy in edges} for m, edges in EDGES.items()}


def largest_import_cycle() -> list[str]:
    """The largest strongly connected component of :func:`_full_graph` (``[]`` if none)."""
    return max(_cycles(_full_graph()), key=len, default=[])


_BY_NAME_CALLS = ("import_module", "__import__", "require")


def _by_name_imports(path: Path) -> list[tuple[int, str | None]]:
    """``(line, the literal name or None if computed)`` of each import by name in ``path``."""
    found: list[tuple[int, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called in _BY_NAME_CALLS:
            first = node.args[0]
            literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            found.append((node.lineno, literal))
    return found


def test_the_model_imports_nothing_above_it_not_even_inside_a_function() -> None:
    model = _layer(MODEL)
    upward = sorted(
        f"{source} -> {target}{' (inside a function)' if lazy else ''}"
        for source, edges in EDGES.items()
        if _top(source) == MODEL
        for target, lazy in edges
        if _layer(_top(target)) > model
    )
    assert upward == []


def test_no_import_cycle_runs_through_the_model() -> None:
    through = [c for c in _cycles(_full_graph()) if any(_top(m) == MODEL for m in c)]
    assert through == []


def test_the_seam_names_only_views_that_exist_above_the_model() -> None:
    seam = importlib.import_module(SEAM)
    assert seam.VIEWS, "the seam names no view"
    for name, target in seam.VIEWS.items():
        module_name, _, attribute = target.partition(":")
        assert module_name in MODULES, f"{name}: {module_name} is no module of heta_nb"
        assert _layer(_top(module_name)) > _layer(MODEL), f"{name}: {module_name} is not above the model"
        found = getattr(importlib.import_module(module_name), attribute, None)
        assert callable(found), f"{name}: {target} is not a callable of {module_name}"
        assert seam.view(name) is found, name
    users = sorted(m for m, edges in EDGES.items() if any(t == SEAM for t, _ in edges) and _top(m) != MODEL)
    assert users == [], "the seam is the model's own way up"


def test_no_module_imports_heta_nb_by_name_but_the_known_ones() -> None:
    found = sorted(
        f"{path.relative_to(ROOT)}:{line}: {literal or 'a computed name'}"
        for module, path in MODULES.items()
        for line, literal in _by_name_imports(path)
        if (literal is None and module not in BY_NAME) or (literal or "").startswith("heta_nb")
    )
    assert found == []
    unused = sorted(m for m in BY_NAME if not any(literal is None for _, literal in _by_name_imports(MODULES[m])))
    assert unused == [], "an allowance no module needs any more"


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
        f"cycles: {len(_cycles(graph))}, largest import cycle counting every import: "
        f"{len(largest_import_cycle())} modules, private names across packages: {len(PRIVATE)}, "
        f"largest module: {sizes[0][1]} ({sizes[0][0]} lines)"
    )
