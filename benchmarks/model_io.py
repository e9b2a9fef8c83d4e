"""Load / save / memory of a large report, side by side with plain json in one run.

Issue 1/5 targets: load <= 1.5x ``json.loads`` of the same bytes, save <= 1.5x
``json.dumps``, memory of the loaded report <= 2x the parsed dict.

    python benchmarks/model_io.py [--cases 20000] [--results 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc

from heta_nb.model import decode_report, encode_report
from heta_nb.testing import synthetic_report_dict


def best_of(repeat: int, func) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def retained_bytes(func) -> int:
    gc.collect()
    tracemalloc.start()
    value = func()
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del value
    return current


def time_saving(raw: bytes, repeat: int) -> tuple[float, float]:
    """Best-of timings of json.dumps of the parsed dict and encode_report of the report."""
    parsed = json.loads(raw)
    report = decode_report(raw, source="bench")
    assert encode_report(report) == raw, "save must reproduce the bytes"
    t_dumps = best_of(repeat, lambda: json.dumps(parsed, ensure_ascii=False, separators=(",", ":")))
    t_save = best_of(repeat, lambda: encode_report(report))
    return t_dumps, t_save


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000, help="case results (cases x modes)")
    parser.add_argument("--results", type=int, default=10, help="results per response")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    modes = ("full_text_search", "extractive_answer")
    data = synthetic_report_dict(args.cases // len(modes), modes=modes, results_per_case=args.results)
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    del data
    print(f"report: {args.cases:,} case results x {args.results} results, {len(raw) / 1e6:.1f} MB")

    t_json = best_of(args.repeat, lambda: json.loads(raw))
    t_load = best_of(args.repeat, lambda: decode_report(raw, source="bench"))
    t_dumps, t_save = time_saving(raw, args.repeat)
    m_json = retained_bytes(lambda: json.loads(raw))
    m_load = retained_bytes(lambda: decode_report(raw, source="bench"))

    rows = [
        ("load (decode_report vs json.loads)", t_load, t_json, 1.5),
        ("save (encode_report vs json.dumps)", t_save, t_dumps, 1.5),
    ]
    print(f"{'measure':38} {'heta_nb':>10} {'baseline':>10} {'ratio':>7} {'target':>7}")
    for name, ours, base, target in rows:
        print(f"{name:38} {ours * 1000:>8.0f}ms {base * 1000:>8.0f}ms {ours / base:>7.2f} {'<= ' + str(target):>7}")
    print(
        f"{'memory (loaded report vs parsed dict)':38} {m_load / 1e6:>8.0f}MB {m_json / 1e6:>8.0f}MB "
        f"{m_load / m_json:>7.2f} {'<= 2':>7}"
    )


if __name__ == "__main__":
    main()
