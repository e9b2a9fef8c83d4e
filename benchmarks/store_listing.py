"""Listing a store of 1,000 reports: with heta_nb's summary sidecars vs parsing every report.

python benchmarks/store_listing.py [--reports 1000] [--cases 60]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from heta_nb import ReportStore
from heta_nb.store import SUMMARY_FILE
from heta_nb.testing import synthetic_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=60, help="cases per report (x3 modes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = ReportStore(tmp)
        template = synthetic_report(args.cases)
        start = time.perf_counter()
        for index in range(args.reports):
            store.save(template.replace(report_id=f"run-{index:04d}", knowledge_base_name=f"kb {index % 7}"))
        saved = time.perf_counter() - start
        size = sum(p.stat().st_size for p in Path(tmp).rglob("report.json"))
        start = time.perf_counter()
        frame = ReportStore(tmp).list()
        with_sidecars = time.perf_counter() - start
        assert len(frame) == args.reports
        for sidecar in Path(tmp).rglob(SUMMARY_FILE):
            sidecar.unlink()
        start = time.perf_counter()
        frame = ReportStore(tmp).list()
        parsing = time.perf_counter() - start
        assert len(frame) == args.reports
    print(f"{args.reports} reports, {size / 1e6:.0f} MB of report.json; saving all took {saved:.1f} s")
    print(f"{'list() with sidecars':28} {with_sidecars * 1000:>8.0f} ms")
    print(f"{'list() parsing every report':28} {parsing * 1000:>8.0f} ms")
    print(f"{'ratio':28} {parsing / with_sidecars:>8.1f}x faster with sidecars")


if __name__ == "__main__":
    main()
