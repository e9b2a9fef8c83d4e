"""The :class:`CheckResult` of :func:`heta_nb.check`: the verdict, one row per mode × metric, flipped cases, errors."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from heta_nb._util.frames import frame as frame_of
from heta_nb.gate import formats
from heta_nb.model.record import RichDisplay

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from heta_nb.comparison import Comparison

__all__ = [
    "EXIT_CODES",
    "ROW_COLUMNS",
    "VERDICTS",
    "CaseChange",
    "CheckResult",
    "CheckRow",
    "ErrorCheck",
    "describe_report",
]

VERDICTS = (
    "regression",
    "unverified drop",
    "evaluator errors",
    "not comparable",
    "improvement",
    "within tolerance",
    "underpowered",
    "no detectable change",
    "n/a",
)
"""Verdicts, from the most to the least severe; the overall verdict is the most severe one
found (an unverified drop that ``allow_unverified`` lets pass does not count)."""

EXIT_CODES = {
    "regression": 1,
    "unverified drop": 1,
    "evaluator errors": 2,
    "not comparable": 2,
    "improvement": 0,
    "within tolerance": 0,
    "underpowered": 0,
    "no detectable change": 0,
    "n/a": 0,
}
"""``heta-nb check``'s exit code per overall verdict (2 is also every usage or input error)."""


@dataclass(frozen=True)
class CheckRow:
    """One mode × metric of a check: the paired difference (new − baseline), its floor, its verdict."""

    mode: str
    metric: str
    verdict: str
    """One of :data:`VERDICTS`."""
    reason: str
    """The verdict in plain words (``"dropped by 0.081 (p=0.002), more than the 0.02 tolerated"``)."""
    n: int
    """Cases with a usable score in both reports (the paired set)."""
    baseline_mean: float
    new_mean: float
    diff: float
    """Mean of (new − baseline) over the paired cases."""
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    """Holm-adjusted over the row's :attr:`family` (the metrics of its mode, ``correction="holm"``)."""
    significant: bool
    wins: int
    ties: int
    losses: int
    max_drop: str
    """The tolerated drop as given (``"0.02"`` or ``"2%"``)."""
    tolerated: float
    """The tolerated drop in the metric's units (a percentage applied to the baseline mean)."""
    floor: float | None = None
    floor_mean: float = math.nan
    """The new report's own mean of this metric and mode (every scored case), which the floor is checked on."""
    floor_failed: bool = False
    baseline_floor_mean: float = math.nan
    """The baseline's own mean of this metric and mode (a floor it failed too is not a new failure)."""
    family: str = ""
    """The tests corrected together with this one, in words (``"Holm over the 6 metrics of extractive_answer
    (new vs baseline)"``); empty when not tested."""
    family_size: int = 0
    new_evaluator_errors: int = 0
    """Scores of this metric and mode whose evaluator raised, in the new report (left out of the test)."""
    baseline_evaluator_errors: int = 0
    min_detectable_difference: float = math.nan
    """The smallest change the test detects with 80 % power at the family's level (NaN: not tested);
    a row that finds nothing while it is larger than the change and the tolerated drop is underpowered."""
    mcnemar_p: float = math.nan
    """McNemar's exact p-value on the discordant cases of a 0/1 metric (NaN otherwise)."""


ROW_COLUMNS = tuple(CheckRow.__dataclass_fields__)
"""Columns of :meth:`CheckResult.frame`."""


@dataclass(frozen=True)
class CaseChange:
    """A case whose outcome flipped (``broke``: passed -> failed, ``fixed``: failed -> passed) or that
    started or stopped erroring (``new error``, ``error fixed``)."""

    kind: str
    mode: str
    case_id: str
    query: str
    unit: str | None = None
    metric: str | None = None
    """The metric that flipped (None for errors)."""
    baseline: Any = None
    """The baseline's score value, or its error (``"TimeoutError: ..."``)."""
    new: Any = None
    """The new report's score value, or its error."""


@dataclass(frozen=True)
class ErrorCheck:
    """Errored cases of one mode: how many in each report, how many new, and whether that fails the check."""

    mode: str
    baseline_errors: int
    new_errors: int
    introduced: int
    fixed: int
    allowed: int | None = None
    """``max_new_errors`` (None: errors are listed, not gated)."""

    @property
    def failed(self) -> bool:
        """Whether more cases started erroring than allowed."""
        return self.allowed is not None and self.introduced > self.allowed


@dataclass
class CheckResult(RichDisplay):
    """What :func:`heta_nb.check` found: read :attr:`verdict` first, then :attr:`rows`.

    ``ok`` is true when nothing regressed and the reports were comparable (exit code 0);
    :meth:`assert_ok` raises an ``AssertionError`` with the text table otherwise.
    """

    verdict: str
    """The most severe row verdict (``"regression"``, ``"not comparable"``, ``"improvement"``, ...)."""
    rows: list[CheckRow]
    new: dict[str, Any]
    """The new report's identity: ``report_id``, ``knowledge_base_name``, ``benchmark``, ``started_at``, ``source``."""
    baseline: dict[str, Any]
    settings: dict[str, Any]
    reasons: list[str] = field(default_factory=list)
    """Why the reports are not comparable (empty when they are)."""
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    flips: list[CaseChange] = field(default_factory=list)
    errors: list[ErrorCheck] = field(default_factory=list)
    error_changes: list[CaseChange] = field(default_factory=list)
    """Cases that started (``new error``) or stopped (``error fixed``) erroring."""
    comparisons: dict[str, Comparison] = field(default_factory=dict, repr=False)
    """The paired comparison of each mode (:func:`heta_nb.compare`), for drill-downs."""
    checked_at: str = ""
    """When the check ran, UTC (``2026-12-05T06:12:03Z``)."""
    duration_s: float = 0.0
    """How long the check took, in seconds."""
    mode_seconds: dict[str, float] = field(default_factory=dict)
    """Seconds each mode's comparison took (JUnit shares them among the mode's rows)."""
    why: dict[str, list[str]] = field(default_factory=dict)
    """Why it changed, as the comparisons say it: ``stages`` (where the answer was lost, per
    mode), ``recipes`` (what differs between the two reports' recipes and KBs), ``slices``
    (the slices that moved, with a benchmark that has labels)."""

    # -- the verdict -----------------------------------------------------------------------
    @property
    def exit_code(self) -> int:
        """0 nothing regressed, 1 a regression or an unverified drop, 2 not comparable or
        evaluator errors (``heta-nb check``'s code)."""
        return EXIT_CODES[self.verdict]

    @property
    def unverified(self) -> list[CheckRow]:
        """The rows whose verdict is ``unverified drop`` (failing unless ``allow_unverified``)."""
        return [row for row in self.rows if row.verdict == "unverified drop"]

    @property
    def ok(self) -> bool:
        """Whether the check passes (exit code 0)."""
        return self.exit_code == 0

    @property
    def regressions(self) -> list[CheckRow]:
        """The rows whose verdict is ``regression``."""
        return [row for row in self.rows if row.verdict == "regression"]

    @property
    def headline(self) -> str:
        """One line: ``"FAILED: regression in 2 of 12 checks (ndcg@5/full_text_search, ...)"``."""
        return formats.headline(self.to_dict())

    def assert_ok(self) -> CheckResult:
        """Raise ``AssertionError`` (its message: the text table) unless the check passes.

        Returns:
            This result, when it passes.
        """
        __tracebackhide__ = True  # pytest shows the caller's line
        if not self.ok:
            raise AssertionError(self.to_text())
        return self

    # -- plain data and formats -----------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Everything as plain data (what ``--format json`` prints, NaN as None there)."""
        return {
            "verdict": self.verdict,
            "ok": self.ok,
            "exit_code": self.exit_code,
            "new": dict(self.new),
            "baseline": dict(self.baseline),
            "settings": dict(self.settings),
            "reasons": list(self.reasons),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "rows": [asdict(row) for row in self.rows],
            "errors": [{**asdict(e), "failed": e.failed} for e in self.errors],
            "flips": [asdict(change) for change in self.flips],
            "error_changes": [asdict(change) for change in self.error_changes],
            "checked_at": self.checked_at,
            "duration_s": self.duration_s,
            "mode_seconds": dict(self.mode_seconds),
            "why": {key: list(lines) for key, lines in self.why.items()},
        }

    def format(self, kind: str = "text") -> str:
        """The result as ``"text"``, ``"markdown"`` (a CI job summary), ``"json"`` or ``"junit"`` (XML).

        Args:
            kind: The format.

        Returns:
            The formatted text.
        """
        return formats.render(self.to_dict(), kind)

    def to_text(self) -> str:
        """The verdict, the table of rows, the reasons, warnings and changed cases, as plain text."""
        return self.format("text")

    def to_markdown(self) -> str:
        """GitHub-flavoured markdown for a CI job summary: verdict, table with arrows, cases collapsed."""
        return self.format("markdown")

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return self.format("json")

    def to_junit(self) -> str:
        """JUnit XML: one test case per mode × metric (and per mode for gated errors)."""
        return self.format("junit")

    def __repr__(self) -> str:
        return self.to_text()

    def frame(self) -> pd.DataFrame:
        """One row per mode × metric, columns :data:`ROW_COLUMNS`."""
        import pandas as pd

        frame = frame_of([asdict(row) for row in self.rows], columns=list(ROW_COLUMNS))
        for name in ("n", "wins", "ties", "losses"):
            frame[name] = frame[name].astype("int64")
        for name in ("significant", "floor_failed"):
            frame[name] = frame[name].astype("bool")
        frame["floor"] = pd.to_numeric(frame["floor"], errors="coerce").astype("float64")
        frame.attrs.update(verdict=self.verdict, ok=self.ok, alpha=self.settings.get("alpha"))
        return frame

    def changes_frame(self) -> pd.DataFrame:
        """The flipped cases and the error changes, one row each (kind, mode, metric, case_id, ...)."""

        columns = list(CaseChange.__dataclass_fields__)
        return frame_of([asdict(c) for c in [*self.flips, *self.error_changes]], columns=columns)


def describe_report(report: Any, source: Any = None) -> dict[str, Any]:
    """The identity of a report for a check's header.

    Args:
        report: The report.
        source: What the user passed (a path, URL or ``STORE:KB/ID``), if text.

    Returns:
        ``report_id``, ``knowledge_base_name``, ``benchmark``, ``started_at``, ``cases``, ``source``.
    """
    settings = report.metadata.get("heta_nb")
    status = settings.get("status") if isinstance(settings, Mapping) else None
    return {
        "report_id": report.report_id,
        "knowledge_base_name": report.knowledge_base_name,
        "benchmark": report.benchmark.key,
        "started_at": report.started_at,
        "cases": report.case_count,
        "status": status if isinstance(status, str) else None,
        "source": source if isinstance(source, str) else None,
    }
