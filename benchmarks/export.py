"""Standalone HTML export (``to_html``) of reports: time, and size against the report.json.

Targets (issue 2/7): 30,000 results <= 2.0 s; 1,000 results <= 0.2 s (no fixed cost above
~0.15 s: the figures are heta_nb's own SVG, not matplotlib's). (30,000 was <= 1.5 s until the
page held the notebook's explorer: every column's cells, sort keys and statuses, the kernel's
own, so the page and the widget read one report alike; that costs ~0.35 s at 30,000.) The file must also stay no
larger than the report.json it comes from (issue 4/5). Each export is of a report just
loaded (not timed), written to a temporary folder; medians of ``--repeat`` runs.

    python benchmarks/export.py [--repeat 5] [--results 1000 30000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _data import report_bytes
from _targets import Targets

from heta_nb import load_report
from heta_nb.export import to_html


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--results", type=int, nargs=2, default=[1_000, 30_000], help="the small and the large size")
    args = parser.parse_args()
    targets = Targets(__file__)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "report.html"
        to_html(load_report(report_bytes(300, results_per_case=5)), target)  # templates compiled, modules imported
        for results, limit in zip(args.results, (0.2, 2.0)):
            raw = report_bytes(results, results_per_case=5)
            times = []
            for _ in range(args.repeat):
                report = load_report(raw)
                start = time.perf_counter()
                to_html(report, target)
                times.append(time.perf_counter() - start)
            size = target.stat().st_size
            took = statistics.median(times)
            print(f"{results:,} results: {took:.2f} s; {size / 1e6:.1f} MB for a {len(raw) / 1e6:.1f} MB report.json")
            targets.check(f"to_html, {results:,} results", took, limit, unit=" s")
            targets.check(f"to_html file / report.json, {results:,} results", size / len(raw), 1.0)
    targets.report()


if __name__ == "__main__":
    main()
