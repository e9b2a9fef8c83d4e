"""Listing a store of 1,000 reports: ``ReportStore.list()`` beside the least any listing can do.

1. Target (issue 18): ``ReportStore.list()`` (a DataFrame, every report's sidecar checked
   against its report.json) <= 1.5x ``os.walk`` of the same store plus ``json.loads`` of
   every sidecar, the floor of a sidecar listing in Python. Both are timed in one process,
   interleaved, after one warm-up each (pandas imported); medians of ``--repeat`` rounds.
2. For scale: the same listing when there are no sidecars (every report parsed, as for
   reports Heta wrote), unless ``--no-parse``.

python benchmarks/store_listing.py [--reports 1000] [--cases 60] [--repeat 9] [--no-parse]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from heta_nb import ReportStore
from heta_nb.store import SUMMARY_FILE
from heta_nb.testing import synthetic_report

TARGET = 1.5


def walk_and_load(root: str) -> list[dict[str, object]]:
    """The floor: every sidecar below ``root`` found with ``os.walk`` and parsed with ``json.loads``."""
    found = []
    for folder, _dirs, files in os.walk(root):
        if SUMMARY_FILE in files:
            with open(os.path.join(folder, SUMMARY_FILE), "rb") as handle:
                found.append(json.loads(handle.read()))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=60, help="cases per report (x3 modes)")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--no-parse", action="store_true", help="skip the listing without sidecars")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = ReportStore(tmp)
        template = synthetic_report(args.cases)
        start = time.perf_counter()
        for index in range(args.reports):
            store.save(template.replace(report_id=f"run-{index:04d}", knowledge_base_name=f"kb {index % 7}"))
        saved = time.perf_counter() - start
        size = sum(p.stat().st_size for p in Path(tmp).rglob("report.json"))
        print(f"{args.reports} reports, {size / 1e6:.0f} MB of report.json; saving all took {saved:.1f} s")

        assert len(ReportStore(tmp).list()) == len(walk_and_load(tmp)) == args.reports  # warm-up (pandas...)
        floor, listing = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            walk_and_load(tmp)
            floor.append(time.perf_counter() - start)
            start = time.perf_counter()
            frame = ReportStore(tmp).list()
            listing.append(time.perf_counter() - start)
            assert len(frame) == args.reports
        walk_s, list_s = statistics.median(floor), statistics.median(listing)
        ratio = list_s / walk_s
        verdict = "PASS" if ratio <= TARGET else "FAIL"
        print(f"{'os.walk + json.loads of every sidecar':40} {walk_s * 1000:>8.1f} ms (median of {args.repeat})")
        print(f"{'ReportStore.list()':40} {list_s * 1000:>8.1f} ms")
        print(f"{'list() / walk + json.loads':40} {ratio:>8.2f}x   target <= {TARGET}x: {verdict}")

        if not args.no_parse:
            for sidecar in Path(tmp).rglob(SUMMARY_FILE):
                sidecar.unlink()
            start = time.perf_counter()
            frame = ReportStore(tmp).list()
            parsing = time.perf_counter() - start
            assert len(frame) == args.reports
            print(f"{'list() parsing every report (no sidecars)':40} {parsing * 1000:>8.0f} ms")
            print(f"{'':40} {parsing / list_s:>8.1f}x slower than with sidecars")


if __name__ == "__main__":
    main()
