"""``start``, ``evaluate`` and ``evaluate_async`` follow ``RunConfig`` and ``ViewOptions`` exactly.

Each setting is documented once, by the docstring under its field; the three entry
points' keyword parameters (names, annotations, defaults) and their ``Args:`` sections
are generated from those fields. A drift fails here; ``HETA_UPDATE_DOCS=1 pytest
tests/api/test_docs.py`` rewrites ``heta_nb/api/`` from the fields instead.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import heta_nb
from heta_nb import api
from heta_nb.api import views as views_module
from heta_nb.runner import config as config_module

FUNCTIONS = ("start", "evaluate", "evaluate_async")
API_FILES = {name: Path(getattr(api, name).__code__.co_filename) for name in FUNCTIONS}
"""The module of each entry point (one each: their generated docstrings are long)."""


START_ONLY = ("record_events",)
"""View options only :func:`heta_nb.start` takes."""


@dataclass(frozen=True)
class Parameter:
    """One field of ``RunConfig`` or ``ViewOptions``, as its source spells it."""

    name: str
    annotation: str
    default: str | None
    doc: str


def fields_of(path: Path, class_name: str) -> list[Parameter]:
    """The init fields of a dataclass in ``path``, with their docstrings (read from the source)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == class_name)
    found = []
    for index, node in enumerate(cls.body):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "field":
            continue  # a derived field (init=False)
        following = cls.body[index + 1] if index + 1 < len(cls.body) else None
        assert (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ), f"{class_name}.{node.target.id} has no docstring"
        doc = inspect.cleandoc(following.value.value)
        assert "\n\n" not in doc, f"{class_name}.{node.target.id}: one paragraph, please"
        default = ast.get_source_segment(source, value) if value is not None else None
        found.append(Parameter(node.target.id, ast.get_source_segment(source, node.annotation) or "", default, doc))
    return found


def config_fields() -> list[Parameter]:
    return fields_of(Path(config_module.__file__), "RunConfig")


def view_fields(function: str) -> list[Parameter]:
    views = fields_of(Path(views_module.__file__), "ViewOptions")
    return [p for p in views if function == "start" or p.name not in START_ONLY]


def parameters_of(function: str) -> list[Parameter]:
    """Every parameter of an entry point, in order: ``benchmark``, the settings, the view options."""
    return config_fields() + view_fields(function)


def args_section(function: str) -> list[str]:
    """The ``Args:`` section of an entry point's docstring, as source lines."""
    lines = ["    Args:"]
    for parameter in parameters_of(function):
        text = parameter.doc.replace("\\", "\\\\").splitlines()
        lines.append(f"        {parameter.name}: {text[0]}")
        lines.extend(f"            {line}" for line in text[1:])
    return lines


def keyword_lines(function: str) -> list[str]:
    """The keyword-only parameters of an entry point, as source lines."""
    return [f"    {p.name}: {p.annotation} = {p.default}," for p in parameters_of(function)[1:]]


def generated_api(source: str) -> str:
    """An entry point's module with its keyword parameters and ``Args:`` section regenerated."""
    lines = source.split("\n")
    tree = ast.parse(source)
    functions = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in FUNCTIONS
    ]
    assert len(functions) == 1, [f.name for f in functions]
    for node in sorted(functions, key=lambda f: f.lineno, reverse=True):  # from the bottom: line numbers hold
        docstring = node.body[0]
        assert isinstance(docstring, ast.Expr) and docstring.end_lineno is not None, node.name
        doc_lines = range(docstring.lineno - 1, docstring.end_lineno)
        start = next(i for i in doc_lines if lines[i] == "    Args:")
        end = next(i for i in range(start, docstring.end_lineno) if lines[i] == "")
        lines[start:end] = args_section(node.name)
        keywords = node.args.kwonlyargs
        last = node.args.kw_defaults[-1] if node.args.kw_defaults else None
        assert keywords and last is not None and last.end_lineno is not None, node.name
        lines[keywords[0].lineno - 1 : last.end_lineno] = keyword_lines(node.name)
    return "\n".join(lines)


# -- the docstrings document every parameter ------------------------------------------------------


@pytest.mark.parametrize("function", [heta_nb.evaluate, heta_nb.start, heta_nb.evaluate_async])
def test_every_run_parameter_is_documented(function: Any) -> None:
    doc = inspect.getdoc(function) or ""
    args = doc.split("Args:", 1)[1]
    for name in inspect.signature(function).parameters:
        if name == "record_events":
            assert "record_events=True" in doc
            continue
        # a line "name:" or "a, name, b:" (indentation differs: Python 3.13 dedents docstrings itself)
        assert re.search(rf"^\s*(\w+, )*{name}[:,]", args, re.MULTILINE), name
    assert "Raises:" in doc and "Example" in (inspect.getdoc(heta_nb.evaluate) or "")


@pytest.mark.parametrize("name", FUNCTIONS)
def test_api_signatures_and_docstrings_are_generated_from_the_fields(name: str) -> None:
    path = API_FILES[name]
    source = path.read_text(encoding="utf-8")
    expected = generated_api(source)
    if os.environ.get("HETA_UPDATE_DOCS") == "1" and expected != source:
        path.write_text(expected, encoding="utf-8")
        pytest.skip(f"rewrote {path}: check the diff, then run the tests again")
    diff = "\n".join(
        difflib.unified_diff(source.split("\n"), expected.split("\n"), path.name, "generated", lineterm="")
    )
    assert expected == source, f"{path} drifted from RunConfig / ViewOptions (HETA_UPDATE_DOCS=1):\n{diff}"


def test_the_source_fields_are_the_dataclasses_fields() -> None:
    """What the generator reads from the source is what Python builds (names, defaults, annotations)."""
    for cls, parameters in ((config_module.RunConfig, config_fields()), (api.ViewOptions, view_fields("start"))):
        fields = [f for f in dataclasses.fields(cls) if f.init]
        assert [f.name for f in fields] == [p.name for p in parameters]
        assert [f.type for f in fields] == [p.annotation for p in parameters]
        for item, parameter in zip(fields, parameters):
            if parameter.default is None:
                assert item.default is dataclasses.MISSING, item.name
            else:
                assert item.default == eval(parameter.default, vars(config_module)), item.name  # noqa: S307


@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_entry_point_has_every_setting_with_its_default_and_documentation(name: str) -> None:
    function = getattr(api, name)
    signature = inspect.signature(function)
    parameters = parameters_of(name)
    assert list(signature.parameters) == [p.name for p in parameters]
    defaults: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(config_module.RunConfig)}
    defaults.update({f.name: f.default for f in dataclasses.fields(api.ViewOptions)})
    for index, (given, parameter) in enumerate(zip(signature.parameters.values(), parameters)):
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if index == 0 else inspect.Parameter.KEYWORD_ONLY
        assert given.kind == kind and given.annotation == parameter.annotation, given
        wanted = defaults[parameter.name]
        assert given.default == (inspect.Parameter.empty if wanted is dataclasses.MISSING else wanted), given
    doc = inspect.getdoc(function) or ""
    args = doc.split("\nArgs:\n", 1)[1].split("\n\n", 1)[0]
    entries = [f"    {p.name}: " + "\n        ".join(p.doc.splitlines()) for p in parameters]
    assert args == "\n".join(entries)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_entry_point_hands_every_setting_to_its_config(name: str) -> None:
    """``RunConfig(benchmark=benchmark, kb=kb, ...)``: no setting forgotten or swapped."""
    tree = ast.parse(API_FILES[name].read_text(encoding="utf-8"))
    function = next(node for node in ast.walk(tree) if getattr(node, "name", None) == name)
    calls = {
        node.func.id: node
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    for cls, parameters in (("RunConfig", config_fields()), ("ViewOptions", view_fields(name))):
        passed = [(k.arg, k.value.id if isinstance(k.value, ast.Name) else None) for k in calls[cls].keywords]
        assert passed == [(p.name, p.name) for p in parameters], cls
