"""The explorer's browser half: one anywidget whose ES module (``assets/explorer.js``) draws
the controls, the page of rows and the case panel; the kernel does every filter and sort."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from heta_nb.errors import MissingDependencyError

__all__ = ["ASSETS", "explorer_widget_class"]

ASSETS = Path(__file__).with_name("assets")
"""Where ``explorer.js``, ``grid.js`` and ``explorer.css`` are."""

_CLASS: Any = None


def _module() -> str:
    """The widget's ES module: ``grid.js`` (the comparison grid's view, no exports) then ``explorer.js``."""
    return "\n".join((ASSETS / name).read_text(encoding="utf-8") for name in ("grid.js", "explorer.js"))


def _css() -> str:
    """The explorer's one stylesheet (the case panel included: the browser builds it)."""
    return (ASSETS / "explorer.css").read_text(encoding="utf-8")


def explorer_widget_class() -> Any:
    """The ``ExplorerWidget`` class (built on first use: anywidget is imported only then).

    Traits the kernel sets: ``columns``, ``rows`` (the page: at most ``page_size`` rows of
    plain-text cells), ``info`` (counts, page, empty state, error), ``options`` (what the
    controls offer), ``case`` (the open case's panel data, :mod:`heta_nb.explorer.case_data`;
    the browser builds the panel with ``textContent``), ``selected`` and ``review`` (review
    mode's state: :mod:`heta_nb.explorer.review`) and ``grid`` (a comparison's case × system
    grid: :mod:`heta_nb.explorer.grid_view`). Traits the browser sets: ``search``,
    ``mode``, ``status``, ``label``, ``metric``, ``low``, ``high``, ``quick``, ``system``,
    ``report``, ``sort``, ``descending``, ``page``, ``column_layout`` (the columns shown,
    pinned and their order), and the grid's ``view``, ``grid_metric``, ``grid_disagree`` and
    ``grid_page``. Actions (open a row, next, previous, close, reset; review mode's start,
    verdict, next and stop) arrive as custom messages. A standalone page runs
    the same ES module on ``assets/engine.js``'s model instead (:mod:`heta_nb.explorer.page`).
    """
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    try:
        import anywidget
    except ImportError as exc:  # a dependency of heta-nb: only a broken install lacks it
        raise MissingDependencyError(
            "the case explorer needs the package 'anywidget' (a dependency of heta-nb); "
            "install it with: pip install anywidget"
        ) from exc
    import traitlets as t

    class ExplorerWidget(anywidget.AnyWidget):  # type: ignore[misc]
        """The explorer's widget (see :func:`explorer_widget_class`)."""

        _esm = t.Unicode(_module()).tag(sync=True)
        _css = t.Unicode("").tag(sync=True)

        columns: Any = t.List().tag(sync=True)
        rows: Any = t.List().tag(sync=True)
        info = t.Dict().tag(sync=True)
        options = t.Dict().tag(sync=True)
        case = t.Dict(allow_none=True, default_value=None).tag(sync=True)
        selected = t.Int(-1).tag(sync=True)
        column_layout = t.Dict().tag(sync=True)  # (not ``layout``: every DOMWidget's Layout)
        review = t.Dict().tag(sync=True)
        grid = t.Dict().tag(sync=True)

        search = t.Unicode("").tag(sync=True)
        mode = t.Unicode("").tag(sync=True)
        status = t.Unicode("").tag(sync=True)
        label = t.Unicode("").tag(sync=True)
        metric = t.Unicode("").tag(sync=True)
        low = t.Unicode("").tag(sync=True)
        high = t.Unicode("").tag(sync=True)
        quick = t.Unicode("").tag(sync=True)
        system = t.Unicode("").tag(sync=True)
        report = t.Unicode("").tag(sync=True)
        sort = t.Unicode("").tag(sync=True)
        descending = t.Bool(False).tag(sync=True)
        page = t.Int(0).tag(sync=True)
        view = t.Unicode("").tag(sync=True)
        grid_metric = t.Unicode("").tag(sync=True)
        grid_disagree = t.Bool(False).tag(sync=True)
        grid_page = t.Int(0).tag(sync=True)

        def __init__(self, fallback: Callable[[], str | None] | None = None, **kwargs: Any) -> None:
            super().__init__(_css=_css(), **kwargs)
            self._fallback = fallback

        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            """The widget view, with the static report as ``text/html`` for viewers without widgets."""
            bundle = super()._repr_mimebundle_(**kwargs)
            if bundle is None or self._fallback is None:
                return bundle
            data, metadata = bundle
            try:
                html = self._fallback()
            except Exception:  # noqa: BLE001 - a fallback never stops the widget from showing
                html = None
            if html:
                data = {**data, "text/html": html}
            return data, metadata

    _CLASS = ExplorerWidget
    return _CLASS
