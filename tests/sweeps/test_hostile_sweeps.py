"""Hostile sweeps: names that slug to one store folder (issue 35, item 1).

Every name a sweep turns into a store path (KB and recipe names, benchmark names, the
sweep's name across two sweeps) is checked with the store's slug before any work: two
names that would share one folder are refused, naming both, with no KB queried and
nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.sweeps import SweepError

pytestmark = pytest.mark.hostile

SETTINGS: dict[str, Any] = {"query_modes": ["good"], "evaluators": ["recall@1"], "top_k": 3}

PAIRS = [
    ("Run 1", "run_1"),
    ("a b", "a_b"),
    ("A", "a"),
    ("Évaluation", "évaluation"),
    ("run  1", "Run_1"),
    ("ΣΥΣΤΗΜΑ", "σύστημα".replace("ύ", "υ")),
]
"""Names Heta's slug (strip, lowercase, whitespace runs -> ``_``) maps to one folder."""


class CountingKB:
    """``exact_kb``, counting its calls (the sweeps here run in this process)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        self.calls += 1
        return exact_kb(query, mode=mode, top_k=top_k)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _refused(tmp_path: Path, counters: list[CountingKB], **arguments: Any) -> str:
    store = tmp_path / "store"
    before = _files(store)
    with pytest.raises(SweepError) as raised:
        heta_nb.sweep(store=store, executor="serial", progress=False, **arguments, **SETTINGS)
    assert [c.calls for c in counters] == [0] * len(counters)  # refused before any KB was queried
    assert _files(store) == before  # and nothing written
    message = str(raised.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("one", "two"), PAIRS)
def test_kb_names_that_share_a_store_folder_are_refused_before_any_work(tmp_path: Path, one: str, two: str) -> None:
    first, second = CountingKB(), CountingKB()
    message = _refused(tmp_path, [first, second], benchmarks={"toy": toy_benchmark(4)}, kbs={one: first, two: second})
    assert repr(one) in message and repr(two) in message and "_heta/knowledge_bases/" in message


@pytest.mark.parametrize(("one", "two"), [p for p in PAIRS if all(c.isascii() for c in p[0] + p[1])])
def test_a_recipe_and_a_kb_that_share_a_store_folder_are_refused(tmp_path: Path, one: str, two: str) -> None:
    made: list[str] = []
    counter = CountingKB()

    def factory(folder: Any) -> Any:  # pragma: no cover - never called: refused before any build
        made.append(str(folder))
        raise AssertionError("built")

    message = _refused(
        tmp_path, [counter], benchmarks={"toy": toy_benchmark(4)}, recipes={one: factory}, kbs={two: counter}
    )
    assert made == [] and repr(one) in message and repr(two) in message


@pytest.mark.parametrize(("one", "two"), [*PAIRS, ("a?b", "a b"), ("a/b", "a_b"), ("a b", "a\tb")])
def test_benchmark_names_that_share_a_report_folder_are_refused(tmp_path: Path, one: str, two: str) -> None:
    kb = CountingKB()
    message = _refused(tmp_path, [kb], benchmarks={one: toy_benchmark(4), two: toy_benchmark(6)}, kbs={"kb": kb})
    assert repr(one) in message and repr(two) in message and "/evaluations/" in message


def test_names_that_differ_only_by_surrounding_spaces_are_refused(tmp_path: Path) -> None:
    first, second = CountingKB(), CountingKB()
    message = _refused(tmp_path, [first, second], benchmarks={"toy": toy_benchmark(4)}, kbs={"a": first, " a ": second})
    assert "'a'" in message and "' a '" in message


@pytest.mark.parametrize(("one", "two"), [("Run 1", "run_1"), ("Sweep", "sweep"), ("a b", "A  B")])
def test_a_second_sweep_whose_name_slugs_like_the_first_is_refused(tmp_path: Path, one: str, two: str) -> None:
    kb = CountingKB()
    heta_nb.sweep(
        {"toy": toy_benchmark(4)}, kbs={"kb": kb}, name=one, store=tmp_path / "store", executor="serial",
        progress=False, **SETTINGS,
    )  # fmt: skip
    assert kb.calls == 4
    again = CountingKB()
    message = _refused(tmp_path, [again], benchmarks={"toy": toy_benchmark(4)}, kbs={"kb": again}, name=two)
    assert repr(one) in message and repr(two) in message


def test_a_second_sweep_whose_kb_name_slugs_like_the_first_is_refused(tmp_path: Path) -> None:
    kb = CountingKB()
    heta_nb.sweep(
        {"toy": toy_benchmark(4)}, kbs={"Run 1": kb}, store=tmp_path / "store", executor="serial", progress=False,
        **SETTINGS,
    )  # fmt: skip
    again = CountingKB()
    message = _refused(tmp_path, [again], benchmarks={"toy": toy_benchmark(4)}, kbs={"run_1": again})
    assert "'Run 1'" in message and "'run_1'" in message


def test_names_that_do_not_collide_still_run_and_each_keeps_its_own_report(tmp_path: Path) -> None:
    good, empty = CountingKB(), CountingKB()

    def nothing(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        empty.calls += 1
        return {"mode": mode, "results": [], "answer": None}

    board = heta_nb.sweep(
        {"x.y": toy_benchmark(4), "x_y": toy_benchmark(6)}, kbs={"Run 1": good, "run 2": nothing},
        store=tmp_path / "store", executor="serial", progress=False, **SETTINGS,
    )  # fmt: skip
    assert (good.calls, empty.calls) == (10, 10)
    stored = heta_nb.ReportStore(tmp_path / "store")
    assert stored.load("Run 1", "sweep--x.y").score_summary != stored.load("run 2", "sweep--x.y").score_summary
    assert stored.load("Run 1", "sweep--x_y").case_count == 6  # "." is kept by the slug: two folders
    assert len(list((tmp_path / "store").rglob("report.json"))) == 4
    assert len(board.rows()) > 0
