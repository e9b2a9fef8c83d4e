"""Plain Python values from numpy scalars, without importing numpy."""

from __future__ import annotations

from typing import Any

__all__ = ["NOT_NUMPY", "numpy_item"]

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
