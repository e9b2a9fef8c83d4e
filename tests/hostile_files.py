"""Hostile files for heta_nb's readers and writers, shared by ``tests/util/test_hostile_files.py``
and ``tests/audit/families_files.py``: every writer (API and CLI ``-o``), every kind of target
that is not a regular file, the benchmark files the loaders read, and a bounded way to call
something that might block forever on a FIFO."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from helpers import FIXTURES, call_in_thread

import heta_nb
from heta_nb._util.atomic import _temp_prefix, is_temporary_name

NORMAL = FIXTURES / "report-normal.json"
ERRORS = FIXTURES / "report-errors.json"
TIMEOUT_S = 10.0
"""How long any one call may take before it counts as blocked."""
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

# -- running a call that may block ---------------------------------------------------------------


class Blocked(AssertionError):
    """The call was still running after its timeout (it waited on a FIFO)."""


def run_bounded(call: Callable[[], Any], *, timeout: float = TIMEOUT_S, fifos: tuple[Path, ...] = ()) -> Any:
    """``call()`` in a thread: what it returned, or the exception it raised (returned, not raised).

    Raises :class:`Blocked` when it is still running after ``timeout`` s; then each of
    ``fifos`` is opened at both ends for a moment, which frees a thread blocked opening it.
    """
    thread, outcome = call_in_thread(call, timeout)
    if thread.is_alive():
        for fifo in fifos:
            free_fifo(fifo)
        thread.join(2)
        raise Blocked(f"still running after {timeout:g} s: blocked")
    return outcome.get("error", outcome.get("value"))


def free_fifo(fifo: Path) -> None:
    """Open ``fifo`` read-write for a moment (Linux): a reader or writer blocked opening it goes on."""
    with contextlib.suppress(OSError):
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        time.sleep(0.2)
        os.close(fd)


# -- what the writers write ----------------------------------------------------------------------


class Material:
    """The reports, comparison, board and store the writers export (built once, on first use)."""

    @cached_property
    def folder(self) -> Path:
        path = Path(tempfile.mkdtemp(prefix="heta_nb-hostile-"))
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        return path

    @cached_property
    def report(self) -> Any:
        return heta_nb.load_report(NORMAL)

    @cached_property
    def comparison(self) -> Any:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return heta_nb.compare(self.report, heta_nb.load_report(ERRORS))

    @cached_property
    def store(self) -> Path:
        store = heta_nb.ReportStore(self.folder / "store")
        store.save(self.report)
        store.save(heta_nb.load_report(ERRORS))
        return self.folder / "store"

    @cached_property
    def board(self) -> Any:
        return heta_nb.Leaderboard.from_store(self.store)


MATERIAL = Material()


class CliFailed(Exception):
    """``heta-nb`` exited with ``code``; ``stderr`` is what it printed there."""

    def __init__(self, code: int, stderr: str) -> None:
        super().__init__(stderr.strip())
        self.code, self.stderr = code, stderr


def run_cli(*argv: str) -> None:
    """``heta-nb ARGV`` in this process; :class:`CliFailed` unless it exits 0."""
    import warnings

    from heta_nb.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(list(argv))
    if code != 0:
        raise CliFailed(code, err.getvalue())


@dataclass(frozen=True)
class Writer:
    """One way heta_nb writes a file: ``write(path)`` writes it (replacing what is there)."""

    name: str
    suffix: str
    write: Callable[[Path], Any]
    companions: Callable[[Path], list[Path]] = field(default=lambda path: [])
    """The other files it writes next to ``path`` (a notebook's ``.report.json``)."""
    cli: bool = False


def _report_companion(path: Path) -> list[Path]:
    return [path.with_name(f"{path.stem}.report.json")]


def _comparison_companions(path: Path) -> list[Path]:
    return [path.with_name(f"{path.stem}.report-{i}.json") for i in (1, 2)]


def writers() -> list[Writer]:
    """Every writer: the API's exports and every CLI ``-o`` (always replacing: ``overwrite``/``--force``)."""
    m = MATERIAL
    normal, errors = str(NORMAL), str(ERRORS)
    return [
        Writer("to_html", ".html", lambda p: heta_nb.to_html(m.report, p)),
        Writer("to_html(comparison)", ".html", lambda p: heta_nb.to_html(m.comparison, p)),
        Writer("Leaderboard.to_html", ".html", lambda p: m.board.to_html(p)),
        Writer("to_notebook", ".ipynb", lambda p: heta_nb.to_notebook(m.report, p), _report_companion),
        Writer(
            "to_notebook(comparison)", ".ipynb", lambda p: heta_nb.to_notebook(m.comparison, p), _comparison_companions
        ),
        Writer("to_parquet", ".parquet", lambda p: m.report.to_parquet(p, overwrite=True)),
        Writer("heta-nb html -o", ".html", lambda p: run_cli("html", normal, "-o", str(p), "--force"), cli=True),
        Writer(
            "heta-nb notebook -o",
            ".ipynb",
            lambda p: run_cli("notebook", normal, "-o", str(p), "--force"),
            _report_companion,
            cli=True,
        ),
        Writer(
            "heta-nb compare -o",
            ".html",
            lambda p: run_cli("compare", normal, errors, "-o", str(p), "--force"),
            cli=True,
        ),
        Writer(
            "heta-nb check -o",
            ".md",
            lambda p: run_cli("check", normal, "--baseline", errors, "-o", str(p), "--force"),
            cli=True,
        ),
        *(
            Writer(
                f"heta-nb leaderboard -o {suffix}",
                suffix,
                lambda p: run_cli("leaderboard", str(m.store), "-o", str(p), "--force"),
                cli=True,
            )
            for suffix in (".csv", ".html", ".ipynb")
        ),
    ]


# -- targets that are not regular files ----------------------------------------------------------

KINDS = ("FIFO", "character device", "link to a FIFO", "directory")
"""What a write must refuse (the character device is made only when running as root)."""
LINK_TO_FILE = "link to a regular file"
"""What a write must write through (the link stays, the file it leads to is replaced)."""


def kind_unavailable(kind: str) -> str | None:
    """Why ``kind`` cannot be made here (None: it can)."""
    if not hasattr(os, "mkfifo"):
        return "no FIFOs on this OS"
    if kind == "character device" and not IS_ROOT:
        return "os.mknod of a character device needs root"
    return None


@dataclass(frozen=True)
class Target:
    """A target made in a folder: ``path`` is what the writer is given; ``intact()`` checks it."""

    kind: str
    path: Path
    node: Path
    """The FIFO, device, directory or file itself (``path``, or where the link leads)."""
    rdev: int = 0

    def intact(self) -> str | None:
        """None when the target is still what it was, else what changed."""
        try:
            info = os.lstat(self.node)
        except OSError as exc:
            return f"{self.node.name} is gone ({exc})"
        expected = {
            "FIFO": stat.S_ISFIFO,
            "link to a FIFO": stat.S_ISFIFO,
            "character device": stat.S_ISCHR,
            "directory": stat.S_ISDIR,
            LINK_TO_FILE: stat.S_ISREG,
        }[self.kind]
        if not expected(info.st_mode):
            return f"{self.node.name} is no longer a {self.kind} (mode {oct(info.st_mode)})"
        if self.kind == "character device" and info.st_rdev != self.rdev:
            return f"{self.node.name}: device number changed"
        if self.path != self.node and not self.path.is_symlink():
            return f"{self.path.name}: the link was replaced"
        if self.kind == "directory" and any(self.node.iterdir()):
            return f"{self.node.name}: something was written into the directory"
        return None


def make_target(kind: str, folder: Path, name: str) -> Target:
    """A ``kind`` at ``folder / name`` (links lead to a node beside it)."""
    path = folder / name
    if kind == "FIFO":
        os.mkfifo(path)
        return Target(kind, path, path)
    if kind == "character device":  # the numbers of /dev/null, on a private node: harmless even if opened
        rdev = os.makedev(1, 3)
        os.mknod(path, 0o600 | stat.S_IFCHR, rdev)
        return Target(kind, path, path, rdev)
    if kind == "directory":
        path.mkdir()
        return Target(kind, path, path)
    node = folder / f"real-{name}"
    if kind == "link to a FIFO":
        os.mkfifo(node)
    elif kind == LINK_TO_FILE:
        node.write_bytes(b"old contents")
    else:
        raise ValueError(kind)
    path.symlink_to(node)
    return Target(kind, path, node)


def temporaries_in(folder: Path) -> list[str]:
    """The atomic writers' temporary files in ``folder``."""
    return sorted(name for name in os.listdir(folder) if is_temporary_name(name))


def refusal_problem(writer: Writer, target: Target, outcome: Any) -> str | None:
    """None when ``outcome`` (what ``writer.write(target.path)`` gave) is a proper refusal of ``target``."""
    where = f"{writer.name} x {target.kind}"
    if not isinstance(outcome, BaseException):
        return f"{where}: written, not refused"
    if isinstance(outcome, CliFailed):
        lines = [line for line in outcome.stderr.splitlines() if line.startswith("heta-nb: error:")]
        if outcome.code not in (1, 2) or len(lines) != 1 or "Traceback" in outcome.stderr:
            return f"{where}: exit {outcome.code}, stderr {outcome.stderr[-300:]!r}"
        text = lines[0]
    elif isinstance(outcome, OSError):
        text = str(outcome)
        if "\n" in text:
            return f"{where}: a message of several lines: {text!r}"
    else:
        return f"{where}: {type(outcome).__name__}: {outcome}"
    if target.path.name not in text:
        return f"{where}: the message does not name {target.path.name}: {text!r}"
    return None


# -- killed writes -------------------------------------------------------------------------------


def plant_temporaries(target: Path) -> tuple[Path, Path]:
    """What writes of ``target`` killed mid-write leave: ``(stale, young)``.

    ``stale`` is two hours old and no writer holds it; ``young`` was just written (a
    writer may still be at work): only ``stale`` may be removed.
    """
    prefix = _temp_prefix(target.name)
    stale = target.with_name(f"{prefix}0badc0de.tmp")
    young = target.with_name(f"{prefix}12345678.tmp")
    stale.write_bytes(b"half a file")
    young.write_bytes(b"half a file")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    return stale, young


# -- benchmark folders ---------------------------------------------------------------------------

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "qa"}
MULTIHOP_CORPUS = [{"title": "T1", "url": "https://example.org/t1", "body": "The keeper was Ada.", "source": "x"}]
MULTIHOP_QUERIES = [
    {
        "query": "Who was the keeper?",
        "answer": "Ada",
        "question_type": "inference_query",
        "evidence_list": [{"title": "T1", "url": "https://example.org/t1", "fact": "The keeper was Ada."}],
    }
]

BENCHMARK_FILES: dict[str, tuple[str, ...]] = {
    "jsonl": ("manifest.json", "documents.jsonl", "cases.jsonl"),
    "beir": ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"),
    "multihop_rag": ("corpus.json", "MultiHopRAG.json"),
}
"""Every file each format's loader reads."""
LINE_FILES = ("documents.jsonl", "cases.jsonl", "corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
"""The files read line by line."""


def make_benchmark(fmt: str, folder: Path) -> Path:
    """A small valid benchmark of format ``fmt`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        for name in ("documents.jsonl", "cases.jsonl"):
            shutil.copyfile(FIXTURES / name, folder / name)
        shutil.copytree(FIXTURES / "files", folder / "files", dirs_exist_ok=True)
        (folder / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    elif fmt == "beir":
        shutil.copytree(FIXTURES / "beir_mini", folder, dirs_exist_ok=True)
    else:
        (folder / "corpus.json").write_text(json.dumps(MULTIHOP_CORPUS), encoding="utf-8")
        (folder / "MultiHopRAG.json").write_text(json.dumps(MULTIHOP_QUERIES), encoding="utf-8")
    return folder


def format_of(name: str) -> str:
    return next(fmt for fmt, files in BENCHMARK_FILES.items() if name in files)


@contextlib.contextmanager
def replaced_by_fifo(path: Path) -> Iterator[Path]:
    """``path`` made a FIFO for the duration (freed afterwards, so nothing stays blocked on it)."""
    path.unlink()
    os.mkfifo(path)
    try:
        yield path
    finally:
        free_fifo(path)


def load(folder: Path, fmt: str | None) -> Any:
    return heta_nb.load_benchmark(folder, format=fmt)
