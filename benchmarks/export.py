"""Standalone HTML export of a 10,000-case x 3-mode report: time and size vs its report.json.

Targets (issue 4/5): <= 2 s, and a file no larger than the report.json it comes from.

    python benchmarks/export.py [--cases 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from heta_nb.export import to_html
from heta_nb.model import encode_report
from heta_nb.testing import synthetic_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    report = synthetic_report(args.cases, results_per_case=5)
    report_bytes = len(encode_report(report))
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "report.html"
        for _ in range(args.repeat):
            start = time.perf_counter()
            to_html(report, target)
            times.append(time.perf_counter() - start)
        size = target.stat().st_size
    best = min(times)
    print(f"report: {len(report.case_results):,} case results, report.json {report_bytes / 1e6:.1f} MB")
    print(f"{'measure':34} {'value':>10} {'target':>10} {'ratio':>7}")
    print(f"{'export time (best of ' + str(args.repeat) + ')':34} {best:>9.2f}s {'2.00s':>10} {best / 2:>7.2f}")
    print(
        f"{'file size vs report.json':34} {size / 1e6:>8.1f}MB {report_bytes / 1e6:>8.1f}MB {size / report_bytes:>7.2f}"
    )


if __name__ == "__main__":
    main()
