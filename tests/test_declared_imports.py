"""Every third-party module heta_nb imports is declared in pyproject.toml.

A module imported at the top of a heta_nb module, or inside a function without an
``except ImportError`` around it, is a dependency (core or an extra); one named to
``require("module", extra=...)`` comes from that extra (or the core). Only a few
opportunistic imports, each guarded or with its reason below, may go undeclared.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the other Pythons run the same tree
requirements = pytest.importorskip("packaging.requirements")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "heta_nb"

# distribution name -> the top-level modules it installs, where they differ from the name
MODULES_OF = {
    "ipython": {"IPython"},
    "heta-framework": {"heta_framework"},
    "pyzmq": {"zmq"},
    "dask[distributed]": {"dask", "distributed"},
    "pyyaml": {"yaml"},
    "scikit-learn": {"sklearn"},
}

# extras that are for working on heta_nb, not for using it
NOT_RUNTIME = {"test", "dev"}

# imported but on purpose not declared: why
UNDECLARED = {
    # progress/kernel_comms.py, only inside a running ipykernel 7 (which requires pyzmq)
    "zmq": "a dependency of ipykernel, used only inside a running kernel",
    # llm_judges/costs.py: LiteLLM's price map, read only when importlib finds LiteLLM installed
    "litellm": "an optional price map, looked up only when installed",
}


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    """The core's modules, and each runtime extra's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def modules(specs: list[str]) -> set[str]:
        out: set[str] = set()
        for spec in specs:
            req = requirements.Requirement(spec)
            name = req.name.lower()
            if name == "heta-nb":
                continue
            key = f"{name}[{','.join(sorted(req.extras))}]" if req.extras else name
            out |= MODULES_OF.get(key, MODULES_OF.get(name, {name.replace("-", "_")}))
        return out

    extras = {
        extra: modules(specs)
        for extra, specs in project.get("optional-dependencies", {}).items()
        if extra not in NOT_RUNTIME
    }
    return modules(project["dependencies"]), extras


def _guarded(tree: ast.AST) -> set[int]:
    """Line numbers of the imports inside a ``try`` that catches ImportError (or its subclass)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = {ast.unparse(handler.type) for handler in node.handlers if handler.type is not None}
        if not any("ImportError" in text or "ModuleNotFoundError" in text for text in caught):
            continue
        for statement in node.body:
            for inner in ast.walk(statement):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    lines.add(inner.lineno)
    return lines


def _imports() -> Iterator[tuple[str, str, bool]]:
    """(top-level module, where, guarded) for each absolute import under heta_nb/."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        guarded = _guarded(tree)
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield alias.name.split(".")[0], f"{where}:{node.lineno}", node.lineno in guarded
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield node.module.split(".")[0], f"{where}:{node.lineno}", node.lineno in guarded


def _required() -> Iterator[tuple[str, str, str]]:
    """(top-level module, extra, where) for each ``require("module", extra="...")`` under heta_nb/."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "require"):
                continue
            if not (node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                continue
            extra = next((k.value for k in node.keywords if k.arg == "extra"), None)
            assert isinstance(extra, ast.Constant), f"{path}:{node.lineno}: require(...) without a literal extra="
            where = f"{path.relative_to(ROOT).as_posix()}:{node.lineno}"
            yield node.args[0].value.split(".")[0], str(extra.value), where


def _third_party(module: str) -> bool:
    return module != "heta_nb" and module not in sys.stdlib_module_names and module != "__future__"


def test_every_imported_module_is_declared() -> None:
    core, extras = _declared()
    anywhere = core.union(*extras.values())
    undeclared = sorted(
        f"{where}: {module}"
        for module, where, guarded in _imports()
        if _third_party(module) and module not in anywhere and not guarded and module not in UNDECLARED
    )
    assert not undeclared, "imported but not in pyproject's dependencies or extras:\n" + "\n".join(undeclared)


def test_modules_imported_at_import_time_are_core_dependencies() -> None:
    """A module-level import runs on ``import heta_nb.x``: an extra is not enough."""
    core, _ = _declared()
    top: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                else []
            )
            for name in names:
                module = name.split(".")[0]
                if _third_party(module) and module not in core:
                    top.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: {module}")
    assert not top, "imported at module level but not a core dependency:\n" + "\n".join(top)


def test_direct_imports_of_the_ui_stack_are_declared() -> None:
    """IPython, traitlets and markupsafe arrive with ipywidgets / jinja2, but heta_nb imports them itself."""
    core, _ = _declared()
    assert {"IPython", "traitlets", "markupsafe"} <= core


def test_each_require_names_an_extra_that_brings_the_module() -> None:
    core, extras = _declared()
    wrong = [
        f"{where}: require({module!r}, extra={extra!r})"
        for module, extra, where in _required()
        if module not in core and module not in extras.get(extra, set())
    ]
    assert not wrong, "the extra named does not install the module:\n" + "\n".join(wrong)


def test_the_walk_sees_known_imports() -> None:
    modules = {module for module, _, _ in _imports()}
    assert {"numpy", "pandas", "IPython", "traitlets", "markupsafe"} <= modules
    assert {module for module, _, _ in _required()} >= {"heta_framework", "pyarrow", "mlflow"}


def test_what_the_notebooks_import_is_declared_for_them() -> None:
    """`make lab` installs the core, [heta] and [notebooks]: every module a shipped notebook imports
    comes with them (04-scale-out failed at its fourth cell on `No module named 'dask'`)."""
    import json

    core, extras = _declared()
    available = core | extras["heta"] | extras["notebooks"] | {"heta_nb"}
    found: set[str] = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
            for node in ast.walk(ast.parse("\n".join(lines))):
                if isinstance(node, ast.Import):
                    found |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    missing = sorted(m for m in found - available if m not in sys.stdlib_module_names)
    assert missing == [], f"notebooks import {missing}, which `make lab` does not install"
