"""The model's one way up: the only place the model reaches the views above it.

A report users hold offers conveniences whose work lives in higher layers:
``report.cases_frame()`` (and ``scores_frame``, ``summary_frame``, ``to_arrow``, ``to_parquet``)
in :mod:`heta_nb.tables`, ``report.explore()`` and ``report.review()`` in :mod:`heta_nb.explorer`, and every record's
``_repr_mimebundle_`` / ``_repr_html_`` in :mod:`heta_nb.render`. Those packages import the
model, so an ``import`` of them from the model, even inside a method, closes one import
cycle through every layer between (runner, store, comparison...). Here the model names them
instead, as ``"module:attribute"`` strings, and :func:`view` imports the module by name
(:func:`importlib.import_module`) on first use: the model's own imports run only downward,
importing the model pulls in no view (nor pandas or Jinja2), and
``tests/test_architecture.py`` checks that every name below exists and lies above the model.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

__all__ = ["VIEWS", "view"]

VIEWS: Mapping[str, str] = MappingProxyType(
    {
        "cases_frame": "heta_nb.tables:cases_frame",
        "scores_frame": "heta_nb.tables:scores_frame",
        "summary_frame": "heta_nb.tables:summary_frame",
        "explore": "heta_nb.explorer:explore",
        "review": "heta_nb.explorer:review",
        "reviews": "heta_nb.reviews:reviews_frame",
        "to_arrow": "heta_nb.tables.arrow:to_arrow",
        "to_parquet": "heta_nb.tables.arrow:to_parquet",
        "repr_mimebundle": "heta_nb.render:repr_mimebundle",
        # not called by the model: with ``repr_mimebundle``, the key of a report's kept views
        # (a renderer patched or reloaded since renders afresh)
        "report_context": "heta_nb.render:build_report_context",
    }
)
"""Each convenience of the model -> the ``"module:attribute"`` that does its work."""

_modules: dict[str, ModuleType] = {}
"""The view modules imported so far, by name."""


def view(name: str) -> Callable[..., Any]:
    """The callable behind convenience ``name``, its module imported now on first use.

    The attribute is read from the module on every call (the module is imported once), so a
    view patched or reloaded since is the one called.

    Args:
        name: A key of :data:`VIEWS` (``"cases_frame"``, ``"repr_mimebundle"``...).

    Returns:
        The view function.

    Raises:
        KeyError: ``name`` is not a key of :data:`VIEWS`.
        ImportError: the view's module (or what it needs, e.g. pandas) could not be imported,
            or it has no such attribute.
    """
    try:
        target = VIEWS[name]
    except KeyError:
        raise KeyError(f"no view {name!r} (views: {', '.join(VIEWS)})") from None
    module_name, _, attribute = target.partition(":")
    module = _modules.get(module_name)
    if module is None:
        module = _modules[module_name] = importlib.import_module(module_name)
    try:
        found: Callable[..., Any] = getattr(module, attribute)
    except AttributeError:
        raise ImportError(f"cannot import name {attribute!r} from {module_name!r}", name=module_name) from None
    return found
