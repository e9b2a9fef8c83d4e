"""Shards and merge_reports."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, heta_recipe, requires_heta
from runner_support import MANIFEST, SlowKB, evaluate_toy, exact_kb, run_toy, toy_benchmark

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkRunUnit
from heta_nb.errors import ReportFormatError
from heta_nb.runner.redaction import REDACTED

MODES = ["good", "poor"]


def _shards(count: int = 3, **kwargs: Any) -> list[heta_nb.EvaluationReport]:
    return [run_toy(shard=(i, count), **kwargs) for i in range(count)]


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


def _renamed(report: heta_nb.EvaluationReport) -> heta_nb.EvaluationReport:
    data = report.to_dict()
    data["benchmark"] = {**data["benchmark"], "version": "2"}
    return heta_nb.EvaluationReport.from_dict(data)


# what differs between a single run and a merge by nature: times, ids, provenance
VOLATILE = frozenset(
    ("started_at", "finished_at", "report_id", "report_key", "latency_ms", "query_ms", "elapsed_s", "merged_from")
    + ("created_at", "updated_at", "run_record")  # of a KB manifest: each shard built its own KB
)


def _comparable(value: Any) -> Any:
    """A report's JSON without the volatile fields; NaN as a string so that it equals itself."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def _same_report(merged: heta_nb.EvaluationReport, single: heta_nb.EvaluationReport) -> None:
    ours, theirs = (_comparable(json.loads(r.to_json())) for r in (merged, single))
    assert ours == theirs


def _toy(**kwargs: Any) -> heta_nb.EvaluationReport:
    kwargs.setdefault("query_modes", ["good", "poor"])
    kwargs.setdefault("report_id", "whole")
    kwargs.setdefault("kb", exact_kb)
    kwargs.setdefault("store", None)
    return heta_nb.evaluate(
        kwargs.pop("benchmark", None) or toy_benchmark(), knowledge_base_name="toy kb", progress=False, **kwargs
    )


# -- merge: equal to a single run ------------------------------------------------------


def _two_unit_toy() -> Benchmark:
    base = toy_benchmark(12)
    units = (
        BenchmarkRunUnit(unit_id="u-a", case_ids=tuple(c.case_id for c in base.cases[:6])),
        BenchmarkRunUnit(unit_id="u b", case_ids=tuple(c.case_id for c in base.cases[4:])),  # overlapping ids
    )
    return Benchmark(MANIFEST, base.documents, base.cases, units=units, evaluators=base.default_evaluators)


def _flaky_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    if query.endswith("question 3?") and mode == "poor":
        raise RuntimeError("backend down")
    return exact_kb(query, mode=mode, top_k=top_k)


def _odd_evaluator(case: Any, response: Any) -> dict[str, Any]:
    if case.case_id.endswith("5"):
        raise ValueError("this evaluator fails here")  # recorded in the score's metadata
    return {"name": "odd", "value": float("nan") if case.case_id.endswith("2") else 1.0}


def test_shards_merge_into_the_single_run_report() -> None:
    single = evaluate_toy(kb=exact_kb, store=None, report_id="whole")
    shards = [evaluate_toy(kb=exact_kb, store=None, report_id="whole", shard=(i, 3)) for i in range(3)]
    assert sum(len(s.case_results) for s in shards) == 24 and all(s.case_results for s in shards)
    assert all(s.report_id.startswith("whole__shard-") for s in shards)
    merged = heta_nb.merge_reports(shards)
    assert merged.report_id == "whole"
    assert [(r.case_id, r.query_mode) for r in merged.case_results] == [
        (r.case_id, r.query_mode) for r in single.case_results
    ]
    assert dict(merged.score_summary) == dict(single.score_summary)
    assert list(merged.metadata["heta_nb"]["merged_from"]) == [s.report_id for s in shards]
    with pytest.raises(ValueError, match="is in both"):
        heta_nb.merge_reports([shards[0], shards[0]])
    # a stable subset: the same shard twice is the same cases
    again = evaluate_toy(kb=exact_kb, store=None, report_id="whole", shard=(1, 3))
    assert [r.case_id for r in again.case_results] == [r.case_id for r in shards[1].case_results]


def test_merge_refuses_an_incomplete_shard_set() -> None:
    single = run_toy()
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


def test_merge_refuses_shards_of_different_runs() -> None:
    shards = _shards()
    other = run_toy(shard=(1, 3), evaluators=["evidence_recall@3"])
    with pytest.raises(ValueError, match="different evaluators") as info:
        heta_nb.merge_reports([shards[0], other, shards[2]])
    message = str(info.value)
    assert "'answer_contains'" in message and "['evidence_recall@3']" in message
    assert "'whole__shard-0-of-3'" in message and "'whole__shard-1-of-3'" in message
    with pytest.raises(ValueError, match="different top_k: 10 in 'whole__shard-0-of-3' vs 3 in"):
        heta_nb.merge_reports([shards[0], run_toy(shard=(1, 3), top_k=3), shards[2]])
    with pytest.raises(ValueError, match="different query_modes"):
        heta_nb.merge_reports([shards[0], run_toy(shard=(1, 3), query_modes=["good"]), shards[2]])
    with pytest.raises(ValueError, match="different benchmark: 'toy:1:test' in 'whole__shard-0-of-3' vs"):
        heta_nb.merge_reports([shards[0], _renamed(run_toy(shard=(1, 3))), shards[2]])
    # knowledge base and recipe manifests: build times may differ, the KB itself may not
    kb_shards = [run_toy(shard=(i, 3), kb=ManifestKB(created_at=f"2024-01-0{i + 1}")) for i in range(3)]
    assert heta_nb.merge_reports(kb_shards).metadata["heta_nb"]["status"] == "complete"
    with pytest.raises(ValueError, match="different knowledge_base_manifest") as info:
        heta_nb.merge_reports([kb_shards[0], run_toy(shard=(1, 3), kb=ManifestKB(index="v2")), kb_shards[2]])
    assert "'v1'" in str(info.value) and "'v2'" in str(info.value)
    with pytest.raises(ValueError, match="different recipe_manifest"):
        heta_nb.merge_reports([kb_shards[0], run_toy(shard=(1, 3), kb=ManifestKB(recipe="r2")), kb_shards[2]])


def test_merged_shards_are_the_single_run_with_units_errors_and_nan_scores() -> None:
    """Checked correct: errored cases, evaluator errors, NaN scores, 3 modes, 2 units, empty shards."""

    def run(**kwargs: Any) -> heta_nb.EvaluationReport:
        return _toy(
            benchmark=_two_unit_toy(),
            kb=_flaky_kb,
            query_modes=["good", "poor", "other"],
            evaluators=["evidence_recall@3", "answer_contains", _odd_evaluator],
            **kwargs,
        )

    single = run()
    assert single.metadata["heta_nb"]["errors"] > 0 and math.isnan(single.score_summary["good.odd"])
    for count in (1, 3, 40):  # 40 shards: most get no case at all
        shards = [run(shard=(i, count)) for i in range(count)]
        assert count < 40 or any(not s.case_results for s in shards)
        _same_report(heta_nb.merge_reports(shards), single)
        _same_report(heta_nb.merge_reports(shards[::-1]), single)


@requires_heta
def test_merged_recipe_shards_have_every_units_kb_and_warnings(tmp_path: Path) -> None:
    """Recipe-built shards build only the units they have cases in (shard 0: one unit, shard 4: none).

    The merge used to refuse them (two single-KB manifests of different names), or keep
    only the first shard's KB manifest and warnings.
    """
    lighthouse = heta_nb.load_benchmark(FIXTURES, manifest={**MANIFEST, "name": "lighthouse_mini"})
    units = (
        BenchmarkRunUnit(unit_id="coast", document_ids=("lh1", "lh2", "lh6", "lh8"), case_ids=("c01", "c02", "c05")),
        BenchmarkRunUnit(unit_id="Harbour Towns", document_ids=("lh3", "lh4", "lh5", "lh9"), case_ids=("c03", "c06")),
    )
    bench = Benchmark(lighthouse.manifest, lighthouse.documents, lighthouse.cases, units=units)

    def run(name: str, **kwargs: Any) -> heta_nb.EvaluationReport:
        return heta_nb.evaluate(
            bench,
            recipe=heta_recipe(tmp_path / name),  # each shard on its own machine: its own stores
            knowledge_base_name="lh multi",
            query_modes=["full_text_search", "no_such_mode_zz"],  # a warning per unit
            evaluators=["evidence_recall@3"],
            top_k=5,
            report_id="whole",
            progress=False,
            workspace=tmp_path / "ws",
            **kwargs,
        )

    single = run("single")
    assert len(single.knowledge_base_manifest["knowledge_bases"]) == 2
    assert sum("not available in 'lh multi-" in w for w in single.metadata["heta_nb"]["warnings"]) == 2
    shards = [run(f"shard{i}", shard=(i, 5)) for i in range(5)]
    assert {r.unit_id for r in shards[0].case_results} == {"coast"} and not shards[4].case_results
    for order in (shards, shards[::-1], [shards[4], shards[1], shards[0], shards[3], shards[2]]):
        _same_report(heta_nb.merge_reports(order), single)


def test_merge_of_resumed_and_stored_shards_does_not_depend_on_their_order(tmp_path: Path) -> None:
    """``resumed`` used to be the first given shard's; now the total, whatever the order."""
    store = heta_nb.ReportStore(tmp_path)
    kwargs: dict[str, Any] = {"benchmark": toy_benchmark(60), "store": store, "kb": SlowKB(0)}
    single = _toy(report_id="single", **kwargs)
    run = heta_nb.start(
        toy_benchmark(60),
        kb=SlowKB(0.01),
        query_modes=["good", "poor"],
        store=store,
        report_id="whole",
        shard=(1, 3),
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=2,
    )
    deadline = time.monotonic() + 20
    while run.state.done < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
    run.cancel()
    assert run.result(timeout=20).metadata["heta_nb"]["status"] == "cancelled"
    resumed = _toy(shard=(1, 3), resume=True, **kwargs)
    count = resumed.metadata["heta_nb"]["resumed"]
    assert count >= 4
    _toy(shard=(0, 3), **kwargs)
    _toy(shard=(2, 3), **kwargs)
    stored = [store.load("toy kb", f"whole__shard-{i}-of-3") for i in range(3)]
    files = [tmp_path / store.key_for("toy kb", f"whole__shard-{i}-of-3") for i in range(3)]
    merges = [heta_nb.merge_reports(order) for order in (stored, stored[::-1], [files[1], files[2], files[0]])]
    assert [m.to_dict() for m in merges[1:]] == [merges[0].to_dict()] * 2
    merged = merges[0]
    assert merged.report_id == "whole"
    assert list(merged.metadata["heta_nb"]["merged_from"]) == [f"whole__shard-{i}-of-3" for i in range(3)]
    assert merged.metadata["heta_nb"]["resumed"] == count
    data = merged.to_dict()
    data["metadata"]["heta_nb"]["resumed"] = 0  # the single run was not resumed
    _same_report(heta_nb.EvaluationReport.from_dict(data), single)


# -- merge: bad inputs -----------------------------------------------------------------


@pytest.mark.hostile
def test_merge_refuses_bad_inputs_with_one_clear_message() -> None:
    shards = [_toy(shard=(i, 3)) for i in range(3)]
    for one in (shards[0], "/some/report.json", shards[0].to_dict()):
        with pytest.raises(TypeError, match=r"takes a list of shard reports, got one \w+; pass them all"):
            heta_nb.merge_reports(one)
    with pytest.raises(ReportFormatError, match=r"^merge_reports: reports\[1\]: <int>: cannot load a report"):
        heta_nb.merge_reports([shards[0], 42, shards[2]])
    with pytest.raises(ValueError, match="shard 0 of 3 is in both 'whole__shard-0-of-3' and 'whole__shard-0-of-3'"):
        heta_nb.merge_reports([shards[0], shards[1], shards[0], shards[2]])
    with pytest.raises(ValueError, match="different trace: False in 'whole__shard-0-of-3' vs True in"):
        heta_nb.merge_reports([shards[0], _toy(shard=(1, 3), trace=True), shards[2]])
    # a shard of another version of the benchmark (same name and version, 20 cases, not 12)
    longer = _toy(shard=(1, 3), benchmark=toy_benchmark(20))
    with pytest.raises(ValueError, match="no shard has case 12 of unit 'corpus', yet 'whole__shard-1-of-3' has later"):
        heta_nb.merge_reports([shards[0], longer, shards[2]])
    units = _toy(shard=(1, 3), benchmark=_two_unit_toy())
    with pytest.raises(ValueError, match="different run_units: "):
        heta_nb.merge_reports([shards[0], units, shards[2]])


def test_merge_refuses_shards_queried_with_other_options() -> None:
    shards = [run_toy(shard=(i, 3), query_options={"alpha": 0.5, "api_key": f"key {i}"}) for i in range(3)]
    merged = heta_nb.merge_reports(shards)  # another API key per shard is the same setting
    assert merged.metadata["heta_nb"]["query_options"] == {"alpha": 0.5, "api_key": REDACTED}
    odd = run_toy(shard=(1, 3), query_options={"alpha": 0.9})
    with pytest.raises(ValueError, match="different query_options"):
        heta_nb.merge_reports([shards[0], odd, shards[2]])
