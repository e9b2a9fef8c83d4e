"""``heta_nb.sweep``: every pair run and stored, finished reports reused, interrupted ones resumed, failures apart."""

from __future__ import annotations

import io
import time
import warnings
from typing import Any

import pytest
from runner_support import toy_benchmark

import heta_nb
from heta_nb.store import ReportStore
from heta_nb.sweeps import SweepError, SweepState, SweepWarning
from heta_nb.sweeps.plan import plan_pairs

SETTINGS = {"query_modes": ["good", "poor"], "evaluators": ["recall@1", "ndcg@3", "answer_contains"], "top_k": 3}


@pytest.fixture(autouse=True)
def _kit(kit: Any) -> None:
    global KBS, first_kb, toy_pair
    KBS, first_kb, toy_pair = kit.KBS, kit.first_kb, kit.toy_pair


KBS: Any = None
first_kb: Any = None
toy_pair: Any = None


def _sweep(store: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("kbs", KBS)
    kwargs.setdefault("executor", "threads")
    kwargs.setdefault("progress", False)
    return heta_nb.sweep(kwargs.pop("benchmarks", None) or toy_pair(), store=store, **{**SETTINGS, **kwargs})


def test_every_pair_is_stored_under_its_recipe_and_benchmark(toy_board_reports: Any) -> None:
    store, board = toy_board_reports
    listing = ReportStore(store).list()
    assert sorted(zip(listing["kb"], listing["report_id"])) == sorted(
        (kb, f"sweep--{b}") for kb in KBS for b in ("toy-a", "toy-b")
    )
    report = board.report("random", "toy-b")
    assert report.metadata["sweep"]["recipe"] == "random" and report.metadata["sweep"]["benchmark"] == "toy-b"
    assert report.knowledge_base_name == "random" and report.case_count == 24 * 2
    assert board.failures == [] and board.warnings == []


def test_a_rerun_reuses_every_finished_report_without_running(toy_board_reports: Any) -> None:
    store, board = toy_board_reports
    states: list[SweepState] = []
    again = _sweep(store, progress=states.append, executor="processes")
    assert {p.phase for p in states[-1].pairs} == {"reused"}
    assert states[-1].executor == "one after another, in this process"  # nothing ran: no pool started
    assert again.rows() == board.rows()


def test_a_stored_report_with_other_settings_is_refused_before_any_work(toy_board_reports: Any) -> None:
    store, _ = toy_board_reports
    before = ReportStore(store).list()["finished_at"].tolist()
    with pytest.raises(
        SweepError, match=r"first × toy-a: the store already holds report 'sweep--toy-a' made with top_k=3"
    ):
        _sweep(store, top_k=2)
    with pytest.raises(SweepError, match="evaluators="):
        _sweep(store, evaluators=["recall@1"])
    assert ReportStore(store).list()["finished_at"].tolist() == before


def test_rerun_replaces_and_another_name_keeps_both(tmp_path: Any) -> None:
    benchmarks = {"toy": toy_benchmark(12)}
    first = _sweep(tmp_path, benchmarks=benchmarks, kbs={"first": first_kb})
    states: list[SweepState] = []
    again = _sweep(tmp_path, benchmarks=benchmarks, kbs={"first": first_kb}, rerun=True, progress=states.append)
    assert {p.phase for p in states[-1].pairs} == {"done"}
    assert again.report("first", "toy").finished_at >= first.report("first", "toy").finished_at
    _sweep(tmp_path, benchmarks=benchmarks, kbs={"first": first_kb}, name="top2", top_k=2)
    assert sorted(ReportStore(tmp_path).list()["report_id"]) == ["sweep--toy", "top2--toy"]


def test_an_interrupted_pair_resumes_from_its_checkpoint(tmp_path: Any) -> None:
    from runner_support import SlowKB

    benchmark = toy_benchmark(40)
    run = heta_nb.start(
        benchmark, kb=SlowKB(delay=0.02), store=tmp_path, report_id="sweep--toy", knowledge_base_name="slow",
        progress=False, concurrency=2, metadata={"sweep": {"name": "sweep", "recipe": "slow", "benchmark": "toy"}},
        **SETTINGS,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while run.state.done < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    run.cancel()
    partial = run.result(timeout=20)
    assert partial.metadata["heta_nb"]["status"] == "cancelled"
    specs = plan_pairs(
        {"toy": benchmark}, None, {"slow": SlowKB(delay=0.0)}, name="sweep", store=tmp_path, rerun=False,
        settings=SETTINGS, folder_of=lambda r, b: "",
    )  # fmt: skip
    assert [s.start for s in specs] == ["resume"]
    board = _sweep(tmp_path, benchmarks={"toy": benchmark}, kbs={"slow": SlowKB(delay=0.0)})
    report = board.report("slow", "toy")
    assert report.metadata["heta_nb"]["status"] == "complete"
    assert report.metadata["heta_nb"]["resumed"] == len(partial.case_results) > 0
    assert report.case_count == 80


def test_processes_give_the_same_board_as_threads(toy_board_reports: Any, tmp_path: Any) -> None:
    _, board = toy_board_reports
    states: list[SweepState] = []
    again = _sweep(tmp_path, executor="processes", max_workers=2, progress=states.append)
    assert states[-1].executor == "2 processes"
    assert {p.phase for p in states[-1].pairs} == {"done"}
    assert [p.done for p in states[-1].pairs] == [60] * 3 + [48] * 3
    assert again.rows() == board.rows()


def broken_factory(folder: Any) -> Any:
    raise RuntimeError("this recipe cannot be built")


def failing_kb(query: str) -> Any:
    raise ConnectionError("backend down")


def test_a_failed_pair_is_reported_and_the_others_finish(tmp_path: Any) -> None:
    with pytest.warns(SweepWarning, match=r"broken × toy: failed: RuntimeError: this recipe cannot be built"):
        board = heta_nb.sweep(
            {"toy": toy_benchmark(8)}, {"broken": broken_factory}, kbs={"first": first_kb, "down": failing_kb},
            store=tmp_path, executor="serial", progress=False, **SETTINGS,
        )  # fmt: skip
    assert board.failures == [
        {
            "recipe": "broken",
            "benchmark": "toy",
            "phase": "failed",
            "error": "RuntimeError: this recipe cannot be built",
        }
    ]
    assert board.recipes == ("first", "down")  # a KB whose every query failed still has its report
    assert board.report("down", "toy").error_count == 16
    with pytest.raises(SweepError, match="no pair finished: broken × toy: RuntimeError"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SweepWarning)
            heta_nb.sweep({"toy": toy_benchmark(8)}, {"broken": broken_factory}, store=None, progress=False)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"top_kk": 3}, "unknown setting 'top_kk'; did you mean 'top_k'?"),
        ({"report_id": "x"}, "sweep() sets report_id= for each pair itself"),
        ({"metadata": {"sweep": 1}}, "metadata key 'sweep' is written by sweep()"),
        ({"executor": "gpu"}, "executor must be one of 'auto', 'serial', 'threads', 'processes', 'dask'"),
        ({"max_workers": 0}, "max_workers must be an integer >= 1"),
        ({"name": " "}, "name must be a non-blank string"),
        ({"top_k": 0}, "top_k must be an integer >= 1"),
    ],
)
def test_bad_settings_are_refused_before_any_work(tmp_path: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        heta_nb.sweep({"toy": toy_benchmark(4)}, kbs={"first": first_kb}, store=tmp_path, progress=False, **kwargs)
    assert not list(tmp_path.iterdir())


def test_names_and_recipes_are_checked() -> None:
    with pytest.raises(SweepError, match="recipes must be a dict of name -> recipe"):
        heta_nb.sweep(toy_benchmark(4), [first_kb], store=None)
    with pytest.raises(SweepError, match="nothing to evaluate"):
        heta_nb.sweep(toy_benchmark(4), store=None)
    with pytest.raises(SweepError, match="'a' names both a recipe and a KB"):
        heta_nb.sweep(toy_benchmark(4), {"a": broken_factory}, kbs={"a": first_kb}, store=None)
    with pytest.raises(SweepError, match="recipe name 'a/b' names its knowledge base"):
        heta_nb.sweep(toy_benchmark(4), {"a/b": broken_factory}, store=None)
    with pytest.raises(SweepError, match=r"recipes\['x'\] is neither a Heta KnowledgeRecipe nor a factory"):
        heta_nb.sweep(toy_benchmark(4), {"x": 3}, store=None)


def test_benchmarks_given_as_a_list_are_named_after_their_manifests(tmp_path: Any) -> None:
    pair = toy_pair()
    board = _sweep(None, benchmarks=[pair["toy-a"], pair["toy-b"]], kbs={"first": first_kb})
    assert board.benchmarks == ("toy:1:test", "toy:2:test")
    one = _sweep(None, benchmarks=pair["toy-a"], kbs={"first": first_kb})
    assert one.benchmarks == ("toy",)


def test_console_lines_follow_the_pairs(tmp_path: Any) -> None:
    from heta_nb.sweeps import SweepConsole

    stream = io.StringIO()
    _sweep(tmp_path, benchmarks={"toy": toy_benchmark(6)}, kbs={"first": first_kb}, progress=SweepConsole(stream))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[1/1] first × toy: running"
    assert lines[-2] == "[1/1] first × toy: done in 0s (12/12 results, 0 errors)"
    assert lines[-1].startswith("sweep: 1/1 finished · 1 thread · elapsed ")


@pytest.mark.filterwarnings("ignore::heta_nb.sweeps.SweepWarning")
def test_ctrl_c_stops_the_sweep_keeps_what_finished_and_a_rerun_resumes(tmp_path: Any) -> None:
    import signal

    from runner_support import SlowKB

    interrupted = []

    def progress(state: SweepState) -> None:
        slow = state.pairs[1]
        if slow.phase == "running" and slow.done >= 1 and not interrupted:
            interrupted.append(slow.done)
            signal.raise_signal(signal.SIGINT)  # what Ctrl-C (or the kernel's stop button) does

    kbs = {"first": first_kb, "slow": SlowKB(delay=0.1), "last": first_kb}
    with pytest.warns(SweepWarning, match="the sweep was interrupted: 2 pair"):
        board = _sweep(tmp_path, benchmarks={"toy": toy_benchmark(30)}, kbs=kbs, executor="serial", progress=progress)
    assert board.recipes == ("first",)
    assert [(f["recipe"], f["phase"]) for f in board.failures] == [("slow", "cancelled"), ("last", "cancelled")]
    partial = ReportStore(tmp_path).load("slow", "sweep--toy")
    assert partial.metadata["heta_nb"]["status"] == "cancelled" and 0 < partial.case_count < 60
    states: list[SweepState] = []
    again = _sweep(tmp_path, benchmarks={"toy": toy_benchmark(30)}, kbs=kbs, executor="serial", progress=states.append)
    assert [p.phase for p in states[-1].pairs] == ["reused", "done", "done"]
    assert again.report("slow", "toy").metadata["heta_nb"]["resumed"] == partial.case_count
