"""Hostile files, as a class: every writer against every target that is not a regular file,
every reader against FIFOs, oversized benchmark files, and the temporaries of killed writes.

Every file heta_nb opens goes through ``heta_nb._util.fs.open_regular`` (a regular file, or
refused without blocking) and every file it writes through
``heta_nb._util.atomic.write_atomically`` (a regular target only; its stale temporaries
removed first). Each call here runs in a thread bounded by ``TIMEOUT_S``: a FIFO must be
refused, never waited on.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from hostile_files import (
    BENCHMARK_FILES,
    KINDS,
    LINE_FILES,
    LINK_TO_FILE,
    MATERIAL,
    NORMAL,
    Blocked,
    CliFailed,
    Writer,
    format_of,
    free_fifo,
    kind_unavailable,
    load,
    make_benchmark,
    make_target,
    plant_temporaries,
    refusal_problem,
    replaced_by_fifo,
    run_bounded,
    run_cli,
    temporaries_in,
    writers,
)

import heta_nb
from heta_nb._util import atomic
from heta_nb._util.fs import (
    NotARegularFileError,
    default_max_bytes,
    open_regular,
    read_regular_file,
)
from heta_nb.benchmark.formats import parsing
from heta_nb.errors import BenchmarkFormatError, ReportFormatError
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.store import report_prefix

pytestmark = [
    pytest.mark.hostile,
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX only"),
]

try:
    import pyarrow  # noqa: F401
except ImportError:  # (the [parquet] extra: tests/min-versions.sh runs without it)
    NO_PYARROW = "to_parquet needs pyarrow (the [parquet] extra)"
else:
    NO_PYARROW = ""
WRITERS = [
    pytest.param(w, marks=pytest.mark.skipif(bool(NO_PYARROW), reason=NO_PYARROW), id=w.name)
    if w.name == "to_parquet"
    else w
    for w in writers()
]


def _writer_ids(writer: Writer) -> str:
    return writer.name


# -- writers x targets that are not regular files --------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", WRITERS, ids=_writer_ids)
def test_every_writer_refuses_a_target_that_is_not_a_regular_file(tmp_path: Path, writer: Writer, kind: str) -> None:
    why = kind_unavailable(kind)
    if why:
        pytest.skip(why)
    target = make_target(kind, tmp_path, f"out{writer.suffix}")
    outcome = run_bounded(lambda: writer.write(target.path), fifos=(target.node,) if "FIFO" in kind else ())
    assert refusal_problem(writer, target, outcome) is None, refusal_problem(writer, target, outcome)
    assert target.intact() is None, target.intact()
    assert temporaries_in(tmp_path) == []
    assert not any(p.exists() for p in writer.companions(target.path))  # refused before anything was written


@pytest.mark.parametrize("writer", WRITERS, ids=_writer_ids)
def test_every_writer_writes_through_a_link_to_a_regular_file(tmp_path: Path, writer: Writer) -> None:
    target = make_target(LINK_TO_FILE, tmp_path, f"out{writer.suffix}")
    outcome = run_bounded(lambda: writer.write(target.path))
    assert not isinstance(outcome, BaseException), outcome
    assert target.intact() is None, target.intact()  # still a link, to a regular file
    assert target.node.read_bytes() not in (b"", b"old contents")
    assert temporaries_in(tmp_path) == []


def test_a_device_swapped_in_before_the_rename_is_not_replaced(tmp_path: Path) -> None:
    """The writer checks the target again just before it renames its temporary file over it."""
    target = tmp_path / "out.html"
    os.mkfifo(target)
    temporary = tmp_path / ".out.html.0badc0de.tmp"
    temporary.write_bytes(b"page")
    with pytest.raises(NotARegularFileError, match="FIFO"):
        atomic._publish(temporary, target, exclusive=False)
    assert stat.S_ISFIFO(os.lstat(target).st_mode)


def test_html_to_standard_output_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    from heta_nb.cli import main

    assert main(["html", str(NORMAL), "-o", "-"]) == 0
    assert capsys.readouterr().out.lstrip().lower().startswith("<!doctype html")


# -- killed writes x temporaries ------------------------------------------------------------------


@pytest.mark.parametrize("writer", WRITERS, ids=_writer_ids)
def test_every_writer_removes_the_temporaries_of_killed_writes(tmp_path: Path, writer: Writer) -> None:
    path = tmp_path / f"out{writer.suffix}"
    planted = [plant_temporaries(file) for file in (path, *writer.companions(path))]
    outcome = run_bounded(lambda: writer.write(path))
    assert not isinstance(outcome, BaseException), outcome
    for stale, young in planted:
        assert not stale.exists(), f"{writer.name}: {stale.name} left behind"
        assert young.exists(), f"{writer.name}: removed {young.name}, which a live writer may hold"
    assert path.is_file() and path.stat().st_size > 0


# -- readers x FIFOs ------------------------------------------------------------------------------


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_a_fifo_at_the_checkpoint_fails_fast(tmp_path: Path, resume: bool) -> None:
    from runner_support import evaluate_toy, exact_kb

    fifo = tmp_path / report_prefix("toy kb", "r") / CHECKPOINT_FILE
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    outcome = run_bounded(
        lambda: evaluate_toy(kb=exact_kb, store=tmp_path, report_id="r", resume=resume), fifos=(fifo,)
    )
    assert isinstance(outcome, NotARegularFileError), outcome
    assert "\n" not in str(outcome) and CHECKPOINT_FILE in str(outcome) and "FIFO" in str(outcome)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


_FILES = [name for files in BENCHMARK_FILES.values() for name in files]


@pytest.mark.parametrize("detect", [True, False], ids=["detected", "format="])
@pytest.mark.parametrize("name", _FILES)
def test_a_fifo_at_any_benchmark_file_fails_fast(tmp_path: Path, name: str, detect: bool) -> None:
    fmt = format_of(name)
    folder = make_benchmark(fmt, tmp_path / "bench")
    with replaced_by_fifo(folder / name) as fifo:
        outcome = run_bounded(lambda: load(folder, None if detect else fmt), fifos=(fifo,))
    assert isinstance(outcome, BenchmarkFormatError), outcome
    text = str(outcome)
    assert "\n" not in text and Path(name).name in text and "FIFO" in text, text


@pytest.mark.parametrize(
    "reader",
    [
        "load_report",
        pytest.param("read_parquet", marks=pytest.mark.skipif(bool(NO_PYARROW), reason=NO_PYARROW)),
        "heta-nb html",
        "heta-nb show",
    ],
)
def test_a_fifo_given_as_a_report_fails_fast(tmp_path: Path, reader: str) -> None:
    fifo = tmp_path / ("r.parquet" if reader == "read_parquet" else "r.json")
    os.mkfifo(fifo)
    calls = {
        "load_report": lambda: heta_nb.load_report(fifo),
        "read_parquet": lambda: heta_nb.read_parquet(fifo),
        "heta-nb html": lambda: run_cli("html", str(fifo), "-o", str(tmp_path / "r.html")),
        "heta-nb show": lambda: run_cli("show", str(fifo)),
    }
    outcome = run_bounded(calls[reader], fifos=(fifo,))
    assert isinstance(outcome, (NotARegularFileError, ReportFormatError, CliFailed)), outcome
    text = outcome.stderr.strip() if isinstance(outcome, CliFailed) else str(outcome)
    assert "\n" not in text and fifo.name in text and "FIFO" in text, text


@pytest.mark.parametrize("flags", ["read", "append", "create"])
def test_open_regular_refuses_a_fifo_without_waiting(tmp_path: Path, flags: str) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    mode = {"read": os.O_RDONLY, "append": os.O_WRONLY | os.O_APPEND, "create": os.O_RDWR | os.O_CREAT}[flags]
    outcome = run_bounded(lambda: open_regular(fifo, mode), fifos=(fifo,))
    assert isinstance(outcome, NotARegularFileError) and outcome.errno == errno.EINVAL, outcome
    assert "FIFO" in str(outcome)


# -- oversized benchmark files --------------------------------------------------------------------


@pytest.mark.parametrize("name", _FILES)
def test_a_sparse_benchmark_file_over_the_limit_is_refused_unread(tmp_path: Path, name: str) -> None:
    fmt = format_of(name)
    folder = make_benchmark(fmt, tmp_path / "bench")
    limit = default_max_bytes()  # the limit of load_report too
    with open(folder / name, "r+b") as handle:
        handle.truncate(3 * limit)  # sparse: costs no disk
    outcome = run_bounded(lambda: load(folder, fmt))
    assert isinstance(outcome, BenchmarkFormatError), outcome
    text = str(outcome)
    assert "\n" not in text and Path(name).name in text and "larger than the limit" in text, text


def test_the_benchmark_limit_is_load_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_benchmark("jsonl", tmp_path / "bench")
    report = tmp_path / "r.json"
    report.write_bytes(NORMAL.read_bytes())
    limit = min((folder / "cases.jsonl").stat().st_size, report.stat().st_size) - 1
    monkeypatch.setenv("HETA_NB_MAX_BYTES", str(limit))
    with pytest.raises(BenchmarkFormatError, match="cases.jsonl: the file is"):
        load(folder, "jsonl")
    with pytest.raises(ReportFormatError, match="larger than the limit"):
        heta_nb.load_report(report)
    assert read_regular_file(folder / "manifest.json")  # small files still read


@pytest.mark.parametrize("name", LINE_FILES)
def test_an_over_long_line_is_refused_without_reading_it_whole(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parsing, "MAX_LINE_BYTES", 1 << 20)
    folder = make_benchmark(format_of(name), tmp_path / "bench")
    path = folder / name
    first = path.read_bytes().split(b"\n", 1)[0] + b"\n"
    path.write_bytes(first)
    with open(path, "r+b") as handle:
        handle.truncate(len(first) + 8 * (1 << 20))  # line 2: 8 MiB of NUL bytes, no newline
    outcome = run_bounded(lambda: load(folder, format_of(name)))
    assert isinstance(outcome, BenchmarkFormatError), outcome
    assert str(outcome) == f"{name}:2: the line is longer than 1,048,576 bytes (the longest a line may be)"


def test_a_line_of_exactly_the_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.jsonl"
    line = b'{"a": "' + b"x" * 100 + b'"}'
    path.write_bytes(line + b"\n" + line)
    monkeypatch.setattr(parsing, "MAX_LINE_BYTES", len(line))
    assert [row for _, row in parsing.jsonl_rows(path, "x.jsonl")] == [{"a": "x" * 100}] * 2


def test_material_is_built_once() -> None:
    """(The writers above share one report, comparison, store and board.)"""
    assert MATERIAL.report is MATERIAL.report
    free_fifo(Path("/nonexistent/never"))  # a missing FIFO is no error
    with pytest.raises(Blocked):
        run_bounded(lambda: __import__("time").sleep(1), timeout=0.05)


@pytest.mark.skipif(bool(NO_PYARROW), reason=NO_PYARROW)
def test_to_parquet_refuses_a_fifo_in_its_folder_before_writing_any_table(tmp_path: Path) -> None:
    """(A folder gets three tables: a FIFO at the second must not leave the first written.)"""
    folder = tmp_path / "tables"
    folder.mkdir()
    os.mkfifo(folder / "scores.parquet")
    outcome = run_bounded(lambda: MATERIAL.report.to_parquet(folder, overwrite=True))
    assert isinstance(outcome, NotARegularFileError) and "scores.parquet" in str(outcome), outcome
    assert sorted(p.name for p in folder.iterdir()) == ["scores.parquet"]
    assert stat.S_ISFIFO(os.lstat(folder / "scores.parquet").st_mode)


# -- the other files heta_nb opens: reviews, the judge cache, a store's appends, a document path ----


def _review(reviewer: str = "ana") -> object:
    from heta_nb.reviews.log import Review

    return Review(case_id="c1", query_mode="m", reviewer=reviewer, verdict="correct", value=1.0)


def test_a_fifo_in_a_review_folder_is_refused_or_passed_over_never_waited_on(tmp_path: Path) -> None:
    from heta_nb.reviews.log import ReviewLog

    log = ReviewLog(tmp_path / "reviews", report_id="r")
    log.append([_review("bo")])
    fifo = log.file_of("ana")
    os.mkfifo(fifo)
    # reading: the FIFO is not a reviewer's file (passed over), bo's verdict is read
    history = run_bounded(log.history, fifos=(fifo,))
    assert [r.reviewer for r in history] == ["bo"], history
    # appending to it: refused in one line, the FIFO still a FIFO
    outcome = run_bounded(lambda: log.append([_review("ana")]), fifos=(fifo,))
    assert isinstance(outcome, NotARegularFileError) and "FIFO" in str(outcome) and "\n" not in str(outcome)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_fifo_in_the_judge_cache_is_passed_over_never_waited_on(tmp_path: Path) -> None:
    from heta_nb.llm_judges.cache import JudgeCache

    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "answers-a.jsonl").write_bytes(b'{"key": "k1", "answer": {"text": "yes"}}\n')
    os.mkfifo(folder / "answers-b.jsonl")
    cache = JudgeCache(folder)
    size = run_bounded(lambda: len(cache), fifos=(folder / "answers-b.jsonl",))
    assert not isinstance(size, BaseException), size


def test_a_store_append_to_a_fifo_is_refused(tmp_path: Path) -> None:
    from heta_nb.store.local import LocalBackend

    backend = LocalBackend(tmp_path)
    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    outcome = run_bounded(lambda: backend.append("log.jsonl", b"x\n"), fifos=(fifo,))
    assert isinstance(outcome, NotARegularFileError), outcome
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_benchmark_document_path_that_is_a_fifo_fails_the_build_fast(tmp_path: Path) -> None:
    from heta_nb.runner.recipe import _document_bytes

    fifo = tmp_path / "doc.txt"
    os.mkfifo(fifo)

    class PathDocument:  # a document object of another loader: only a path
        document_id = "d1"
        data = None
        path = str(fifo)

    outcome = run_bounded(lambda: _document_bytes(PathDocument()), fifos=(fifo,))
    assert isinstance(outcome, NotARegularFileError), outcome
