"""A newcomer's first run of the demo: no warning about the KB, no console text unless asked for."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from helpers import requires_heta

pytestmark = requires_heta


def test_the_demo_evaluation_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """Heta's in-memory BM25 answers each query in milliseconds without ever suspending: the runner
    now lets the loop run between such cases, so the demo is not told it blocks the loop."""
    from heta_nb import demo

    def attempt(folder: Path) -> tuple[list[str], dict[str, Any]]:
        with warnings.catch_warnings(record=True) as caught:  # the demo's own two evaluations
            warnings.simplefilter("always")
            reports = demo.run_demo(folder / "output", folder / "store", progress=False).reports
        return [str(w.message) for w in caught], reports

    # Up to three runs, one clean run passes. Waiting for a CPU is no longer counted as a block
    # (runner/stalls.py reads schedstat; tests/runner/test_stalls_starvation.py), but a stall in
    # the kernel (a page fault on a loaded machine) still is; the old code blocked the loop
    # ~0.8 s on every run, so it fails all three.
    for run in range(3):
        issued, reports = attempt(tmp_path / f"run{run}")
        kept = [m for report in reports.values() for m in report.metadata["heta_nb"]["warnings"]]
        if not [m for m in [*issued, *kept] if "blocked the event loop" in m]:
            break
    assert not [m for m in issued if "blocked the event loop" in m], issued
    assert not [m for m in kept if "blocked the event loop" in m], kept
    assert all(report.error_count == 0 for report in reports.values())
    # offline, tiktoken's fallback is Heta's own and changes no score: a note on the build, not a warning
    assert not [m for m in [*issued, *kept] if "tiktoken" in m], issued


def test_run_demo_without_progress_prints_nothing(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from heta_nb import demo

    result = demo.run_demo(tmp_path / "output", tmp_path / "store", progress=False)
    captured = capfd.readouterr()
    assert captured.out == ""
    assert set(result.reports) == {"small-chunks", "large-chunks"} and result.outputs["report"].is_file()

    text = io.StringIO()  # the headers and the summary, where the caller asks for them
    demo.run_demo(tmp_path / "output", tmp_path / "store", progress=False, stream=text)
    assert capfd.readouterr().out == ""
    assert "== recipe 'small-chunks'" in text.getvalue() and "== mean scores" in text.getvalue()


def test_the_cli_demo_keeps_its_console_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from heta_nb.cli import main

    assert main(["demo", "-o", str(tmp_path / "output"), "--store", str(tmp_path / "store")]) == 0
    out = capsys.readouterr().out
    assert "== recipe 'small-chunks'" in out and "== mean scores" in out and "demo finished in" in out


def test_make_demo_prints_no_warning(tmp_path: Path) -> None:
    """``make demo`` runs ``python -m heta_nb demo``: on a fresh, offline machine it warns of nothing.

    The demo's 6 unanswerable cases are labelled so (no gold by design: not a lint finding), and
    tiktoken's offline fallback is a note on the build's line.
    """
    done = subprocess.run(
        [sys.executable, "-m", "heta_nb", "demo", "-o", str(tmp_path / "out"), "--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    assert "Warning" not in shown and "warning" not in shown.lower(), shown
    assert "demo finished in" in done.stdout
