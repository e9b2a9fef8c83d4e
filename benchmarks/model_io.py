"""Load, save and memory of large reports, side by side with the standard library in one run.

Targets (issue 2/7): ``load_report`` <= 0.6x ``json.loads`` of the same bytes at 10k and
100k case results; memory kept after loading a 100k-result report <= 1.5x its file size.
Also shown: ``encode_report`` against ``json.dumps`` of the parsed dict (issue 1/5: <= 1.5x).

Reports: 3 modes x 10 results per response x 3 scores (``benchmarks/_data.py``). Times
are medians of interleaved runs; memory is what ``tracemalloc`` still counts after the load.

    python benchmarks/model_io.py [--sizes 10000 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc
from typing import Any

from _data import report_bytes
from _targets import Targets, interleaved

from heta_nb.model import encode_report, load_report


def kept_bytes(func: Any) -> int:
    """Bytes still allocated (tracemalloc) after ``func()`` returns, its result held."""
    gc.collect()
    tracemalloc.start()
    value = func()
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del value
    return current


def save_times(raw: bytes, repeat: int) -> dict[str, float]:
    """``json.dumps`` of the parsed dict against ``encode_report`` of the loaded report."""
    report = load_report(raw)
    parsed = json.loads(raw)
    assert encode_report(report) == raw, "saving must give the bytes back"
    return interleaved(
        repeat,
        {
            "json.dumps": lambda: json.dumps(parsed, ensure_ascii=False, separators=(",", ":")).encode(),
            "encode_report": lambda: encode_report(report),
        },
    )


def measure(size: int, repeat_setting: int, largest: int, targets: Targets) -> None:
    """Load, save and (at the largest size) memory for reports of ``size`` case results."""
    raw = report_bytes(size)
    repeat = repeat_setting if size <= 20_000 else max(3, repeat_setting // 2)
    mb = len(raw) / 1e6
    print(f"report: {size:,} case results x 10 results, {mb:,.0f} MB; median of {repeat} interleaved runs")
    times = interleaved(repeat, {"json.loads": lambda: json.loads(raw), "load_report": lambda: load_report(raw)})
    print(f"  json.loads  {times['json.loads']:8.2f} s")
    print(f"  load_report {times['load_report']:8.2f} s")
    targets.check(f"load_report / json.loads, {size:,} results", times["load_report"] / times["json.loads"], 0.6)
    saves = save_times(raw, max(1, repeat // 2))  # the parsed copies are gone before the memory measure
    print(f"  json.dumps    {saves['json.dumps']:8.2f} s")
    print(f"  encode_report {saves['encode_report']:8.2f} s")
    targets.check(f"encode_report / json.dumps, {size:,} results", saves["encode_report"] / saves["json.dumps"], 1.5)
    if size == largest:
        kept = kept_bytes(lambda: load_report(raw))
        print(f"  memory kept after load_report: {kept / 1e6:,.0f} MB for a {len(raw) / 1e6:,.0f} MB file")
        ratio = kept / len(raw)
        targets.check(f"memory kept after load_report / file size, {size:,} results", ratio, 1.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="case results")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    targets = Targets(__file__)
    for size in args.sizes:
        measure(size, args.repeat, max(args.sizes), targets)
    targets.report()


if __name__ == "__main__":
    main()
