"""What the explorer shows: :class:`Filters` (search, mode, status, label, metric range, quick
filter, sort), applied to a table as numpy masks, and the empty state's advice."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

import numpy as np

from heta_nb.explorer.columns import STATUSES, Column

__all__ = ["Filtered", "Filters", "Table", "apply_filters", "search_terms", "text_ranks"]


class Table(Protocol):
    """What :func:`apply_filters` reads of a table (``ReportTable`` or ``PairTable``)."""

    n: int
    metrics: tuple[str, ...]
    modes: tuple[str, ...]
    quick_filters: tuple[str, ...]
    labels: Any

    @property
    def columns(self) -> list[Column]: ...

    @property
    def search_text(self) -> list[str]: ...

    def mode_mask(self, mode: str) -> np.ndarray: ...

    def status_codes(self, metric: str | None) -> np.ndarray: ...

    def range_values(self, metric: str) -> np.ndarray: ...

    def quick_mask(self, name: str, metric: str | None) -> np.ndarray: ...


@dataclass(frozen=True)
class Filters:
    """The explorer's filter and sort settings (every field optional).

    Attributes:
        search: words that must all appear (case-insensitive) in the case id, query, answer
            or error; ``"two words"`` in double quotes is one phrase.
        mode: one query mode (reports).
        status: ``ok``, ``error``, ``skipped`` or ``n/a``, of ``metric`` or, without one, of
            any score (``error`` covers failed cases and evaluators that raised).
        label: ``key = value`` of a benchmark case label.
        metric: the metric that ``status``, ``low``/``high`` and (comparisons) the quick
            filters and deltas read.
        low, high: inclusive bounds on ``metric`` (on its delta in a comparison).
        quick: ``regressions``, ``improvements`` or ``differing`` (comparisons); ``judges
            disagree`` (a report whose LLM judges disagreed across repeats on some cases).
        sort: a column key; None keeps the report's order.
        descending: sort from the largest (missing values stay last either way).
    """

    search: str = ""
    mode: str | None = None
    status: str | None = None
    label: str | None = None
    metric: str | None = None
    low: float | None = None
    high: float | None = None
    quick: str | None = None
    sort: str | None = None
    descending: bool = False

    def changed(self, **changes: Any) -> Filters:
        """A copy with ``changes``; ``""`` means "no filter" for the optional fields."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(f"unknown filter(s) {unknown}; filters: {sorted(known)}")
        cleaned = {k: (None if v == "" and k != "search" else v) for k, v in changes.items()}
        for name in ("low", "high"):
            if cleaned.get(name) is not None:
                cleaned[name] = _bound(name, cleaned[name])
        return replace(self, **cleaned)  # type: ignore[arg-type]

    def active(self) -> list[tuple[str, str]]:
        """The filters in force, as ``(field, plain words)`` (sorting is not a filter)."""
        found = []
        if self.search.strip():
            found.append(("search", f"the search “{self.search.strip()}”"))
        if self.mode:
            found.append(("mode", f"mode {self.mode}"))
        if self.status:
            found.append(("status", f"status {self.status}" + (f" of {self.metric}" if self.metric else "")))
        if self.label:
            found.append(("label", f"label {self.label}"))
        if self.low is not None or self.high is not None:
            found.append(("range", f"{self.metric} {_range_text(self.low, self.high)}"))
        if self.quick:
            found.append(("quick", f"the quick filter {self.quick}"))
        return found


def _bound(name: str, value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError(f"{name}: {value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(float(value)):
        raise ValueError(f"{name}: {value!r} is not a number")
    return float(value)


def _range_text(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"from {low:g} to {high:g}"
    return f"≥ {low:g}" if low is not None else f"≤ {high:g}"


_TERMS = re.compile(r'"([^"]*)"|(\S+)')


def search_terms(text: str) -> list[str]:
    """The case-folded words and ``"quoted phrases"`` of a search."""
    return [t for quoted, word in _TERMS.findall(text) if (t := (quoted or word).strip().casefold())]


@dataclass(frozen=True)
class Filtered:
    """The outcome of :func:`apply_filters`.

    Attributes:
        rows: matching table rows, in display order.
        masks: each active filter's own mask (for the empty state's advice).
        status_counts: matches per status (of ``metric``, or of any score).
    """

    rows: np.ndarray
    masks: dict[str, np.ndarray]
    status_counts: dict[str, int]

    def advice(self, filters: Filters) -> str:
        """What to change when nothing matches: the filter whose removal brings back most cases."""
        active = filters.active()
        if not active:
            return "The table has no rows."
        names = dict(active)
        best: tuple[int, str] | None = None
        for name in self.masks:
            others = [m for other, m in self.masks.items() if other != name]
            count = int(np.logical_and.reduce(others).sum()) if others else -1
            if best is None or count > best[0]:
                best = (count, name)
        parts = ", ".join(text for _, text in active)
        head = f"No case matches {parts}."
        if best is None or best[0] <= 0:
            return head + " Clear the filters to see every case."
        return f"{head} Without {names[best[1]]}, {best[0]:,} would match."


def _validate(table: Table, filters: Filters) -> None:
    if filters.mode is not None and filters.mode not in table.modes:
        raise ValueError(f"mode: {filters.mode!r} is not one of {list(table.modes)}")
    if filters.status is not None and filters.status not in STATUSES:
        raise ValueError(f"status: {filters.status!r} is not one of {list(STATUSES)}")
    if filters.metric is not None and filters.metric not in table.metrics:
        raise ValueError(f"metric: {filters.metric!r} is not one of {list(table.metrics)}")
    if (filters.low is not None or filters.high is not None) and filters.metric is None:
        raise ValueError("low/high: choose the metric the range applies to")
    if filters.low is not None and filters.high is not None and filters.low > filters.high:
        raise ValueError(f"low/high: the range is empty ({filters.low:g} > {filters.high:g})")
    if filters.quick is not None and filters.quick not in table.quick_filters:
        known = list(table.quick_filters) or "none (a report has one only when its LLM judges disagreed)"
        raise ValueError(f"quick: {filters.quick!r} is not one of {known}")
    if filters.sort is not None and filters.sort not in {c.key for c in table.columns}:
        raise ValueError(f"sort: no column {filters.sort!r}; columns: {[c.key for c in table.columns]}")


def apply_filters(table: Table, filters: Filters, *, sort_keys: dict[str, np.ndarray] | None = None) -> Filtered:
    """The rows of ``table`` that pass ``filters``, sorted.

    Args:
        table: the table.
        filters: what to keep and how to order it.
        sort_keys: a cache of each text column's rank per row (filled on first use).

    Returns:
        The rows, each active filter's mask and the status counts.

    Raises:
        ValueError: a filter names an unknown mode, status, metric, quick filter or column,
            or the range is empty; the message names the field.
    """
    _validate(table, filters)
    masks: dict[str, np.ndarray] = {}
    terms = search_terms(filters.search)
    if terms:
        masks["search"] = _search(table.search_text, terms, table.n)
    if filters.mode:
        masks["mode"] = table.mode_mask(filters.mode)
    codes = table.status_codes(filters.metric)
    if filters.status:
        masks["status"] = codes == STATUSES.index(filters.status)
    if filters.label:
        masks["label"] = table.labels.mask(filters.label)
    if filters.metric and (filters.low is not None or filters.high is not None):
        values = table.range_values(filters.metric)
        with np.errstate(invalid="ignore"):
            keep = ~np.isnan(values)
            if filters.low is not None:
                keep &= values >= filters.low
            if filters.high is not None:
                keep &= values <= filters.high
        masks["range"] = keep
    if filters.quick:
        masks["quick"] = table.quick_mask(filters.quick, filters.metric)
    rows = np.flatnonzero(np.logical_and.reduce(list(masks.values()))) if masks else np.arange(table.n)
    if filters.sort is not None:
        rows = _sorted(table, rows, filters.sort, filters.descending, sort_keys if sort_keys is not None else {})
    counts = np.bincount(codes[rows], minlength=len(STATUSES)) if rows.size else np.zeros(len(STATUSES), int)
    return Filtered(rows, masks, {status: int(counts[k]) for k, status in enumerate(STATUSES)})


def _search(texts: list[str], terms: list[str], n: int) -> np.ndarray:
    """Rows whose text holds every term: the longest term scans every row, the others only
    the rows still in the running (a C-level substring test per row, no regex)."""
    candidates: list[int] | None = None
    for term in sorted(terms, key=len, reverse=True):
        if candidates is None:
            candidates = np.flatnonzero(np.fromiter((term in t for t in texts), dtype=bool, count=n)).tolist()
        else:
            candidates = [i for i in candidates if term in texts[i]]
    mask = np.zeros(n, dtype=bool)
    mask[candidates or []] = True
    return mask


def text_ranks(values: Any) -> np.ndarray:
    """Dense ranks of texts, case-folded: equal texts share a rank (so ties keep the report's
    order in both directions); None is NaN."""
    texts = [None if v is None else str(v).casefold() for v in values]
    rank = np.full(len(texts), np.nan)
    where = [i for i, t in enumerate(texts) if t is not None]
    if not where:
        return rank
    order = sorted(where, key=texts.__getitem__)  # type: ignore[arg-type]
    ordered = np.array([texts[i] for i in order], dtype=object)
    steps = np.r_[0, np.cumsum(ordered[1:] != ordered[:-1])].astype("float64")
    rank[np.array(order)] = steps
    return rank


def _sorted(table: Table, rows: np.ndarray, key: str, descending: bool, cache: dict[str, np.ndarray]) -> np.ndarray:
    """``rows`` ordered by column ``key`` (stable; missing values last in both directions)."""
    rank = cache.get(key)
    if rank is None:
        column = next(c for c in table.columns if c.key == key)
        values = column.values()
        if column.numeric:
            rank = np.asarray(values, dtype="float64")
        else:
            rank = text_ranks(values)
        cache[key] = rank
    keys = rank[rows]
    missing = np.isnan(keys)
    present_rows, present_keys = rows[~missing], keys[~missing]
    order = np.argsort(-present_keys if descending else present_keys, kind="stable")
    return np.concatenate([present_rows[order], rows[missing]])
