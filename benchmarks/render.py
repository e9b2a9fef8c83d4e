"""The report view (``_repr_html_``): first and second call, and its size.

Targets (issue 2/7): 10k cases x 3 modes (30,000 results), first call <= 100 ms and a
second call <= 10 ms; 100,000 results, first call <= 300 ms; the output <= 300 KB.

"First call" is a report just loaded (``load_report`` is not timed), in a process whose
templates are compiled already (the one-off compilation is shown apart); it includes
building the report's column table. Reports: 10 results per response, 3 scores.

    python benchmarks/render.py [--repeat 5] [--results 30000 100000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _data import report_bytes
from _targets import Targets

from heta_nb import load_report
from heta_nb.render.env import environment
from heta_nb.testing import synthetic_report


def first_and_second(raw: bytes, repeat: int) -> tuple[float, float, int]:
    """Median seconds of the first and of the second ``_repr_html_`` of fresh reports; KB."""
    firsts, seconds = [], []
    size = 0
    for _ in range(repeat):
        report = load_report(raw)
        start = time.perf_counter()
        html = report._repr_html_()
        firsts.append(time.perf_counter() - start)
        start = time.perf_counter()
        again = report._repr_html_()
        seconds.append(time.perf_counter() - start)
        assert html == again and html is not None
        size = len(html.encode("utf-8"))
    return statistics.median(firsts), statistics.median(seconds), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--results", type=int, nargs=2, default=[30_000, 100_000], help="the two sizes")
    args = parser.parse_args()
    targets = Targets(__file__)
    start = time.perf_counter()
    environment().get_template("report.html.j2")
    synthetic_report(20)._repr_html_()  # every template the view includes
    print(f"template compilation (once per process): {(time.perf_counter() - start) * 1000:.0f} ms")
    for results, limit in zip(args.results, (0.1, 0.3)):
        raw = report_bytes(results)
        first, second, size = first_and_second(raw, args.repeat if results < 50_000 else min(args.repeat, 3))
        small = results == args.results[0]
        label = f"{results // 3:,} cases x 3 modes" if small else f"{results:,} results"
        print(f"{label}: first {first * 1000:.0f} ms, second {second * 1000:.2f} ms, {size / 1000:.0f} KB")
        targets.check(f"_repr_html_ first call, {label}", first * 1000, limit * 1000, unit=" ms", digits=0)
        if small:
            targets.check(f"_repr_html_ second call, {label}", second * 1000, 10, unit=" ms", digits=2)
        targets.check(f"_repr_html_ output, {label}", size / 1000, 300, unit=" KB", digits=0)
    targets.report()


if __name__ == "__main__":
    main()
