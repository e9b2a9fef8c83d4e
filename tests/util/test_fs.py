"""Bounded reads (heta_nb._util.fs): regular files only, a size limit checked before reading."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from helpers import call_in_thread

import heta_nb
from heta_nb._util.fs import (
    DEFAULT_MAX_BYTES,
    MAX_BYTES_VARIABLE,
    FileTooLargeError,
    NotARegularFileError,
    read_regular_file,
)
from heta_nb.cli import main as cli_main
from heta_nb.errors import HetaNbError, ReportFormatError
from heta_nb.testing import synthetic_report

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="FIFOs and /dev/zero")


def _within(seconds: float, call: Any) -> Any:
    """``call()``, failing (not hanging) when it takes longer than ``seconds``: a FIFO read blocks forever."""
    thread, outcome = call_in_thread(call, seconds)
    if thread.is_alive():
        pytest.fail(f"still reading after {seconds} s (it blocks)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.hostile
@POSIX_ONLY
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = _fifo(tmp_path)
    with pytest.raises(NotARegularFileError, match="it is a FIFO") as info:
        _within(10, lambda: read_regular_file(fifo))
    assert str(info.value).startswith(f"{fifo}: not a regular file") and "\n" not in str(info.value)
    with pytest.raises(ReportFormatError, match=r"report\.json: cannot read: not a regular file: it is a FIFO"):
        _within(10, lambda: heta_nb.load_report(fifo))
    for command in (["show", str(fifo)], ["html", str(fifo), "-o", str(tmp_path / "out.html")]):
        assert _within(10, lambda command=command: cli_main(command)) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"heta-nb: error: {fifo}: ") and "it is a FIFO" in err


@pytest.mark.hostile
@POSIX_ONLY
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_is_refused_before_reading(capsys: pytest.CaptureFixture[str]) -> None:
    """``load_report('/dev/zero')`` grew to 7 GB without an error."""
    with pytest.raises(NotARegularFileError, match="character device"):
        _within(10, lambda: read_regular_file("/dev/zero"))
    with pytest.raises(ReportFormatError, match="/dev/zero: cannot read: .*character device"):
        _within(10, lambda: heta_nb.load_report("/dev/zero"))
    assert _within(10, lambda: cli_main(["show", "/dev/zero"])) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("heta-nb: error: /dev/zero: ") and "character device" in err


@pytest.mark.hostile
def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(5 * 1024**3)  # sparse: 5 GiB on paper, nothing on disk
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    with pytest.raises(FileTooLargeError) as info:
        read_regular_file(big)
    message = str(info.value)
    assert message.startswith(f"{big}: the file is 5.0 GiB (5,368,709,120 bytes), larger than the limit")
    assert "4.0 GiB (4,294,967,296 bytes)" in message and f"{MAX_BYTES_VARIABLE}=5368709120" in message
    assert reads == []  # refused before reading
    with pytest.raises(ReportFormatError, match=r"raise the limit: load_report\(\.\.\., max_bytes=5368709120\)"):
        heta_nb.load_report(big)
    small = tmp_path / "small.json"
    small.write_bytes(synthetic_report(2).to_json().encode())
    size = small.stat().st_size
    with pytest.raises(ReportFormatError, match=f"larger than the limit of 100 bytes.*max_bytes={size}"):
        heta_nb.load_report(small, max_bytes=100)
    assert heta_nb.load_report(small, max_bytes=size).case_count == 6  # the limit is inclusive
    monkeypatch.setenv(MAX_BYTES_VARIABLE, "100")
    with pytest.raises(ReportFormatError, match="larger than the limit of 100 bytes"):
        heta_nb.load_report(small)
    monkeypatch.setenv(MAX_BYTES_VARIABLE, "not a number")
    assert heta_nb.load_report(small).case_count == 6  # ignored: the default applies
    assert DEFAULT_MAX_BYTES == 4 * 1024**3


def test_regular_files_of_every_size_read_whole(tmp_path: Path) -> None:
    for size in (0, 1, 4095, 1 << 20, (1 << 20) + 3):
        path = tmp_path / f"f{size}"
        data = os.urandom(size)
        path.write_bytes(data)
        assert read_regular_file(path) == data
    proc = Path("/proc/self/status")
    if proc.exists():  # a regular file that reports size 0 but has content
        assert b"Name:" in read_regular_file(proc)


@pytest.mark.hostile
def test_a_directory_says_so(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_regular_file(tmp_path)
    with pytest.raises(ReportFormatError, match="is a directory without a report.json"):
        heta_nb.load_report(tmp_path)


@pytest.mark.hostile
@POSIX_ONLY
def test_links_are_followed_unless_told_not_to(tmp_path: Path) -> None:
    target = tmp_path / "target.json"
    target.write_bytes(b"{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert read_regular_file(link) == b"{}"
    with pytest.raises(NotARegularFileError, match="it is a symbolic link, which is not followed here"):
        read_regular_file(link, follow=False)
    assert issubclass(NotARegularFileError, HetaNbError) and issubclass(FileTooLargeError, OSError)


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("path", "reason"),
    [("a\x00b.json", "it contains a NUL character"), ("r\ud800.json", "such as a lone surrogate")],
)
def test_a_path_no_file_can_have_is_a_read_error_not_a_value_error(path: str, reason: str) -> None:
    """``load_report('a\\x00b.json')`` raised a raw ``ValueError: embedded null byte``."""
    with pytest.raises(OSError, match=f"not a usable file path \\(.*{reason}"):
        read_regular_file(path)
    with pytest.raises(ReportFormatError, match=f"cannot read: not a usable file path \\(.*{reason}"):
        heta_nb.load_report(path)
