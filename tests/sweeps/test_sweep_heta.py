"""A sweep of real Heta recipes (the demo's, two chunk sizes) over two benchmarks made from the demo's cases."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from helpers import requires_heta

import heta_nb
from heta_nb.benchmark import Benchmark
from heta_nb.comparison import compare
from heta_nb.sweeps import SweepError, SweepState

pytestmark = [requires_heta, pytest.mark.slow]

SETTINGS = {"query_modes": ["extractive_answer"], "evaluators": ["recall@5", "ndcg@5", "answer_f1"], "top_k": 5}


def demo_benchmarks() -> dict[str, Benchmark]:
    """The demo benchmark split in two by hops (same documents, another version each)."""
    whole = heta_nb.demo.load_benchmark()

    def part(version: str, keep: Any) -> Benchmark:
        cases = [c for c in whole.cases if keep(int(c.labels.get("hops", 0)))]
        return Benchmark(
            whole.manifest.replace(version=version), whole.documents, cases, evaluators=whole.default_evaluators
        )

    return {"single-hop": part("1-single", lambda h: h <= 1), "multi-hop": part("1-multi", lambda h: h >= 2)}


def demo_factories() -> dict[str, Any]:
    from heta_nb.demo.heta_recipes import demo_recipe

    return {
        "small-chunks": functools.partial(demo_recipe, chunk_size=160, overlap=20),
        "large-chunks": functools.partial(demo_recipe, chunk_size=700, overlap=60),
    }


def test_real_recipes_on_two_benchmarks_in_worker_processes(tmp_path: Any) -> None:
    from heta_nb.demo.heta_recipes import demo_query_engines, demo_recipe

    benchmarks = demo_benchmarks()
    states: list[SweepState] = []
    board = heta_nb.sweep(
        benchmarks, demo_factories(), store=tmp_path / "store", executor="processes", max_workers=2,
        query_engines=demo_query_engines(), progress=states.append, **SETTINGS,
    )  # fmt: skip
    phases = [[p.phase for p in s.pairs] for s in states]
    assert phases[-1] == ["done"] * 4 and any("building" in p for p in phases) and any("running" in p for p in phases)
    assert board.recipes == ("small-chunks", "large-chunks") and board.benchmarks == ("single-hop", "multi-hop")

    # the same pair evaluated directly, in this process: the same scores, case by case
    direct = heta_nb.evaluate(
        benchmarks["multi-hop"], recipe=demo_recipe(tmp_path / "direct", 700, 60), store=None,
        query_engines=demo_query_engines(), knowledge_base_name="large-chunks", progress=False, **SETTINGS,
    )  # fmt: skip
    swept = board.report("large-chunks", "multi-hop")

    def scores(report: Any) -> list[Any]:
        return [(r.case_id, r.query_mode, [(s.name, s.value) for s in r.scores]) for r in report.case_results]

    assert scores(swept) == scores(direct) and len(swept.case_results) == len(benchmarks["multi-hop"].cases)
    assert swept.score_summary == direct.score_summary

    # the board's test of that pair is compare() on the two reports
    reference = compare(board.report("small-chunks", "multi-hop"), swept, names=["small-chunks", "large-chunks"],
                        correction="none")  # fmt: skip
    cell = board.cell("large-chunks", "multi-hop", "ndcg@5")
    assert cell.test.p_value == reference.test("large-chunks", "ndcg@5").p_value
    assert cell.test.mean_diff == reference.test("large-chunks", "ndcg@5").mean_diff

    # run again: every report is reused, nothing is built
    states.clear()
    again = heta_nb.sweep(
        benchmarks, demo_factories(), store=tmp_path / "store", query_engines=demo_query_engines(),
        progress=states.append, **SETTINGS,
    )  # fmt: skip
    assert [p.phase for p in states[-1].pairs] == ["reused"] * 4
    assert again.rows() == board.rows()


def test_one_recipe_object_on_two_benchmarks_is_refused(tmp_path: Any) -> None:
    from heta_nb.demo.heta_recipes import demo_recipe

    with pytest.raises(SweepError, match="one Heta recipe object, with one object store"):
        heta_nb.sweep(demo_benchmarks(), {"small": demo_recipe(tmp_path, 160, 20)}, store=None, **SETTINGS)
