"""The gate's thresholds: tolerated drops (``0.02`` or ``"2%"``), floors and pass marks, per metric or metric/mode."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Drop", "Thresholds", "parse_assignment", "parse_drop"]


@dataclass(frozen=True)
class Drop:
    """A tolerated drop: ``amount`` absolute, or a fraction of the baseline mean when ``relative``."""

    amount: float
    relative: bool = False

    def allowed(self, baseline_mean: float) -> float:
        """The largest drop tolerated from ``baseline_mean`` (absolute units)."""
        if not self.relative:
            return self.amount
        return self.amount * abs(baseline_mean) if math.isfinite(baseline_mean) else 0.0

    def __str__(self) -> str:
        return f"{self.amount * 100:g}%" if self.relative else f"{self.amount:g}"


def parse_drop(value: Any, what: str = "max_drop") -> Drop:
    """A :class:`Drop` from ``0.02``, ``"0.02"`` or ``"2%"`` (2 % of the baseline mean).

    Args:
        value: The tolerated drop.
        what: The argument's name, for messages.

    Returns:
        The drop.

    Raises:
        ValueError: Not a finite number >= 0 (or a percentage of one).
    """
    if isinstance(value, Drop):
        return value
    relative = False
    number: Any = value
    if isinstance(value, str):
        text = value.strip()
        relative = text.endswith("%")
        try:
            number = float(text[:-1] if relative else text)
        except ValueError:
            raise ValueError(
                f"{what}: expected a number such as 0.02 or a percentage such as '2%', got {value!r}"
            ) from None
        if relative:
            number /= 100.0
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) or number < 0:
        raise ValueError(f"{what}: expected a finite number >= 0 (or a percentage such as '2%'), got {value!r}")
    return Drop(float(number), relative)


def parse_assignment(text: str, what: str) -> tuple[str, str]:
    """``"ndcg@5=0.6"`` -> ``("ndcg@5", "0.6")`` (the last ``=`` splits; the name may hold one).

    Args:
        text: ``NAME=VALUE``.
        what: The option, for messages (``"--floor"``).

    Returns:
        The name and the value, stripped.

    Raises:
        ValueError: No ``=``, or an empty side.
    """
    name, sep, value = text.rpartition("=")
    if not sep or not name.strip() or not value.strip():
        raise ValueError(f"{what}: expected METRIC=VALUE (or METRIC/MODE=VALUE), got {text!r}")
    return name.strip(), value.strip()


def _number(value: Any, what: str) -> float:
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ValueError(f"{what}: expected a finite number, got {value!r}")
    return number


class Thresholds:
    """Per (mode, metric): the tolerated drop, the floor and the pass mark.

    Keys of the mappings are a metric (``"ndcg@5"``: every mode) or ``"metric/mode"``
    (``"ndcg@5/full_text_search"``: that mode only, which wins over the metric alone).
    """

    def __init__(
        self,
        *,
        max_drop: Any = 0.0,
        floors: Mapping[str, Any] | None = None,
        pass_at: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(max_drop, Mapping):
            self.default_drop = parse_drop(max_drop.get("*", 0.0))
            self.drops = {str(k): parse_drop(v, f"max_drop[{k!r}]") for k, v in max_drop.items() if k != "*"}
        else:
            self.default_drop = parse_drop(max_drop)
            self.drops = {}
        self.floors = {str(k): _number(v, f"floors[{k!r}]") for k, v in (floors or {}).items()}
        self.pass_at = {str(k): _number(v, f"pass_at[{k!r}]") for k, v in (pass_at or {}).items()}

    @staticmethod
    def _lookup(table: Mapping[str, Any], mode: str, metric: str) -> Any:
        return table.get(f"{metric}/{mode}", table.get(metric))

    def drop(self, mode: str, metric: str) -> Drop:
        """The tolerated drop of ``metric`` in ``mode``."""
        found = self._lookup(self.drops, mode, metric)
        return found if isinstance(found, Drop) else self.default_drop

    def floor(self, mode: str, metric: str) -> float | None:
        """The floor of ``metric`` in ``mode``, if any."""
        found = self._lookup(self.floors, mode, metric)
        return None if found is None else float(found)

    def pass_mark(self, mode: str, metric: str) -> float | None:
        """The value at or above which a number passes, if set (else: above 0)."""
        found = self._lookup(self.pass_at, mode, metric)
        return None if found is None else float(found)

    def floor_metrics(self, mode: str, modes: Sequence[str]) -> list[str]:
        """The metrics a floor names for ``mode``: keys ``metric``, and ``metric/mode`` for this mode.

        Args:
            mode: The mode.
            modes: Every mode of the reports (a key ending in ``/other_mode`` is that mode's).

        Returns:
            The metric names, in the floors' order.
        """
        names: dict[str, None] = {}
        for key in self.floors:
            metric, slash, for_mode = key.rpartition("/")
            if slash and metric and for_mode in modes:
                if for_mode == mode:
                    names[metric] = None
            else:
                names[key] = None
        return list(names)

    def unknown_keys(self, modes: Sequence[str], metrics: Sequence[str]) -> list[str]:
        """Keys of ``max_drop``, ``floors`` and ``pass_at`` that name no checked metric (or metric/mode)."""
        known = set(metrics) | {f"{metric}/{mode}" for metric in metrics for mode in modes}
        keys = [*self.drops, *self.floors, *self.pass_at]
        return [key for key in dict.fromkeys(keys) if key not in known]

    def to_dict(self) -> dict[str, Any]:
        """The thresholds as plain data (drops as text: ``"0.02"``, ``"2%"``)."""
        return {
            "max_drop": str(self.default_drop),
            "max_drop_by_metric": {k: str(v) for k, v in self.drops.items()},
            "floors": dict(self.floors),
            "pass_at": dict(self.pass_at),
        }
