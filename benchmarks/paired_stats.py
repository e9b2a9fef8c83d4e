"""Time ``heta_nb.stats.paired.paired_test`` against SciPy's resampling tests.

Usage::

    python benchmarks/paired_stats.py [--cases 10000] [--resamples 10000] [--repeat 5]

Reports the best of ``--repeat`` runs (ms) for the sign-flip permutation test, the
bootstrap percentile CI and both together (what ``paired_test`` does), with our default
thread count and with one thread, next to ``scipy.stats.permutation_test`` (one-sample,
``permutation_type="samples"``: sign flips) and ``scipy.stats.bootstrap`` (percentile)
on the same differences. SciPy runs with ``batch=1000`` (its fastest setting here; the
default computes all resamples in one ~800 MB array and is slower). Needs SciPy.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from heta_nb.stats import paired as paired_stats
from heta_nb.stats.paired import paired_test


def best_ms(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000.0


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, resamples, repeat = args.cases, args.resamples, args.repeat

    rng = np.random.default_rng(2024)
    a = rng.random(n)
    b = np.clip(a + rng.normal(0.01, 0.3, n), 0.0, 1.0)
    d = b - a
    nonzero = d[d != 0.0]

    def ours_perm(workers: int | None) -> int:
        seq = np.random.SeedSequence(0)
        tasks, _ = paired_stats._permutation_tasks(nonzero, resamples, seq, paired_stats._Scratch())
        return sum(paired_stats._run(tasks, workers, resamples * n))

    def ours_boot(workers: int | None) -> list[np.ndarray]:
        seq = np.random.SeedSequence(0)
        tasks = paired_stats._bootstrap_tasks(d, resamples, seq, paired_stats._Scratch())
        return paired_stats._run(tasks, workers, resamples * n)

    def scipy_perm() -> float:
        res = stats.permutation_test(
            (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", vectorized=True,
            n_resamples=resamples, batch=1000, rng=0,
        )  # fmt: skip
        return float(res.pvalue)

    def scipy_boot() -> tuple[float, float]:
        ci = stats.bootstrap(
            (d,), np.mean, method="percentile", n_resamples=resamples, batch=1000, rng=0
        ).confidence_interval
        return float(ci.low), float(ci.high)

    ours = paired_test(a, b, resamples=resamples)
    print(f"{n} cases x {resamples} resamples, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"ours : p = {ours.p_value:.6f}, CI = [{ours.ci_low:.6f}, {ours.ci_high:.6f}]  ({ours.method})")
    p_ref, (lo_ref, hi_ref) = scipy_perm(), scipy_boot()
    print(f"scipy: p = {p_ref:.6f}, CI = [{lo_ref:.6f}, {hi_ref:.6f}]")
    print()

    rows = [
        (
            "sign-flip permutation p",
            best_ms(lambda: ours_perm(None), repeat),
            best_ms(lambda: ours_perm(1), repeat),
            best_ms(scipy_perm, repeat),
        ),
        (
            "bootstrap percentile CI",
            best_ms(lambda: ours_boot(None), repeat),
            best_ms(lambda: ours_boot(1), repeat),
            best_ms(scipy_boot, repeat),
        ),
    ]
    both = best_ms(lambda: paired_test(a, b, resamples=resamples), repeat)
    both_1 = best_ms(lambda: paired_test(a, b, resamples=resamples, workers=1), repeat)
    rows.append(("paired_test (both)", both, both_1, rows[0][3] + rows[1][3]))

    header = f"{'':26s} {'ours ms':>9s} {'ours 1-thr':>10s} {'scipy ms':>9s} {'scipy/ours':>10s}"
    print(header)
    print("-" * len(header))
    for name, mine, mine_1, theirs in rows:
        print(f"{name:26s} {mine:9.1f} {mine_1:10.1f} {theirs:9.1f} {theirs / mine:9.1f}x")
    print("(best of", repeat, "runs; scipy 'both' = sum of its two best times)")


if __name__ == "__main__":
    main()
