"""Questions about a callable before calling it: is it ``async``, which keywords it takes."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from typing import Any

__all__ = ["accepted_keywords", "accepts_keywords", "is_async_callable"]


def is_async_callable(func: Any) -> bool:
    """True for ``async def`` functions and objects whose ``__call__`` is ``async def``."""
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)


def accepted_keywords(func: Callable[..., Any], names: Collection[str]) -> frozenset[str] | None:
    """Which of ``names`` ``func`` has a parameter for (all of them when it takes ``**kwargs``).

    Args:
        func: Any callable.
        names: The keyword arguments the caller would like to pass.

    Returns:
        A subset of ``names``, or None when the signature cannot be read (some builtins).
    """
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return frozenset(names)
    return frozenset(name for name in names if name in parameters)


def accepts_keywords(func: Callable[..., Any], names: Collection[str]) -> bool:
    """Whether ``func`` takes every one of ``names`` as a keyword (False when its signature cannot be read)."""
    accepted = accepted_keywords(func, names)
    return accepted is not None and len(accepted) == len(set(names))
