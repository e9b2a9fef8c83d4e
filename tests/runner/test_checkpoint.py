"""The checkpoint: every batch written before its event, chunked writes, torn lines, full disks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import TOY_RUN_KEYS, SlowKB, cancel_after, evaluate_toy, resume_toy_run, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.runner.checkpoint import CHECKPOINT_FILE, read_checkpoint
from heta_nb.store import report_prefix

MODES = ["good", "poor"]


HERE = Path(__file__).resolve().parents[1]


LIMIT = 60_000
"""Bytes a file may grow to in the child: about 45 of the run's 120 checkpoint lines."""


CHILD = textwrap.dedent(
    """
    import json, resource, sys
    sys.path.insert(0, {tests!r})
    import heta_nb
    from heta_nb.runner import RunFailedError
    from runner_support import SlowKB, toy_benchmark
    resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    try:
        heta_nb.evaluate(toy_benchmark(60), kb=SlowKB(0.002), query_modes=["good", "poor"], store=sys.argv[1],
                         report_id="full", knowledge_base_name="toy kb", progress=False, concurrency=4)
    except RunFailedError as exc:
        report = exc.report
        print(json.dumps({{
            "message": str(exc),
            "cases": [[r.case_id, r.query_mode] for r in report.case_results],
            "heta_nb": report.to_dict()["metadata"]["heta_nb"],
            "report_key": report.report_key,
        }}))
    """
)


def test_a_line_torn_by_a_kill_is_ended_before_a_resumed_run_appends(tmp_path: Path) -> None:
    """Without the repair the resumed run's first line would join the torn one and be lost."""
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.02)
    _, first = cancel_after(4, store=store, kb=kb, report_id="t", cases=40)
    path = tmp_path / report_prefix("toy kb", "t") / CHECKPOINT_FILE
    with path.open("ab") as handle:
        handle.write(b'{"case_id":"c039","query":"wh')  # what kill -9 mid-write leaves
    run = heta_nb.start(
        toy_benchmark(40),
        kb=kb,
        query_modes=MODES,
        store=store,
        report_id="t",
        resume=True,
        concurrency=2,
        knowledge_base_name="toy kb",
        progress=False,
    )
    deadline = time.monotonic() + 20
    while run.state.done < len(first.case_results) + 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    run.cancel()
    second = run.result(timeout=20)
    assert len(second.case_results) >= len(first.case_results) + 6
    checkpoint = read_checkpoint(store, "toy kb", "t")
    assert checkpoint is not None and checkpoint.skipped_lines == 1
    assert set(checkpoint.results) == {("corpus", r.case_id, r.query_mode) for r in second.case_results}


def test_resume_reads_a_checkpoint_written_in_the_first_format(tmp_path: Path) -> None:
    """Format 1 wrapped each result as {"unit_id", "mode", "case_id", "result"}; such a
    checkpoint (left by an older heta_nb) still resumes, case for case."""
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.05)
    _, partial = cancel_after(6, store=store, kb=kb, report_id="old", cases=20)
    path = tmp_path / report_prefix("toy kb", "old") / CHECKPOINT_FILE
    header, *lines = path.read_text().splitlines()
    assert lines and all("unit_id" not in json.loads(line) for line in lines)  # format 2: the result itself
    old_lines = [
        json.dumps(
            {"unit_id": "corpus", "mode": r["query_mode"], "case_id": r["case_id"], "result": r},
            separators=(",", ":"),
        )
        for r in map(json.loads, lines)
    ]
    path.write_text("\n".join([header.replace('"heta_nb_checkpoint":2', '"heta_nb_checkpoint":1'), *old_lines]) + "\n")
    final = evaluate_toy(benchmark=toy_benchmark(20), kb=kb, store=store, report_id="old", resume=True)
    keys = [(r.case_id, r.query_mode) for r in final.case_results]
    assert len(keys) == len(set(keys)) == 40
    assert final.metadata["heta_nb"]["resumed"] == len(lines) == len(partial.case_results)
    for result in partial.case_results:
        assert final.case(result.case_id, result.query_mode) == result


# -- batches: the checkpoint is on disk when the event arrives -----------------------------------


def test_each_batch_is_in_the_checkpoint_before_its_event(tmp_path: Path) -> None:
    checkpoint = tmp_path / report_prefix("toy kb", "batched") / CHECKPOINT_FILE
    seen: list[int] = []

    def on_event(event: Any) -> None:
        if event.kind == "cases_finished":
            lines = checkpoint.read_text().splitlines()[1:]
            written = {json.loads(line)["case_id"] for line in lines}
            assert {case.case_id for case in event.cases} <= written
            seen.append(len(event.cases))

    async def slowish(query: str) -> list[str]:
        await asyncio.sleep(0.002)
        return ["Document text"]

    report = evaluate_toy(
        query_modes=["good"],
        kb=slowish,
        store=tmp_path,
        report_id="batched",
        on_event=on_event,
        benchmark=toy_benchmark(60),
    )
    assert sum(seen) == 60 == len(report.case_results)
    assert len(seen) > 1 and max(seen) <= 32
    assert not checkpoint.exists()  # complete: the report holds everything


def test_a_fast_kb_still_writes_the_checkpoint_every_32_cases(tmp_path: Path) -> None:
    checkpoint = tmp_path / report_prefix("toy kb", "fast") / CHECKPOINT_FILE
    sizes: list[int] = []

    async def instant(query: str) -> list[str]:  # never lets the event loop turn
        if checkpoint.exists():
            sizes.append(len(checkpoint.read_bytes().splitlines()))
        return ["Document text"]

    evaluate_toy(
        query_modes=["good"], kb=instant, store=tmp_path, report_id="fast", benchmark=toy_benchmark(100), concurrency=1
    )
    assert sizes[0] == 1 and max(sizes) >= 1 + 96  # header, then 32 lines at a time
    assert all(0 <= b - a <= 32 for a, b in zip(sizes, sizes[1:]))


def test_a_run_checkpoints_saves_and_resumes_without_writev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole store path (checkpoint lines, the report's chunks, resume) on a platform without writev."""
    monkeypatch.delattr(os, "writev")
    kb = SlowKB(0.01)
    _, partial = cancel_after(6, store=tmp_path, kb=kb, report_id="nowritev", cases=30, query_modes=("good",))
    checkpoint = tmp_path / report_prefix("toy kb", "nowritev") / CHECKPOINT_FILE
    lines = checkpoint.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])  # whole lines only
    assert 6 <= len(lines) - 2 == len(partial.case_results) < 30
    calls = kb.calls
    report = evaluate_toy(
        query_modes=["good"],
        kb=kb,
        benchmark=toy_benchmark(30),
        store=tmp_path,
        report_id="nowritev",
        resume=True,
        concurrency=2,
    )
    assert [r.case_id for r in report.case_results] == [f"c{i:03d}" for i in range(30)]
    assert kb.calls - calls == 30 - len(partial.case_results)
    stored = ReportStore(tmp_path).load("toy kb", "nowritev")
    assert stored == report and not checkpoint.exists()


def test_a_disk_that_fills_fails_the_run_keeps_every_result_and_resume_finishes(tmp_path: Path) -> None:
    store_root = tmp_path / "store"
    folder = store_root / report_prefix("toy kb", "full")
    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(tests=str(HERE), limit=LIMIT), str(store_root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr
    assert "Traceback" not in child.stderr, child.stderr
    outcome = json.loads(child.stdout)

    # the run stopped at the failed write and said why, twice over: checkpoint and report
    assert "File too large" in outcome["message"]
    assert "the report could not be saved" in outcome["message"]
    info = outcome["heta_nb"]
    assert info["status"] == "failed" and "File too large" in info["failure"]
    assert outcome["report_key"] is None
    cases = [tuple(c) for c in outcome["cases"]]
    assert 0 < len(cases) < 120 and len(set(cases)) == len(cases) == info["done"]
    assert info["remaining"] == 120 - len(cases)

    # on disk: no report and no temporary file, only the checkpoint up to the limit
    assert sorted(p.name for p in folder.iterdir()) == [CHECKPOINT_FILE]
    checkpoint = (folder / CHECKPOINT_FILE).read_bytes()
    assert len(checkpoint) <= LIMIT
    whole = [json.loads(line) for line in checkpoint.split(b"\n")[1:-1]]  # header first, torn tail last
    assert whole and {(r["case_id"], r["query_mode"]) for r in whole} <= set(cases)

    # with room again, resume keeps what the checkpoint holds and runs the rest
    kb = SlowKB(0.001)
    report = resume_toy_run(store_root, "full", kb)
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert keys == TOY_RUN_KEYS
    assert kb.calls == 120 - len(whole)
    assert report.metadata["heta_nb"]["status"] == "complete"
    assert report.metadata["heta_nb"]["resumed"] == len(whole)
    assert heta_nb.ReportStore(store_root).load("toy kb", "full") == report
