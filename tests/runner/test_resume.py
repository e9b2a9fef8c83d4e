"""Cancel, then resume=True; killed runs; refusing to resume with other settings."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from runner_support import (
    TOY_RUN_KEYS,
    SlowKB,
    cancel_after,
    evaluate_toy,
    exact_kb,
    resume_toy_run,
    run_toy,
    toy_benchmark,
)

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import ReportExistsError, ReportInUseError
from heta_nb.runner import RunError
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.store import report_prefix

MODES = ["good", "poor"]


HERE = Path(__file__).resolve().parents[1]


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


def test_cancel_returns_a_partial_report_and_resume_finishes_it(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.05)
    run, partial = cancel_after(6, store=store, kb=kb, report_id="r", cases=40)
    info = partial.metadata["heta_nb"]
    assert info["status"] == "cancelled" and run.status == "cancelled"
    assert 6 <= info["done"] < 80 and info["remaining"] == 80 - info["done"]
    assert len(partial.case_results) == info["done"]
    assert store.load("toy kb", "r").metadata["heta_nb"]["status"] == "cancelled"
    assert (tmp_path / report_prefix("toy kb", "r") / CHECKPOINT_FILE).exists()
    done_before = {(r.case_id, r.query_mode) for r in partial.case_results}
    calls_before = kb.calls
    final = evaluate_toy(benchmark=toy_benchmark(40), kb=kb, store=store, report_id="r", resume=True)
    keys = [(r.case_id, r.query_mode) for r in final.case_results]
    assert len(keys) == len(set(keys)) == 80
    assert final.metadata["heta_nb"]["status"] == "complete"
    assert final.metadata["heta_nb"]["resumed"] == len(done_before)
    assert kb.calls - calls_before <= 80 - len(done_before) + 2  # at most the in-flight ones redone
    assert not (tmp_path / report_prefix("toy kb", "r") / CHECKPOINT_FILE).exists()
    # the saved bytes (assembled from checkpoint lines) are exactly Heta's encoding of the report
    assert (tmp_path / final.report_key).read_bytes() == final.to_json().encode("utf-8")
    for result in partial.case_results:  # resumed results are the very same records
        assert final.case(result.case_id, result.query_mode) == result


def test_resume_refuses_a_different_configuration(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    run = heta_nb.start(
        toy_benchmark(30),
        kb=SlowKB(0.05),
        query_modes=MODES,
        store=store,
        report_id="r",
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=1,
    )
    while run.state.done < 2:
        time.sleep(0.01)
    run.cancel()
    run.result(timeout=20)
    with pytest.raises(RunError, match="cannot resume report 'r': its checkpoint has modes"):
        evaluate_toy(
            benchmark=toy_benchmark(30),
            kb=SlowKB(0),
            store=store,
            report_id="r",
            resume=True,
            query_modes=["good"],
        )


def test_resuming_a_finished_report_with_other_settings_is_refused_and_keeps_it(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    first = evaluate_toy(lint=False, kb=exact_kb, store=store, report_id="done", query_modes=["good"])
    stored = (tmp_path / store.key_for("toy kb", "done")).read_bytes()
    for settings, field in (
        ({"query_modes": ["poor"]}, "modes"),
        ({"query_modes": ["good"], "evaluators": ["answer_contains"]}, "evaluators"),
        ({"query_modes": ["good"], "top_k": 3}, "top_k"),
        (
            {
                "query_modes": ["good"],
                "benchmark": toy_benchmark().__class__(
                    {"name": "other", "version": "1", "split": "test", "task_type": "qa"},
                    toy_benchmark().documents,
                    toy_benchmark().cases,
                ),
            },
            "benchmark",
        ),
    ):
        with pytest.raises(RunError, match=f"its stored report has {field}="):
            evaluate_toy(lint=False, kb=exact_kb, store=store, report_id="done", resume=True, **settings)
    assert (tmp_path / store.key_for("toy kb", "done")).read_bytes() == stored
    kb = SlowKB(0)
    again = evaluate_toy(lint=False, kb=kb, store=store, report_id="done", resume=True, query_modes=["good"])
    assert kb.calls == 0 and again.case_results == first.case_results


def test_a_run_that_only_left_a_checkpoint_is_not_started_over_silently(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    cancel_after(3, store=store, kb=SlowKB(0.02), report_id="cp", cases=30)
    # what a kill -9 before the final save leaves: the checkpoint, no report
    for leftover in (tmp_path / store.key_for("toy kb", "cp")).parent.iterdir():
        if leftover.name != "checkpoint.jsonl":
            leftover.unlink()
    checkpoint = (tmp_path / store.key_for("toy kb", "cp")).parent / "checkpoint.jsonl"
    kept = checkpoint.read_bytes()
    with pytest.raises(ReportExistsError, match="left a checkpoint"):
        evaluate_toy(lint=False, benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="cp")
    assert checkpoint.read_bytes() == kept
    fresh = evaluate_toy(
        lint=False, benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="cp", overwrite=True
    )
    assert fresh.metadata["heta_nb"]["resumed"] == 0 and len(fresh.case_results) == 60


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


def test_resume_with_other_options_is_refused_other_secrets_are_not(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    _, partial = cancel_after(
        2,
        store=store,
        kb=SlowKB(0.05),
        report_id="r",
        cases=30,
        concurrency=1,
        query_options={"alpha": 0.5, "api_key": "old key"},
    )
    settings = dict(benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="r", resume=True)
    with pytest.raises(RunError, match=r"cannot resume report 'r': its checkpoint has query_options=\{'alpha': 0.5"):
        run_toy(**settings, query_options={"alpha": 0.75, "api_key": "old key"})
    with pytest.raises(RunError, match="its checkpoint has query_options"):
        run_toy(**settings)  # no options at all is other options too
    with pytest.raises(RunError, match="its checkpoint has trace=False, this run has True"):  # traced and not
        run_toy(**settings, query_options={"alpha": 0.5, "api_key": "k"}, trace=True)
    done = run_toy(**settings, query_options={"alpha": 0.5, "api_key": "a rotated key"})
    assert len(done.case_results) == 60 > len(partial.case_results)
    # the checkpoint is gone with the complete report; the stored report's settings are checked instead
    with pytest.raises(RunError, match="its stored report has query_options"):
        run_toy(**settings, query_options={"alpha": 0.75})
