"""A disk that fills mid-run: the run fails cleanly, keeps every result, and resumes.

The child process runs with ``RLIMIT_FSIZE`` set below the checkpoint's final size,
so the kernel refuses the write that crosses it (``EFBIG``; Python ignores the
``SIGXFSZ`` that comes with it): a real failing write, as a full disk or a quota
gives, with nothing in heta_nb patched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from runner_support import TOY_RUN_KEYS, SlowKB, resume_toy_run

import heta_nb
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.store import report_prefix

resource = pytest.importorskip("resource")

HERE = Path(__file__).resolve().parent
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
