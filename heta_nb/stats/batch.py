"""Paired tests in batches: one set of resamples for every system x metric on one set of cases.

:func:`paired_tests` runs the test of :func:`heta_nb.stats.paired.paired_test` (a sign-flip
permutation p-value, a bootstrap expanded-percentile CI of the mean difference, wins /
ties / losses) for many pairs of score arrays at once, in matrix form: the bootstrap
resamples and the sign patterns are drawn once, for the case set they share, and
applied to every pair by one matrix product per block of resamples.

Pairs on a subset of the cases (a metric's skipped cases left out) take a mask: masked
cases contribute nothing. For the permutation test that is exactly the test on the
subset (a case that is left out flips nothing).

The bootstrap of a set of at least ``_POISSON_MIN`` cases is a Poisson bootstrap: each
resample gives every case an independent Poisson(1) weight ``w`` (drawn as 16-bit words
through a table of Poisson(1) quantiles, so each probability is within 2**-16 of the
exact one), and a pair's resampled mean is ``sum(w * d * keep) / sum(w * keep)``: the
weights restricted to a pair's own cases are a Poisson bootstrap of those cases alone,
so a masked pair is resampled as exactly as a full one. The products run in float32
(weights are small integers, exact; differences are centred on their mean first).
Smaller sets keep the classic bootstrap (multinomial resample counts of the cases): a
resample of the whole set holds a random number ``K`` of a subset's ``n`` cases, and the
mean of those is a bootstrap mean of the subset with ``K`` for ``n`` (wider by a relative
``(1 - n / N) / (2 n)`` or so); a subset under half the cases, or under 30 of them, takes
its own resamples. Both schemes agree within Monte Carlo error (tests compare them with
each other and with ``scipy.stats.bootstrap``).

The draws depend only on the seed, the number of resamples and the number of cases, and
each pair's numbers only on its own arrays and mask, bit for bit, whatever else is tested
with it: every product runs in blocks of a fixed number of columns, so a column's
rounding never depends on its neighbours (``compare``, ``check`` and the leaderboard
batch different pairs and must give each the same numbers). Blocks of resamples have their own streams (spawned from
the seed), and BLAS runs one thread per task, so the result does not depend on the
number of threads either. Same seed, same numbers.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from heta_nb.stats.paired import PairedTest, Resampled, summarize_pairs

__all__ = ["paired_tests"]

_TIE_RTOL = 1e-9
"""``|T*| >= |T_obs| - _TIE_RTOL * sum(|d|)`` counts as at least as extreme (as in ``paired_test``)."""
_BLOCK_ELEMENTS = 1 << 21
"""Resample x case elements per block (the unit of work handed to a thread)."""
_WIDTH = 8
"""Columns per matrix product (see :func:`_product`)."""
_SHARED_MIN = 30
"""A masked pair with fewer cases than this (or under half the set) takes its own resamples."""
_POISSON_MIN = 1000
"""Sets of at least this many cases take the Poisson bootstrap (one draw serves every mask)."""
_POISSON_WORDS = np.searchsorted(
    np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(12)]), (np.arange(1 << 16) + 0.5) / (1 << 16)
).astype(np.float32)
"""16-bit word -> its Poisson(1) quantile (a weight 0, 1, 2...)."""
_SIGNS = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1) * 2.0 - 1.0
"""Byte -> the 8 signs it codes (bit j set: +1 for value 8b + j)."""


def paired_tests(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    mask: npt.ArrayLike | None = None,
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    tie_tolerance: float = 0.0,
    workers: int | None = None,
) -> list[PairedTest]:
    """Paired tests of ``b[p]`` against ``a[p]`` for every row ``p``, with shared resamples.

    Args:
        a: Baseline scores, shape ``(pairs, cases)``.
        b: Candidate scores, the same shape (row ``p`` of ``b`` against row ``p`` of ``a``).
        mask: Which cases each pair compares (same shape, bool); default: all. Compared
            cases must have finite scores on both sides.
        resamples: Bootstrap resamples, and Monte Carlo sign patterns where the exact
            enumeration (``2 ** nonzero differences <= resamples``) is not possible.
        confidence: Confidence level of the intervals, in (0, 1).
        seed: Seed of the random streams; ``None`` draws fresh entropy (in ``PairedTest.seed``).
        tie_tolerance: ``|b - a| <= tie_tolerance`` counts as a tie in wins/ties/losses.
        workers: Threads (default: CPU count, at most 4); results do not depend on it.

    Returns:
        One :class:`~heta_nb.stats.paired.PairedTest` per row, in order.

    Raises:
        ValueError: Mismatched shapes, missing or infinite compared scores, bad parameters.
    """
    x, y = np.atleast_2d(np.asarray(a, dtype=np.float64)), np.atleast_2d(np.asarray(b, dtype=np.float64))
    keep = np.ones(x.shape, dtype=bool) if mask is None else np.atleast_2d(np.asarray(mask, dtype=bool))
    if x.ndim != 2 or x.shape != y.shape or keep.shape != x.shape:
        raise ValueError(f"a, b and mask must be 2-D arrays of one shape, got {x.shape}, {y.shape} and {keep.shape}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not tie_tolerance >= 0.0:
        raise ValueError(f"tie_tolerance must be >= 0, got {tie_tolerance!r}")
    if not (np.isfinite(x[keep]).all() and np.isfinite(y[keep]).all()):
        raise ValueError("compared scores must be finite numbers (leave the others out with mask)")
    seq = np.random.SeedSequence(seed)
    settings = _Settings(int(resamples), float(confidence), float(tie_tolerance), int(seq.entropy), workers)  # type: ignore[arg-type]
    with np.errstate(over="ignore", invalid="ignore"):  # differences beyond the float range: inf, as they are
        d = np.where(keep, y - x, 0.0)
        return _run_set(x, y, d, keep, seq, settings)


class _Settings:
    __slots__ = ("confidence", "resamples", "seed", "tie_tolerance", "workers")

    def __init__(self, resamples: int, confidence: float, tie_tolerance: float, seed: int, workers: int | None) -> None:
        self.resamples, self.confidence, self.tie_tolerance = resamples, confidence, tie_tolerance
        self.seed, self.workers = seed, workers


def _run_set(
    x: np.ndarray, y: np.ndarray, d: np.ndarray, keep: np.ndarray, seq: np.random.SeedSequence, settings: _Settings
) -> list[PairedTest]:
    """The tests of every row on one set of cases (its columns), resampled together."""
    pairs, cases = d.shape
    counts = keep.sum(axis=1)
    results: list[PairedTest | None] = [None] * pairs
    if cases >= _POISSON_MIN:  # every mask is exact: only pairs too small for the Poisson scheme go alone
        own = [p for p in range(pairs) if 0 < counts[p] < _POISSON_MIN]
    else:
        own = [p for p in range(pairs) if 0 < counts[p] < cases and (counts[p] < _SHARED_MIN or 2 * counts[p] < cases)]
    for group in _same_masks(keep, own):  # small subsets: their own set of cases and resamples
        columns = np.flatnonzero(keep[group[0]])
        sub = np.ix_(np.asarray(group, dtype=np.intp), columns)
        for p, test in zip(
            group, _run_set(x[sub], y[sub], d[sub], keep[sub], _subset_seq(seq, columns.size), settings)
        ):
            results[p] = test
    shared = [p for p in range(pairs) if results[p] is None]
    sums = _resampled(d, keep, shared, counts, seq, settings)
    for p in shared:
        results[p] = _test(x[p][keep[p]], y[p][keep[p]], d[p][keep[p]], sums.get(p), settings)
    return [r for r in results if r is not None]


def _subset_seq(seq: np.random.SeedSequence, size: int) -> np.random.SeedSequence:
    """The stream of a subset of ``size`` cases: a function of the seed and the size only."""
    return np.random.SeedSequence([int(seq.entropy), size])  # type: ignore[arg-type]  # one integer seed


def _same_masks(keep: np.ndarray, rows: Sequence[int]) -> list[list[int]]:
    groups: dict[bytes, list[int]] = {}
    for p in rows:
        groups.setdefault(np.packbits(keep[p]).tobytes(), []).append(p)
    return list(groups.values())


def _resampled(
    d: np.ndarray,
    keep: np.ndarray,
    rows: list[int],
    counts: np.ndarray,
    seq: np.random.SeedSequence,
    settings: _Settings,
) -> dict[int, Resampled]:
    """Per row: its bootstrap means and permutation count, from the shared resamples."""
    resamples = settings.resamples
    cases = d.shape[1]
    out: dict[int, Resampled] = {}
    moving = [p for p in rows if np.any(d[p] != 0.0)]
    if not moving:
        return out
    thresholds = {}
    exact: dict[int, int] = {}
    for p in moving:
        nonzero = d[p][d[p] != 0.0]
        thresholds[p] = abs(float(np.sum(nonzero))) - _TIE_RTOL * float(np.sum(np.abs(nonzero)))
        if nonzero.size < 63 and (1 << nonzero.size) <= resamples:
            exact[p] = _exact_count(nonzero, thresholds[p])
    random = [p for p in moving if p not in exact]
    poisson = cases >= _POISSON_MIN
    # columns of the product: every moving pair's d (masked), then each distinct mask
    # (the Poisson scheme divides every pair by its own weight total, the classic one
    # only the masked pairs)
    masks = _same_masks(keep, [p for p in moving if poisson or counts[p] < cases])
    centre = np.array([float(np.mean(d[p][keep[p]])) for p in moving]) if poisson else np.zeros(len(moving))
    matrix = np.zeros((cases, len(moving) + len(masks)), dtype=np.float32 if poisson else np.float64)
    matrix[:, : len(moving)] = np.where(keep[moving], d[moving] - centre[:, None], 0.0).T
    for k, group in enumerate(masks):
        matrix[:, len(moving) + k] = keep[group[0]]
    mask_column = {p: len(moving) + k for k, group in enumerate(masks) for p in group}
    perm_seq, boot_seq = seq.spawn(2)
    rows_per_block = max(8, min(1024, _BLOCK_ELEMENTS // max(cases, 1)))
    sizes = [min(rows_per_block, resamples - start) for start in range(0, resamples, rows_per_block)]
    block, boot_sizes = _bootstrap_block, sizes
    if poisson:  # larger blocks: one product of every column per block
        block, step = _poisson_block, max(8, min(1024, 4 * _BLOCK_ELEMENTS // cases))
        boot_sizes = [min(step, resamples - start) for start in range(0, resamples, step)]
    boot_tasks = [
        partial(block, matrix, size, np.random.default_rng(child))
        for child, size in zip(boot_seq.spawn(len(boot_sizes)), boot_sizes)
    ]
    perm_tasks: list[Callable[[], np.ndarray]] = []
    if random:
        signs = np.zeros((cases + (-cases) % 8, len(random)))
        signs[:cases, : len(random)] = d[random].T
        perm_tasks = [
            partial(_sign_block, signs, size, np.random.default_rng(child), whole=poisson)
            for child, size in zip(perm_seq.spawn(len(sizes)), sizes)
        ]
    done = _run([*boot_tasks, *perm_tasks], settings.workers, resamples * cases * (1 + bool(random)))
    boot = np.concatenate(done[: len(boot_tasks)])
    perm = np.concatenate(done[len(boot_tasks) :]) if random else None
    for column, p in enumerate(moving):
        sums = boot[:, column].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample without any of the cases: NaN
            if p in mask_column:
                means = centre[column] + sums / boot[:, mask_column[p]].astype(np.float64)
            else:
                means = sums / counts[p]
        count = exact.get(p)
        if perm is not None and p in random:
            statistic = np.abs(perm[:, random.index(p)])
            count = int(np.count_nonzero(statistic >= thresholds[p]))
        assert count is not None
        if poisson:
            how = f"Poisson bootstrap expanded-percentile CI, {resamples} resamples"
        else:
            how = f"bootstrap expanded-percentile CI, {resamples} resamples"
            how += ", resampled with the other cases of the comparison" if p in mask_column else ""
        out[p] = Resampled(means, count, p in exact, how)
    return out


def _exact_count(nonzero: np.ndarray, threshold: float) -> int:
    """Sign patterns of ``nonzero`` (all ``2 ** k``) with ``|T*| >= threshold``."""
    k = nonzero.size
    patterns = ((np.arange(1 << k)[:, None] >> np.arange(k)[None, :]) & 1) * 2.0 - 1.0
    return int(np.count_nonzero(np.abs(patterns @ nonzero) >= threshold))


def _uniform(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """``size`` exactly uniform integers in ``[0, n)`` (Lemire's multiply and reject)."""
    if n > 1 << 16:
        from heta_nb.stats.paired import _uniform_indices

        return _uniform_indices(rng, size, n)
    limit = (1 << 16) % n  # low halves under this would make some values likelier
    words = rng.integers(0, 1 << 16, size=size, dtype=np.uint16).astype(np.uint32)
    words *= np.uint32(n)
    if limit:
        bad = np.flatnonzero((words & 0xFFFF) < limit)
        while bad.size:
            fresh = rng.integers(0, 1 << 16, size=bad.size, dtype=np.uint16).astype(np.uint32) * np.uint32(n)
            words[bad] = fresh
            bad = bad[(fresh & 0xFFFF) < limit]
    words >>= np.uint32(16)
    return words.astype(np.intp)


def _bootstrap_block(matrix: np.ndarray, rows: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` bootstrap resamples of the cases, as resample counts times ``matrix``."""
    cases = matrix.shape[0]
    chunk = max(1, min(rows, (1 << 17) // max(cases, 1)))
    picks = _uniform(rng, rows * cases, cases).reshape(rows, cases)
    counts = np.empty((rows, cases))
    offsets = (np.arange(chunk, dtype=np.intp) * cases)[:, None]
    for start in range(0, rows, chunk):
        r = min(chunk, rows - start)
        counts[start : start + r] = np.bincount(
            (picks[start : start + r] + offsets[:r]).ravel(), minlength=r * cases
        ).reshape(r, cases)
    return _product(counts, matrix)


def _poisson_block(matrix: np.ndarray, rows: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` Poisson bootstrap resamples: Poisson(1) weights of the cases times ``matrix`` (float32),
    in :func:`_product`'s fixed-width blocks, so a pair's column does not depend on the others."""
    words = rng.integers(0, 1 << 16, size=(rows, matrix.shape[0]), dtype=np.uint16)
    return _product(_POISSON_WORDS[words], matrix)


def _sign_block(matrix: np.ndarray, rows: int, rng: np.random.Generator, *, whole: bool = False) -> np.ndarray:
    """``rows`` random sign patterns of the cases, times ``matrix`` (the differences); ``whole``:
    one product of every column (else :func:`_product`'s fixed-width blocks)."""
    width = matrix.shape[0] // 8
    words = rng.integers(0, 1 << 64, size=(rows * width + 7) // 8, dtype=np.uint64)
    patterns = np.take(_SIGNS, words.view(np.uint8)[: rows * width], axis=0).reshape(rows, width * 8)
    del whole  # every product in fixed-width blocks: a pair's count does not depend on its neighbours
    return _product(patterns, matrix)


def _product(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left @ right``, ``_WIDTH`` columns of ``right`` at a time (zero-padded).

    A BLAS product's rounding can depend on how many columns it has (one column even
    takes another routine); with the same width every time, each column's result depends
    on that column alone, so a pair's test does not change with what is tested beside it.
    """
    columns = right.shape[1]
    out = np.empty((left.shape[0], columns), dtype=right.dtype)
    for start in range(0, columns, _WIDTH):
        block = np.zeros((right.shape[0], _WIDTH), dtype=right.dtype)
        stop = min(columns, start + _WIDTH)
        block[:, : stop - start] = right[:, start:stop]
        out[:, start:stop] = (left @ block)[:, : stop - start]
    return out


def _run(tasks: Sequence[Callable[[], Any]], workers: int | None, work: int) -> list[Any]:
    """Run ``tasks`` (results in order) on a small thread pool when worth it."""
    count = min(4, os.cpu_count() or 1) if workers is None else max(1, int(workers))
    count = min(count, len(tasks))
    with _blas_threads(1):  # the tasks are the parallel work: BLAS threads would only compete with them
        if count <= 1 or work < 1 << 21:
            return [task() for task in tasks]
        with ThreadPoolExecutor(max_workers=count) as pool:
            return list(pool.map(lambda task: task(), tasks))


def _blas_threads(limit: int) -> contextlib.AbstractContextManager[Any]:
    """BLAS limited to ``limit`` threads while the tasks run (when ``threadpoolctl`` is installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional helper: without it, BLAS keeps its own threads
        return contextlib.nullcontext()
    limiter: contextlib.AbstractContextManager[Any] = threadpool_limits(limits=limit, user_api="blas")
    return limiter


def _test(x: np.ndarray, y: np.ndarray, d: np.ndarray, resampled: Resampled | None, settings: _Settings) -> PairedTest:
    """One pair's :class:`PairedTest` from its compared cases and its share of the resamples."""
    return summarize_pairs(
        x,
        y,
        d,
        resampled,
        confidence=settings.confidence,
        resamples=settings.resamples,
        seed=settings.seed,
        tie_tolerance=settings.tie_tolerance,
    )
