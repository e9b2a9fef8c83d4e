"""How many cases each system had, and how many the comparison used (``Comparison.overlap``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MetricOverlap", "Overlap", "SystemOverlap"]


@dataclass(frozen=True)
class MetricOverlap:
    """How one system's scores of one metric fed the comparison."""

    usable: int
    """Cases with a usable score (finite number or bool; skipped ones only if included)."""
    used: int
    """Usable cases compared: those its baseline has a usable score for too (a baseline's:
    those some system is compared with it on)."""
    skipped: int
    """Scores marked ``metadata.skipped`` (left out unless ``include_skipped=True``)."""
    unscored: int
    """Answered cases without a numeric score for the metric (missing, text, NaN)."""

    @property
    def dropped(self) -> int:
        """Usable scores left out because another system had none for that case."""
        return self.usable - self.used


@dataclass(frozen=True)
class SystemOverlap:
    """Case counts of one system."""

    name: str
    cases: int
    """Case results of this system (its report × mode)."""
    errors: int
    """Of those, how many errored (left out for every system)."""
    missing: int
    """Cases some other system has but this one has no result for."""
    unmatched: int
    """Cases of this system that its pair partner lacks (its baseline; for a baseline,
    every system compared with it), left out."""
    duplicates: int
    """Repeated results for the same case (only the first is used)."""
    metrics: Mapping[str, MetricOverlap] = field(default_factory=dict)


@dataclass(frozen=True)
class Overlap:
    """The case overlap the comparison used."""

    key: str
    """What cases are matched by: ``"unit, case_id"`` or ``"case_id"``."""
    cases: int
    """Distinct cases over all systems."""
    common: int
    """Cases every system has a result for (errored or not)."""
    answered: int
    """Cases every system answered without an error."""
    aligned: Mapping[str, int]
    """Per metric, the cases compared in at least one pair (a system and its baseline)."""
    systems: tuple[SystemOverlap, ...]

    @property
    def only_in_some(self) -> int:
        """Cases missing from at least one system."""
        return self.cases - self.common

    def to_dict(self) -> dict[str, Any]:
        """Plain data (dicts, lists, ints) for templates and JSON."""
        return {
            "key": self.key,
            "cases": self.cases,
            "common": self.common,
            "only_in_some": self.only_in_some,
            "answered": self.answered,
            "aligned": dict(self.aligned),
            "systems": [
                {
                    "name": s.name,
                    "cases": s.cases,
                    "errors": s.errors,
                    "missing": s.missing,
                    "unmatched": s.unmatched,
                    "duplicates": s.duplicates,
                    "metrics": {
                        m: {
                            "usable": o.usable,
                            "used": o.used,
                            "dropped": o.dropped,
                            "skipped": o.skipped,
                            "unscored": o.unscored,
                        }
                        for m, o in s.metrics.items()
                    },
                }
                for s in self.systems
            ],
        }
