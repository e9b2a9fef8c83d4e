"""``EvaluationRun.result`` wakes for a SIGINT handled on another thread; ``merge_reports`` refuses bad shard sets."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from runner_support import SlowKB, exact_kb, run_toy, toy_benchmark

import heta_nb

HERE = Path(__file__).resolve().parent
MODES = ["good", "poor"]

# 300 cases, one mode, 30 ms each, two at a time: a full run takes at least 4.5 s.
SIGINT_CHILD = textwrap.dedent(
    """
    import json, signal, sys, threading, time
    sys.path.insert(0, {tests!r})
    import heta_nb
    from runner_support import SlowKB, exact_kb, toy_benchmark

    kind, how = sys.argv[1], sys.argv[2]

    def sync_kb(query, *, mode, top_k):
        time.sleep(0.03)
        return exact_kb(query, mode=mode, top_k=top_k)

    def kb():
        return SlowKB(0.03) if kind == "async" else sync_kb

    def run(cases):
        started = time.monotonic()
        report = heta_nb.evaluate(toy_benchmark(cases), kb=kb(), query_modes=["good"], store=None,
                                  knowledge_base_name="toy kb", progress=False, concurrency=2)
        info = report.metadata["heta_nb"]
        return {{"status": info["status"], "done": info["done"], "total": info["total"],
                "results": len(report.case_results), "elapsed": time.monotonic() - started}}

    def interrupt():
        if how == "raise_signal":  # the C handler runs on the timer's thread
            signal.raise_signal(signal.SIGINT)
        else:  # the signal is delivered to a thread other than the main one
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    normal = run(20)
    threading.Timer(0.5, interrupt).start()
    interrupted = run(300)

    # a timeout on the main thread is still kept to the slice
    handle = heta_nb.start(toy_benchmark(200), kb=kb(), query_modes=["good"], store=None,
                           knowledge_base_name="toy kb", progress=False, concurrency=2)
    started = time.monotonic()
    try:
        handle.result(timeout=0.35)
        timed_out = None
    except TimeoutError as exc:
        timed_out = {{"message": str(exc), "waited": time.monotonic() - started, "done": handle.done()}}
    handle.cancel()
    timed_out["status"] = handle.result(timeout=20).metadata["heta_nb"]["status"]
    print(json.dumps({{"normal": normal, "interrupted": interrupted, "timed_out": timed_out}}), flush=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
@pytest.mark.parametrize(("kind", "how"), [("async", "raise_signal"), ("sync", "pthread_kill")])
def test_sigint_handled_on_another_thread_cancels_the_blocking_evaluate(kind: str, how: str) -> None:
    """Ctrl-C whose C handler ran off the main thread cancels; a normal run completes; timeouts hold."""
    child = subprocess.run(
        [sys.executable, "-c", SIGINT_CHILD.format(tests=str(HERE)), kind, how],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout.strip().splitlines()[-1])
    normal, interrupted = out["normal"], out["interrupted"]
    assert normal["status"] == "complete" and normal["done"] == normal["total"] == normal["results"] == 20
    # the full run needs >= 4.5 s; the interrupt comes at 0.5 s
    assert interrupted["status"] == "cancelled", out
    assert interrupted["total"] == 300 and 0 < interrupted["done"] == interrupted["results"] < 300
    assert interrupted["elapsed"] < 3.0, out
    timed_out = out["timed_out"]
    assert timed_out is not None and "still running after 0.35 s" in timed_out["message"]
    assert 0.35 <= timed_out["waited"] < 1.5 and not timed_out["done"] and timed_out["status"] == "cancelled"


def _run(**kwargs: Any) -> heta_nb.EvaluationReport:
    return run_toy(**kwargs)  # type: ignore[no-any-return]


def _shards(count: int = 3, **kwargs: Any) -> list[heta_nb.EvaluationReport]:
    return [_run(shard=(i, count), **kwargs) for i in range(count)]


def test_merge_refuses_an_incomplete_shard_set() -> None:
    single = _run()
    shards = _shards()
    with pytest.raises(ValueError, match=r"shard\(s\) 2 of 3 missing") as info:
        heta_nb.merge_reports(shards[:2])
    assert "whole__shard-0-of-3" in str(info.value) and "whole__shard-1-of-3" in str(info.value)
    with pytest.raises(ValueError, match=r"shard\(s\) 0, 2 of 3 missing"):
        heta_nb.merge_reports([shards[1]])
    with pytest.raises(ValueError, match="different shard count: 3 in 'whole__shard-0-of-3' vs 2"):
        heta_nb.merge_reports([shards[0], *_shards(2)[1:]])
    with pytest.raises(ValueError, match="is shard 0 of 3 but 'whole' is not a shard report"):
        heta_nb.merge_reports([shards[0], shards[1], shards[2], single])
    # the complete set, in any order, is the single run
    merged = heta_nb.merge_reports([shards[2], shards[0], shards[1]])
    assert [(r.case_id, r.query_mode) for r in merged.case_results] == [
        (r.case_id, r.query_mode) for r in single.case_results
    ]
    assert dict(merged.score_summary) == dict(single.score_summary)
    info_meta = merged.metadata["heta_nb"]
    assert info_meta["status"] == "complete" and info_meta["done"] == info_meta["total"] == 24
    assert info_meta["remaining"] == 0 and info_meta["shard"] is None


def test_merge_of_a_cancelled_shard_is_partial() -> None:
    shards = _shards(kb=SlowKB(0))
    run = heta_nb.start(
        toy_benchmark(),
        kb=SlowKB(5.0),
        query_modes=MODES,
        store=None,
        knowledge_base_name="toy kb",
        report_id="whole",
        shard=(1, 3),
        progress=False,
    )
    run.cancel()
    cancelled = run.result(timeout=20)
    assert cancelled.metadata["heta_nb"]["status"] == "cancelled"
    merged = heta_nb.merge_reports([shards[0], cancelled, shards[2]])
    meta = merged.metadata["heta_nb"]
    assert meta["status"] == "partial" and meta["total"] == 24
    assert meta["done"] == len(merged.case_results) < 24 and meta["remaining"] == 24 - meta["done"]


class ManifestKB:
    """A KB object with a manifest (and a recipe), answering like ``exact_kb``."""

    name = "toy kb"

    def __init__(self, index: str = "v1", created_at: str = "2024-01-01T00:00:00Z", recipe: str = "r1") -> None:
        self.index = index
        self.created_at = created_at
        self.recipe = _Recipe(recipe)

    def manifest(self) -> dict[str, Any]:
        return {"name": "toy kb", "index": self.index, "created_at": self.created_at}

    def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> dict[str, Any]:
        return exact_kb(query, mode=mode, top_k=top_k)


class _Recipe:
    def __init__(self, version: str) -> None:
        self.version = version

    def manifest(self) -> _Recipe:
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": "1", "steps": [], "metadata": {"version": self.version}}


def test_merge_refuses_shards_of_different_runs() -> None:
    shards = _shards()
    other = _run(shard=(1, 3), evaluators=["evidence_recall@3"])
    with pytest.raises(ValueError, match="different evaluators") as info:
        heta_nb.merge_reports([shards[0], other, shards[2]])
    message = str(info.value)
    assert "'answer_contains'" in message and "['evidence_recall@3']" in message
    assert "'whole__shard-0-of-3'" in message and "'whole__shard-1-of-3'" in message
    with pytest.raises(ValueError, match="different top_k: 10 in 'whole__shard-0-of-3' vs 3 in"):
        heta_nb.merge_reports([shards[0], _run(shard=(1, 3), top_k=3), shards[2]])
    with pytest.raises(ValueError, match="different query_modes"):
        heta_nb.merge_reports([shards[0], _run(shard=(1, 3), query_modes=["good"]), shards[2]])
    with pytest.raises(ValueError, match="different benchmark: 'toy:1:test' in 'whole__shard-0-of-3' vs"):
        heta_nb.merge_reports([shards[0], _renamed(_run(shard=(1, 3))), shards[2]])
    # knowledge base and recipe manifests: build times may differ, the KB itself may not
    kb_shards = [_run(shard=(i, 3), kb=ManifestKB(created_at=f"2024-01-0{i + 1}")) for i in range(3)]
    assert heta_nb.merge_reports(kb_shards).metadata["heta_nb"]["status"] == "complete"
    with pytest.raises(ValueError, match="different knowledge_base_manifest") as info:
        heta_nb.merge_reports([kb_shards[0], _run(shard=(1, 3), kb=ManifestKB(index="v2")), kb_shards[2]])
    assert "'v1'" in str(info.value) and "'v2'" in str(info.value)
    with pytest.raises(ValueError, match="different recipe_manifest"):
        heta_nb.merge_reports([kb_shards[0], _run(shard=(1, 3), kb=ManifestKB(recipe="r2")), kb_shards[2]])


def _renamed(report: heta_nb.EvaluationReport) -> heta_nb.EvaluationReport:
    data = report.to_dict()
    data["benchmark"] = {**data["benchmark"], "version": "2"}
    return heta_nb.EvaluationReport.from_dict(data)
