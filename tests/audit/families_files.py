"""Hostile files (issue 35, items 2, 6, 7, 8): every writer against targets that are not
regular files, every reader against FIFOs, oversized benchmark files, and the temporaries
of killed writes. Loaded by ``attack_rerun.py`` (``family_attacks``); each attack runs in
seconds, each call bounded by ``hostile_files.TIMEOUT_S``."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

import hostile_files as h  # noqa: E402

import heta_nb  # noqa: E402
from heta_nb._util.fs import NotARegularFileError, default_max_bytes  # noqa: E402
from heta_nb.benchmark.formats import parsing  # noqa: E402
from heta_nb.errors import BenchmarkFormatError, ReportFormatError  # noqa: E402

Attack = tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]

QUICK_WRITERS = ("to_html", "to_notebook", "to_parquet", "heta-nb html -o", "heta-nb check -o")


@contextmanager
def _sandbox() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="heta_nb-families-files-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _writers(quick: bool) -> list[h.Writer]:
    return [w for w in h.writers() if not quick or w.name in QUICK_WRITERS]


def _call(call: Callable[[], Any], fifos: tuple[Path, ...] = ()) -> Any:
    try:
        return h.run_bounded(call, fifos=fifos)
    except h.Blocked as exc:
        return exc


def attack_writers(quick: bool) -> dict[str, Any]:
    """Every writer x every target kind: refused (node intact), or written through a link to a file."""
    problems: list[str] = []
    refused = written_through = skipped = 0
    kinds = [k for k in h.KINDS if h.kind_unavailable(k) is None]
    skipped = len(h.KINDS) - len(kinds)
    writers = _writers(quick)
    with _sandbox() as root:
        for index, writer in enumerate(writers):
            for kind in (*kinds, h.LINK_TO_FILE):
                folder = root / f"{index}-{kind.replace(' ', '-')}"
                folder.mkdir()
                target = h.make_target(kind, folder, f"out{writer.suffix}")
                fifos = (target.node,) if "FIFO" in kind else ()
                outcome = _call(lambda w=writer, t=target: w.write(t.path), fifos)
                if kind == h.LINK_TO_FILE:
                    if isinstance(outcome, BaseException):
                        problems.append(f"{writer.name} x {kind}: {type(outcome).__name__}: {outcome}")
                    else:
                        written_through += 1
                else:
                    problem = h.refusal_problem(writer, target, outcome)
                    if problem:
                        problems.append(problem)
                    else:
                        refused += 1
                for change in (target.intact(), *(h.temporaries_in(folder) and [f"temporaries left in {folder}"])):
                    if change:
                        problems.append(f"{writer.name} x {kind}: {change}")
    return {
        "writers": len(writers),
        "kinds": len(kinds),
        "refused": refused,
        "written_through": written_through,
        "skipped_kinds": skipped,
        "problems": problems,
    }


def _fifo_readers(root: Path, quick: bool) -> Iterator[tuple[str, Path, Callable[[], Any], tuple[type, ...]]]:
    """``(name, fifo, call, expected errors)`` for every reader, each with its own FIFO."""
    from runner_support import evaluate_toy, exact_kb

    from heta_nb.runner.checkpoint import CHECKPOINT_FILE
    from heta_nb.store import report_prefix

    for resume in (False, True):
        store = root / f"store-{resume}"
        fifo = store / report_prefix("toy kb", "r") / CHECKPOINT_FILE
        fifo.parent.mkdir(parents=True)
        os.mkfifo(fifo)
        yield (
            f"checkpoint.jsonl (resume={resume})",
            fifo,
            lambda store=store, resume=resume: evaluate_toy(kb=exact_kb, store=store, report_id="r", resume=resume),
            (NotARegularFileError,),
        )
    for fmt, files in h.BENCHMARK_FILES.items():
        for name in files[:1] if quick else files:
            for detect in (True, False):
                folder = h.make_benchmark(fmt, root / f"bench-{fmt}-{name.replace('/', '-')}-{detect}")
                (folder / name).unlink()
                os.mkfifo(folder / name)
                yield (
                    f"{name} ({'detected' if detect else 'format='})",
                    folder / name,
                    lambda folder=folder, fmt=fmt, detect=detect: h.load(folder, None if detect else fmt),
                    (BenchmarkFormatError,),
                )
    report = root / "report.json"
    os.mkfifo(report)
    yield "report.json (load_report)", report, lambda: heta_nb.load_report(report), (ReportFormatError,)
    yield (
        "report.json (heta-nb html)",
        report,
        lambda: h.run_cli("html", str(report), "-o", str(root / "r.html")),
        (h.CliFailed,),
    )


def attack_readers(quick: bool) -> dict[str, Any]:
    """Every reader given a FIFO: a one-line error naming it, at once (never a wait)."""
    problems: list[str] = []
    fast = 0
    with _sandbox() as root:
        for name, fifo, call, expected in _fifo_readers(root, quick):
            outcome = _call(call, (fifo,))
            text = outcome.stderr.strip() if isinstance(outcome, h.CliFailed) else str(outcome)
            if not isinstance(outcome, expected):
                problems.append(f"{name}: {type(outcome).__name__}: {text[:200]}")
            elif "\n" in text or fifo.name not in text or "FIFO" not in text:
                problems.append(f"{name}: unclear message {text[:200]!r}")
            else:
                fast += 1
            h.free_fifo(fifo)
    return {"readers": fast + len(problems), "failed_fast": fast, "problems": problems}


def attack_oversized(quick: bool) -> dict[str, Any]:
    """Every benchmark file sparse at 3x the limit, and every line-read file with an over-long line."""
    problems: list[str] = []
    sparse = long_lines = 0
    limit = default_max_bytes()
    saved = parsing.MAX_LINE_BYTES
    files = (
        [files[0] for files in h.BENCHMARK_FILES.values()]
        if quick
        else [n for f in h.BENCHMARK_FILES.values() for n in f]
    )
    with _sandbox() as root:
        for name in files:
            fmt = h.format_of(name)
            folder = h.make_benchmark(fmt, root / f"sparse-{name.replace('/', '-')}")
            with open(folder / name, "r+b") as handle:
                handle.truncate(3 * limit)
            outcome = _call(lambda folder=folder, fmt=fmt: h.load(folder, fmt))
            if (
                isinstance(outcome, BenchmarkFormatError)
                and Path(name).name in str(outcome)
                and "limit" in str(outcome)
            ):
                sparse += 1
            else:
                problems.append(f"sparse {name}: {type(outcome).__name__}: {str(outcome)[:200]}")
        parsing.MAX_LINE_BYTES = 1 << 20  # type: ignore[misc]  # the limit, made small to keep the attack fast
        try:
            for name in h.LINE_FILES[:2] if quick else h.LINE_FILES:
                fmt = h.format_of(name)
                folder = h.make_benchmark(fmt, root / f"line-{name.replace('/', '-')}")
                path = folder / name
                first = path.read_bytes().split(b"\n", 1)[0] + b"\n"
                path.write_bytes(first)
                with open(path, "r+b") as handle:
                    handle.truncate(len(first) + 8 * (1 << 20))
                outcome = _call(lambda folder=folder, fmt=fmt: h.load(folder, fmt))
                if isinstance(outcome, BenchmarkFormatError) and f"{name}:2:" in str(outcome):
                    long_lines += 1
                else:
                    problems.append(f"long line in {name}: {type(outcome).__name__}: {str(outcome)[:200]}")
        finally:
            parsing.MAX_LINE_BYTES = saved  # type: ignore[misc]
    return {"sparse": sparse, "long_lines": long_lines, "limit": limit, "problems": problems}


def attack_temporaries(quick: bool) -> dict[str, Any]:
    """Every writer after writes of its files were killed: the stale temporaries gone, a young one kept."""
    problems: list[str] = []
    removed = kept = 0
    writers = _writers(quick)
    with _sandbox() as root:
        for index, writer in enumerate(writers):
            folder = root / str(index)
            folder.mkdir()
            path = folder / f"out{writer.suffix}"
            planted = [h.plant_temporaries(file) for file in (path, *writer.companions(path))]
            outcome = _call(lambda writer=writer, path=path: writer.write(path))
            if isinstance(outcome, BaseException):
                problems.append(f"{writer.name}: {type(outcome).__name__}: {str(outcome)[:200]}")
                continue
            for stale, young in planted:
                if stale.exists():
                    problems.append(f"{writer.name}: {stale.name} left behind")
                else:
                    removed += 1
                if young.exists():
                    kept += 1
                else:
                    problems.append(f"{writer.name}: removed {young.name}, which a live writer may hold")
    return {"writers": len(writers), "removed": removed, "young_kept": kept, "problems": problems}


def attacks(quick: bool) -> list[Attack]:
    return [
        (
            "writers x non-regular targets",
            lambda: attack_writers(quick),
            lambda r: (
                f"{r['writers']} writers x {r['kinds']} kinds: {r['refused']} refused, nodes intact;"
                f" {r['written_through']} written through a link"
                + (f" ({r['skipped_kinds']} kind(s) need root)" if r["skipped_kinds"] else "")
            ),
        ),
        (
            "readers x FIFOs",
            lambda: attack_readers(quick),
            lambda r: f"{r['readers']} readers: {r['failed_fast']} failed fast on one line",
        ),
        (
            "oversized benchmark files",
            lambda: attack_oversized(quick),
            lambda r: (
                f"{r['sparse']} sparse files of 3 x {r['limit']:,} bytes, {r['long_lines']} over-long lines: refused"
            ),
        ),
        (
            "killed writes x temporaries",
            lambda: attack_temporaries(quick),
            lambda r: f"{r['writers']} writers: {r['removed']} stale temporaries removed, {r['young_kept']} young kept",
        ),
    ]
