"""DataFrames that hold any text a report may hold, with or without pyarrow.

With pyarrow installed, pandas 3 stores ``str`` columns in Arrow, and Arrow cannot hold a
lone surrogate (``"\\ud800"``), which JSON, Heta's reports and so heta_nb's allow in ids,
queries and answers. The frame would then fail to build. :func:`frame` builds it as pandas
would and, only when that fails on such text, builds it again with Python-stored strings:
nothing is replaced, and the common case costs nothing. pandas is imported when called.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["frame", "python_strings", "text_array", "with_python_strings_if_refused"]

F = TypeVar("F", bound=Callable[..., Any])


def python_strings() -> Any:
    """A context in which pandas stores new ``str`` columns as Python strings (lossless)."""
    import pandas as pd

    return pd.option_context("mode.string_storage", "python")


def frame(*args: Any, **kwargs: Any) -> Any:
    """``pd.DataFrame(*args, **kwargs)``, its text columns Python-stored if Arrow refuses one."""
    import pandas as pd

    try:
        return pd.DataFrame(*args, **kwargs)
    except UnicodeEncodeError:
        with python_strings():
            return pd.DataFrame(*args, **kwargs)


def text_array(values: Any, dtype: Any) -> Any:
    """``pd.array(values, dtype=dtype)`` for text; Python-stored if Arrow refuses a value."""
    import pandas as pd

    try:
        return pd.array(values, dtype=dtype)
    except UnicodeEncodeError:
        if isinstance(dtype, pd.StringDtype):
            return pd.array(values, dtype=pd.StringDtype("python", na_value=dtype.na_value))
        return pd.array(values, dtype=object)


def with_python_strings_if_refused(build: F) -> F:
    """``build(...)``, run again with Python-stored strings when Arrow refuses a text it holds.

    For functions that work on frames of untrusted names (``Series.map``, ``isin``, ``rename``
    build Arrow string arrays of them): the common case runs as pandas would.
    """

    @functools.wraps(build)
    def built(*args: Any, **kwargs: Any) -> Any:
        try:
            return build(*args, **kwargs)
        except UnicodeEncodeError:  # a lone surrogate: Arrow strings refuse it, Python ones keep it
            with python_strings():
                return build(*args, **kwargs)

    return built  # type: ignore[return-value]
