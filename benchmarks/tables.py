"""``cases_frame()`` and ``scores_frame()`` against a plain DataFrame of the same data.

Target (issue 2/7): each <= 1.5x ``pd.DataFrame`` of the same columns, given as Python
lists already extracted (what a user would hand pandas). Both are built side by side on a
report just loaded, medians of interleaved runs; the frames are checked to hold the same
values. Report: 10k cases x 3 modes, 3 scores (the responses do not matter here).

    python benchmarks/tables.py [--results 30000] [--repeat 7]
"""

from __future__ import annotations

import argparse
from typing import Any

import pandas as pd
from _data import report_bytes
from _targets import Targets, interleaved

from heta_nb import load_report
from heta_nb.tables import cases_frame, scores_frame


def plain_lists(report: Any) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The columns of both frames as plain lists (from the frames themselves)."""
    cases = {name: column.tolist() for name, column in cases_frame(report).items()}
    scores = {name: column.tolist() for name, column in scores_frame(report).items()}
    return cases, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    loaded = load_report(report_bytes(args.results, results_per_case=2))
    cases, scores = plain_lists(loaded)
    pd.DataFrame(cases)  # pandas' first call

    def fresh() -> Any:
        """The loaded report as a new object (same data, nothing cached: its columns are built anew)."""
        return loaded.replace(report_key=loaded.report_key)

    times = interleaved(
        args.repeat,
        {
            "cases_frame": lambda: cases_frame(fresh()),
            "plain cases": lambda: pd.DataFrame(cases),
            "scores_frame": lambda: scores_frame(fresh()),
            "plain scores": lambda: pd.DataFrame(scores),
        },
    )
    for name, seconds in times.items():
        print(f"  {name:14} {seconds * 1000:8.1f} ms")
    targets = Targets(__file__)
    label = f"{args.results:,} results"
    targets.check(f"cases_frame() / plain DataFrame, {label}", times["cases_frame"] / times["plain cases"], 1.5)
    targets.check(f"scores_frame() / plain DataFrame, {label}", times["scores_frame"] / times["plain scores"], 1.5)
    targets.report()


if __name__ == "__main__":
    main()
