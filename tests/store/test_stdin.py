"""`-` is standard input: stdin_report reads a piped report (the CLI's `heta-nb show -`)."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from heta_nb.errors import ReportFormatError
from heta_nb.store import locate
from heta_nb.testing import dumps_compact, synthetic_report_dict


def _report_bytes() -> bytes:
    text = dumps_compact(synthetic_report_dict(n_cases=3))
    return text.encode("utf-8") if isinstance(text, str) else text


def test_a_piped_report_is_read() -> None:
    report = locate.stdin_report(io.BytesIO(_report_bytes()))
    assert len(report.case_results) > 0


def test_stdin_problems_name_stdin() -> None:
    with pytest.raises(ReportFormatError, match=r"^<stdin>: "):
        locate.stdin_report(io.BytesIO(b'{"schema_version": "1"}'))


def test_stdin_is_refused_over_the_limit() -> None:
    with pytest.raises(ReportFormatError, match="larger than 10 bytes"):
        locate.stdin_report(io.BytesIO(_report_bytes()), max_bytes=10)


def test_the_real_stdin_of_a_process() -> None:
    code = "from heta_nb.store.locate import stdin_report; print(len(stdin_report().case_results))"
    done = subprocess.run([sys.executable, "-c", code], input=_report_bytes(), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert int(done.stdout) > 0


def test_a_terminal_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.BytesIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    with pytest.raises(ReportFormatError, match="nothing piped in"):
        locate.stdin_report()
