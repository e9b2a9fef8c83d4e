"""A run killed with SIGKILL mid-way resumes, and the report has every case exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from runner_support import TOY_RUN_KEYS, SlowKB, resume_toy_run, toy_benchmark

import heta_nb
from heta_nb.errors import ReportExistsError, ReportInUseError
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.store import report_prefix

HERE = Path(__file__).resolve().parent

CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import heta_nb
    from runner_support import SlowKB, toy_benchmark
    heta_nb.evaluate(toy_benchmark(60), kb=SlowKB(0.05), query_modes=["good", "poor"], store=sys.argv[1],
                     report_id="k9", knowledge_base_name="toy kb", progress=False, concurrency=2)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_resume_after_sigkill(tmp_path: Path) -> None:
    store_root = tmp_path / "store"
    checkpoint = store_root / report_prefix("toy kb", "k9") / CHECKPOINT_FILE
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=str(HERE)), str(store_root)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if checkpoint.exists() and checkpoint.read_bytes().count(b"\n") >= 12:
                break
            if child.poll() is not None:
                pytest.fail(f"the child exited early with {child.returncode}")
            time.sleep(0.01)
        # while the child writes the report, another process may not resume it...
        intruder = SlowKB(0.001)
        with pytest.raises(ReportInUseError, match="another run is writing report 'k9'"):
            resume_toy_run(store_root, "k9", intruder)
        assert intruder.calls == 0 and child.poll() is None
        os.kill(child.pid, signal.SIGKILL)  # ...and the lock dies with the child
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    lines = checkpoint.read_bytes().splitlines()
    finished = len(lines) - 1  # minus the header
    assert 11 <= finished < 120
    # the process died: no report was written, but nothing finished is lost
    assert not (store_root / report_prefix("toy kb", "k9") / "report.json").exists()
    with checkpoint.open("ab") as handle:  # as if the kill had torn the last line
        handle.write(b'{"unit_id":"corpus","case_id":"c0')
    # running the same report again without resume=True must not discard what finished
    kept = checkpoint.read_bytes()
    with pytest.raises(ReportExistsError, match="left a checkpoint"):
        heta_nb.evaluate(
            toy_benchmark(60),
            kb=SlowKB(0.001),
            query_modes=["good", "poor"],
            store=store_root,
            report_id="k9",
            knowledge_base_name="toy kb",
            progress=False,
        )
    assert checkpoint.read_bytes() == kept
    kb = SlowKB(0.001)
    report = resume_toy_run(store_root, "k9", kb)
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert len(keys) == len(set(keys)) == 120
    assert keys == TOY_RUN_KEYS
    info = report.metadata["heta_nb"]
    assert info["status"] == "complete" and info["resumed"] == finished
    assert kb.calls == 120 - finished
    assert any("damaged checkpoint line" in w for w in info["warnings"])
    assert not checkpoint.exists()
    assert heta_nb.ReportStore(store_root).load("toy kb", "k9") == report


CTRL_C_CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import heta_nb
    from runner_support import SlowKB, toy_benchmark
    print("started", flush=True)
    report = heta_nb.evaluate(toy_benchmark(60), kb=SlowKB(0.05), query_modes=["good", "poor"], store=sys.argv[1],
                              report_id="ctrl-c", knowledge_base_name="toy kb", progress=False, concurrency=2)
    info = report.metadata["heta_nb"]
    print("returned", info["status"], info["done"], info["remaining"], flush=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs SIGINT")
def test_ctrl_c_returns_the_partial_report(tmp_path: Path) -> None:
    store_root = tmp_path / "store"
    checkpoint = store_root / report_prefix("toy kb", "ctrl-c") / CHECKPOINT_FILE
    child = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_CHILD.format(tests=str(HERE)), str(store_root)], stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (checkpoint.exists() and checkpoint.read_bytes().count(b"\n") > 6):
            time.sleep(0.01)
        child.send_signal(signal.SIGINT)  # what Ctrl-C in a terminal does
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, out
    status, done, remaining = out.strip().splitlines()[-1].split()[1:]
    assert status == "cancelled" and int(done) > 0 and int(done) + int(remaining) == 120
    saved = heta_nb.ReportStore(store_root).load("toy kb", "ctrl-c")
    assert saved.metadata["heta_nb"]["status"] == "cancelled" and len(saved.case_results) == int(done)
