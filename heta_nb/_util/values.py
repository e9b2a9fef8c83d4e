"""Plain Python values from numpy scalars, without importing numpy; integers of any size as text."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

__all__ = ["EXACT_INT_LIMIT", "NOT_NUMPY", "int_text", "is_finite_number", "numpy_item"]

EXACT_INT_LIMIT = 10**15
"""Integers below this (in magnitude) are written out in full, with thousands separators."""

NOT_NUMPY: Any = object()
"""What :func:`numpy_item` returns for anything but a numpy bool or number scalar."""
_NUMPY_ITEMS = frozenset((bool, int, float))


def numpy_item(value: Any) -> Any:
    """``value.item()`` (a plain bool, int or float) for a numpy scalar, else ``NOT_NUMPY``.

    ``np.bool_`` becomes ``bool``, ``np.integer`` ``int`` and ``np.floating`` ``float``
    (NaN stays NaN). numpy is not imported: a numpy scalar is an object whose type
    comes from the ``numpy`` module, derives from ``numpy.generic`` (so arrays, even
    0-d ones, are not scalars) and has ``item()``. Other scalars (complex, datetime,
    strings, ``longdouble``) are not converted either. Only for the slow paths: the
    callers try their exact type checks first.
    """
    kind = type(value)
    if kind.__module__ != "numpy" or not hasattr(value, "item"):
        return NOT_NUMPY
    if not any(base.__name__ == "generic" and base.__module__ == "numpy" for base in kind.__mro__):
        return NOT_NUMPY
    try:
        item = value.item()
    except Exception:  # noqa: BLE001 - not a scalar we understand
        return NOT_NUMPY
    return item if type(item) in _NUMPY_ITEMS else NOT_NUMPY


def int_text(value: int, digits: int = 3) -> str:
    """An integer of any size as text, never through a float (which overflows past 1e308).

    ``12,400`` below :data:`EXACT_INT_LIMIT`; beyond it ``digits - 1`` decimals and an
    exponent (``1.00e+399``), as floats from a million up are shown: a JSON file may hold
    a 400-digit ``latency_ms``, and a view must neither crash nor call it infinite.
    """
    if -EXACT_INT_LIMIT < value < EXACT_INT_LIMIT:
        return f"{value:,}"
    return f"{Decimal(value):.{max(digits - 1, 1)}e}"  # (Decimal: exact for any size, no str-digits limit)


def is_finite_number(value: Any) -> bool:
    """An int (of any size, not a bool) or a finite float: what ``math.isfinite`` accepts without raising."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or value - value == 0.0  # (NaN and ±inf give NaN)
