"""The regression gate: ``check(new, baseline)`` decides whether a recipe change regressed, for CI.

Built on :mod:`heta_nb.comparison` (its alignment and paired statistics, one comparison per
mode, Holm over every mode × metric); the verdicts, flipped cases and formats are here.
"""

from __future__ import annotations

from heta_nb.gate.build import check
from heta_nb.gate.formats import FORMATS
from heta_nb.gate.result import EXIT_CODES, ROW_COLUMNS, VERDICTS, CaseChange, CheckResult, CheckRow, ErrorCheck

__all__ = [
    "EXIT_CODES",
    "FORMATS",
    "ROW_COLUMNS",
    "VERDICTS",
    "CaseChange",
    "CheckResult",
    "CheckRow",
    "ErrorCheck",
    "check",
]
