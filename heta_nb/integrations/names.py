"""Names and values an experiment tracker accepts: metric and param keys, flattened manifests.

MLflow allows only letters, digits, ``_ - . : /`` and spaces in a key (``ndcg@5`` is refused),
250 characters per key and 6,000 per param value; :func:`tracker_key` maps every other
character (``@`` becomes ``_at_``), and :func:`flatten` turns a manifest into short params.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from heta_nb._util.text import shorten

__all__ = ["MAX_KEY", "MAX_VALUE", "STATUS_TAG", "flatten", "param_value", "status_key", "tracker_key"]

MAX_KEY = 250
MAX_VALUE = 500
"""Characters kept of a param value: a value longer than this is not a setting anyone reads."""
MAX_ITEMS = 20
"""A list with more items is logged as ``"[N items]"``."""
STATUS_TAG = "heta_nb.status"
"""The tag a metric key gets instead of a number when there is none (``heta_nb.status/ndcg_at_5/full_text_search``)."""
_INVALID = re.compile(r"[^\w\-. :/]", re.ASCII)


def tracker_key(*parts: str) -> str:
    """``"ndcg@5", "full_text_search"`` -> ``"ndcg_at_5/full_text_search"``: a valid MLflow key.

    Args:
        *parts: The key's parts, joined with ``/`` (empty parts left out).

    Returns:
        The key: ``@`` written ``_at_``, any other character MLflow refuses as ``_``,
        at most :data:`MAX_KEY` characters.
    """
    text = "/".join(p for p in parts if p)
    text = _INVALID.sub("_", text.replace("@", "_at_"))
    return text[:MAX_KEY] or "_"


def status_key(metric_key: str) -> str:
    """``"ndcg_at_5/full_text_search"`` -> ``"heta_nb.status/ndcg_at_5/full_text_search"``: the tag
    that says why a metric key has no number (``"n/a: full_text_search returns no answers"``).

    Args:
        metric_key: The metric's key (already made valid by :func:`tracker_key`, prefix included).

    Returns:
        A valid MLflow key.
    """
    return tracker_key(STATUS_TAG, metric_key)


def param_value(value: Any) -> str:
    """A param's text: scalars as written, lists of scalars joined with ``,``, long text shortened."""
    if value is None:
        return "None"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            return f"[{len(value)} items]"
        return shorten(",".join(param_value(v) for v in value), MAX_VALUE)
    return shorten(str(value), MAX_VALUE) or '""'


def flatten(value: Any, prefix: str, *, skip: tuple[str, ...] = (), depth: int = 6) -> Iterator[tuple[str, str]]:
    """``(key, text)`` for every scalar in a nested manifest: ``recipe.steps.0.type = "ParseDocuments"``.

    Args:
        value: A mapping, list or scalar.
        prefix: The key so far.
        skip: Keys left out at the top level (runtime records, long artifact lists).
        depth: Levels followed; deeper values are logged as one shortened text.

    Yields:
        Dotted keys (not yet made valid with :func:`tracker_key`) and param texts.
    """
    if isinstance(value, Mapping):
        if depth == 0:
            yield prefix, param_value(repr(dict(value)))
            return
        for key, item in value.items():
            if str(key) in skip:
                continue
            yield from flatten(item, f"{prefix}.{key}", depth=depth - 1)
    elif isinstance(value, (list, tuple)) and any(isinstance(v, (Mapping, list, tuple)) for v in value):
        if len(value) > MAX_ITEMS or depth == 0:
            yield prefix, f"[{len(value)} items]"
            return
        for index, item in enumerate(value):
            yield from flatten(item, f"{prefix}.{index}", depth=depth - 1)
    else:
        yield prefix, param_value(value)
