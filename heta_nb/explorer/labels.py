"""Case labels for the explorer's label filter: the benchmark's labels joined on ``case_id``
(reports do not store labels), as ``key = value`` choices with their counts."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["NO_LABEL", "LabelIndex", "label_text"]

NO_LABEL = "(none)"
"""The value shown for a case that does not carry a label at all."""

_MAX_CHOICES = 200


def label_text(value: Any) -> str:
    """A label value as the text a choice shows (lists and dicts as JSON)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class LabelIndex:
    """Per label key, each row's value (as text), from a benchmark's case labels.

    Args:
        benchmark: heta_nb's or Heta's benchmark (anything with ``cases`` that have
            ``case_id`` and ``labels``), or None (no labels).
        case_ids: the table's case id per row.
    """

    def __init__(self, benchmark: Any, case_ids: np.ndarray) -> None:
        self.available = benchmark is not None
        self.values: dict[str, np.ndarray] = {}
        if benchmark is None:
            return
        labels: dict[str, Mapping[str, Any]] = {}
        for case in getattr(benchmark, "cases", ()):
            labels[str(case.case_id)] = case.labels or {}
        keys = sorted({key for mapping in labels.values() for key in mapping})
        for key in keys:
            by_case = {case_id: label_text(mapping[key]) for case_id, mapping in labels.items() if key in mapping}
            self.values[key] = np.array([by_case.get(c, NO_LABEL) for c in case_ids], dtype=object)

    def add(self, key: str, values: np.ndarray) -> None:
        """A computed label for every row (``stage`` of a comparison's changed cases): it
        filters like a benchmark label, with or without a benchmark."""
        self.values[key] = np.asarray(values, dtype=object)
        self.available = True

    @property
    def keys(self) -> tuple[str, ...]:
        """The label keys, sorted."""
        return tuple(self.values)

    def choices(self) -> list[str]:
        """``key = value`` choices, most frequent values first within a key (at most 200)."""
        found: list[str] = []
        for key, column in self.values.items():
            for value, _ in Counter(column.tolist()).most_common():
                found.append(f"{key} = {value}")
                if len(found) >= _MAX_CHOICES:
                    return found
        return found

    def mask(self, choice: str) -> np.ndarray:
        """Rows whose label matches ``choice`` (``key = value`` or ``key=value``).

        Raises:
            ValueError: no benchmark was given, or the key is unknown (the message lists the keys).
        """
        key, sep, value = choice.partition("=")
        key, value = key.strip(), value.strip()
        if not self.available:
            raise ValueError("label: the report has no case labels; pass benchmark= to explore(...) to filter by label")
        if not sep or key not in self.values:
            keys = ", ".join(self.values) or "none"
            raise ValueError(f"label: {choice!r} is not 'key = value' with a known key (keys: {keys})")
        return np.asarray(self.values[key] == value)
