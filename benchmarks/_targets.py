"""The targets the benchmark scripts measure, one table format for all of them.

Each script makes a :class:`Targets`, calls :meth:`Targets.check` once per figure and
:meth:`Targets.report` at the end: that prints ``figure | target | measured | PASS/FAIL``
and, when ``HETA_BENCH_RESULTS`` names a file (``make bench`` sets it), appends the rows
to it as JSON lines. ``python benchmarks/_targets.py FILE`` prints every script's rows
as one table (what ``make bench`` ends with).
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RESULTS_ENV = "HETA_BENCH_RESULTS"


@dataclass
class Row:
    """One figure: what it is, its target, what was measured, and whether it met the target."""

    script: str
    figure: str
    target: str
    measured: str
    passed: bool


class Targets:
    """The rows one script reports."""

    def __init__(self, script: str) -> None:
        self.script = Path(script).name
        self.rows: list[Row] = []

    def check(self, figure: str, measured: float, limit: float, *, unit: str = "x", digits: int = 2) -> bool:
        """Record ``measured <= limit`` (ratios: ``unit="x"``; else ``"s"``, ``"ms"``, ``"KB"``)."""
        passed = measured <= limit
        self.rows.append(Row(self.script, figure, f"<= {limit:g}{unit}", f"{measured:.{digits}f}{unit}", passed))
        return passed

    def report(self) -> None:
        """Print this script's rows and append them to ``$HETA_BENCH_RESULTS`` (if set)."""
        print()
        print_table(self.rows)
        target = os.environ.get(RESULTS_ENV)
        if target:
            with open(target, "a", encoding="utf-8") as out:
                for row in self.rows:
                    out.write(json.dumps(asdict(row)) + "\n")


def print_table(rows: Sequence[Row], *, with_script: bool = False) -> None:
    """``figure | target | measured | PASS/FAIL``, aligned."""
    header = ["figure", "target", "measured", "result"]
    lines = [
        [(f"{r.script}: " if with_script else "") + r.figure, r.target, r.measured, "PASS" if r.passed else "FAIL"]
        for r in rows
    ]
    widths = [max(len(x[i]) for x in [header, *lines]) for i in range(4)]
    for line in [header, ["-" * w for w in widths], *lines]:
        print(" | ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())


def interleaved(repeat: int, runs: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """Median seconds of each function over ``repeat`` rounds, the functions taking turns in
    each round (so a change in the machine's load hits all of them alike)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            gc.collect()
            start = time.perf_counter()
            result = run()
            times[name].append(time.perf_counter() - start)
            del result
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv: Sequence[str]) -> int:
    """Print every row in the JSON-lines files given, then how many passed."""
    rows = []
    for name in argv:
        path = Path(name)
        if path.is_file():
            rows.extend(Row(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line)
    print("\n== every target")
    print_table(rows, with_script=True)
    print(f"\n{sum(r.passed for r in rows)} of {len(rows)} targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def load_average() -> str:
    """The 1-minute load average (other work on the machine makes every figure slower, parallel ones most)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:  # pragma: no cover - not on this platform
        return "?"
