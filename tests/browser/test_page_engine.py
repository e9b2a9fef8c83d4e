"""One explorer, two sources: the in-page engine (``assets/engine.js``, what a standalone page
runs in Chromium) gives the rows, cells, counts, pages, empty-state advice, errors and open
case the kernel explorer gives, filter for filter and sort for sort, on a report with errors,
skipped scores, n/a metrics and labels, and on a comparison of two systems against a baseline.

The engine runs in real Chromium over the JSON a page embeds; the kernel side is
:class:`heta_nb.explorer.Explorer` in this process. Texts are short (the page searches the
texts it holds: the first 600 characters of each).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import replace
from typing import Any

import pytest

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.explorer import Explorer
from heta_nb.explorer.case_data import OPEN_CASE_LIMITS
from heta_nb.explorer.page import comparison_page_data, report_page_data
from heta_nb.explorer.pairs import PairTable
from heta_nb.explorer.widget import ASSETS
from heta_nb.testing import synthetic_report, synthetic_report_dict

pytestmark = pytest.mark.browser

_STATE = ("search", "mode", "status", "label", "metric", "low", "high", "quick", "sort", "descending", "page", "system")


def _engine_source() -> str:
    source = (ASSETS / "engine.js").read_text(encoding="utf-8")
    source = re.sub(r"^export ", "", source, flags=re.MULTILINE)
    return source + "\nwindow.HetaPageModel = PageModel;\n"


@pytest.fixture(scope="module")
def engine_page(browser):
    context = browser.new_context()
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.set_content("<!DOCTYPE html><html><body></body></html>")
    tab.add_script_tag(content=_engine_source())
    tab.errors = errors
    yield tab
    context.close()


def _report_with_infinities() -> heta_nb.EvaluationReport:
    data = synthetic_report_dict(120, seed=11, error_rate=0.08)
    data["case_results"][3]["latency_ms"] = math.inf  # JSON cannot hold it: the page writes "inf"
    data["case_results"][9]["latency_ms"] = math.nan
    for result in data["case_results"][20:40]:  # a score of -inf sorts first, not with the missing
        for score in result["scores"]:
            if score["name"] == "beir_ndcg@5" and isinstance(score["value"], float):
                score["value"] = -math.inf
                break
    return heta_nb.load_report(data)


def _benchmark(report: Any) -> Benchmark:
    cases = []
    for i, case_id in enumerate(dict.fromkeys(r.case_id for r in report.case_results)):
        labels: dict[str, Any] = {"difficulty": "hard" if i % 3 == 0 else "easy"}
        if i % 5 == 0:
            labels["topic"] = ["sea", "light"]
        cases.append(BenchmarkCase(case_id=case_id, query=f"q {i}", labels=labels))
    return Benchmark({"name": "synthetic", "version": "1", "split": "test", "task_type": "qa"}, (), cases)


def _page_side(tab: Any, payload: dict[str, Any], states: list[dict[str, Any]], opens: list[int]) -> list[Any]:
    """Each state set on a fresh PageModel: its rows, info and (for the open positions) the open case."""
    return tab.evaluate(
        """([payload, states, opens]) => {
          const out = [];
          for (const state of states) {
            const model = new window.HetaPageModel(payload, { hash: false });
            for (const [name, value] of Object.entries(state)) model.set(name, value);
            model.save_changes();
            const entry = { rows: model.get("rows"), info: model.get("info"), cases: [] };
            for (const at of opens) {
              const rows = model.get("rows");
              if (at >= rows.length) continue;
              model.send({ action: "open", row: rows[at].row });
              entry.cases.push(model.get("case"));
              entry.caseText = model.get("info").case_text;
            }
            out.push(entry);
          }
          return out;
        }""",
        [payload, states, opens],
    )


def _kernel_side(explorer: Explorer, state: dict[str, Any], opens: list[int]) -> dict[str, Any]:
    explorer.close()
    explorer.reset()
    if isinstance(explorer.table, PairTable):
        explorer.choose_system(state.get("system") or None)
    filters = {k: v for k, v in state.items() if k not in ("sort", "descending", "page", "system")}
    error = ""
    try:
        explorer.filter(**filters)
    except ValueError as exc:
        error = str(exc)
    if state.get("sort"):
        explorer.sort(state["sort"], descending=bool(state.get("descending")))
    if state.get("page"):
        explorer.go(state["page"])
    entry = {"rows": explorer.page_rows(), "info": explorer.info(), "error": error, "cases": []}
    for at in opens:
        rows = entry["rows"]
        if at < len(rows):
            explorer.open(explorer.page * explorer.page_size + at)
            entry["cases"].append(explorer.case_json())
            entry["caseText"] = explorer.info()["case_text"]
    return entry


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, allow_nan=False))


def _assert_same(
    kernel: dict[str, Any], page: dict[str, Any], state: dict[str, Any], *, pair_results: int | None
) -> bool:
    """Both sides read alike; True when both refused the state (a filter error)."""
    where = f"state {state}"
    info_k, info_p = kernel["info"], page["info"]
    if kernel["error"]:  # the kernel refused the filter: the page says the same (its list of choices aside)
        assert info_p["error"].split(" is not one of")[0] == kernel["error"].split(" is not one of")[0], where
        return True
    assert info_p["error"] == "", where
    assert [r["row"] for r in page["rows"]] == [r["row"] for r in kernel["rows"]], where
    assert _plain([r["cells"] for r in page["rows"]]) == _plain(
        [[list(c) for c in r["cells"]] for r in kernel["rows"]]
    ), where
    for key in ("matched", "total", "page", "pages", "count_text", "page_text", "empty"):
        assert info_p[key] == info_k[key], f"{where}: {key} {info_p[key]!r} != {info_k[key]!r}"
    assert len(page["cases"]) == len(kernel["cases"]), where
    for mine, theirs in zip(page["cases"], kernel["cases"]):
        mine, theirs = _plain(mine), _plain(theirs)  # (copies: the page's results may share objects)
        if pair_results is not None:  # a page keeps fewer chunks per side of a pair (so cites more texts)
            for side, page_side in zip(theirs["data"]["s"], mine["data"]["s"]):
                if side[1] is not None and "r" in side[1]:
                    assert page_side[1]["r"] == side[1]["r"][:pair_results], where
                    assert [c[:2] for c in page_side[1].pop("c")] == [c[:2] for c in side[1].pop("c")], where
                    side[1]["r"] = page_side[1]["r"]
        assert mine == theirs, f"{where}: {_first_difference(mine, theirs)}"
    assert page.get("caseText") == kernel.get("caseText"), where
    return False


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                return _first_difference(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for k, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{k}]")
    return f"{path}: page {a!r} != kernel {b!r}"


REPORT_STATES: list[dict[str, Any]] = [
    {},
    {"search": "q0001"},
    {"search": "Timeout"},
    {"search": '"q00 01"'},  # a phrase that is nowhere: the advice
    {"mode": "extractive_answer"},
    {"status": "error"},
    {"status": "skipped", "metric": "evidence_recall@5"},
    {"status": "n/a", "metric": "beir_ndcg@5"},
    {"status": "ok", "metric": "answer_contains"},
    {"metric": "beir_ndcg@5", "low": "0.2"},
    {"metric": "beir_ndcg@5", "low": "0.2", "high": "0.6", "mode": "extractive_answer"},
    {"metric": "evidence_recall@5", "high": "0.1", "search": "q0000"},
    {"label": "difficulty=hard"},
    {"label": "topic=sea", "status": "error"},
    {"page": 2},
    {"page": 99},
    {"search": "zzzz-nothing", "mode": "extractive_answer"},
    {"mode": "no-such-mode"},
]


def test_the_page_engine_reads_a_report_as_the_kernel_does(engine_page) -> None:
    report = _report_with_infinities()
    benchmark = _benchmark(report)
    explorer = Explorer(report, benchmark=benchmark)
    payload = _plain(report_page_data(report, OPEN_CASE_LIMITS, benchmark))
    # every column sorts both ways
    states = list(REPORT_STATES)
    for column in explorer.columns:
        states.append({"sort": column.key})
        states.append({"sort": column.key, "descending": True, "mode": "extractive_answer"})
    opens = [0, 7]
    page = _page_side(engine_page, payload, states, opens)
    refused = [
        state
        for state, mine in zip(states, page)
        if _assert_same(_kernel_side(explorer, state, opens), mine, state, pair_results=None)
    ]
    assert refused == [{"mode": "no-such-mode"}]
    assert engine_page.errors == []


def test_the_page_engine_reads_a_comparison_as_the_kernel_does(engine_page) -> None:
    base = synthetic_report(150, seed=1, report_id="base", error_rate=0.05)
    one = synthetic_report(150, seed=2, report_id="one", error_rate=0.05)
    two = synthetic_report(140, seed=3, report_id="two", error_rate=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(base, one, two, modes="extractive_answer")
    explorer = Explorer(comparison)
    payload = _plain(comparison_page_data(comparison, OPEN_CASE_LIMITS))
    states: list[dict[str, Any]] = [
        {},
        {"quick": "regressions"},
        {"quick": "improvements", "metric": "evidence_recall@5"},
        {"quick": "differing"},
        {"quick": "regressions", "system": "two"},
        {"status": "n/a", "system": "two"},
        {"metric": "beir_ndcg@5", "low": "-0.2", "high": "0.2"},
        {"search": "q0001"},
        {"sort": "delta beir_ndcg@5", "descending": True},
        {"sort": "query"},
        {"sort": "status", "system": "two"},
        {"page": 1},
    ]
    page = _page_side(engine_page, payload, states, [0, 3])
    for state, mine in zip(states, page):
        assert not _assert_same(_kernel_side(explorer, state, [0, 3]), mine, state, pair_results=3)
    assert engine_page.errors == []


def test_an_unknown_filter_reads_as_an_error_in_both(engine_page) -> None:
    report = synthetic_report(30, seed=4)
    payload = _plain(report_page_data(report, replace(OPEN_CASE_LIMITS)))
    (page,) = _page_side(engine_page, payload, [{"mode": "nope"}], [])
    assert page["info"]["error"].startswith("mode: 'nope' is not one of")
    explorer = Explorer(report)
    with pytest.raises(ValueError, match=r"^mode: 'nope' is not one of"):
        explorer.filter(mode="nope")
    (page,) = _page_side(engine_page, payload, [{"metric": "beir_ndcg@5", "low": "2", "high": "1"}], [])
    with pytest.raises(ValueError) as caught:
        explorer.filter(mode=None, metric="beir_ndcg@5", low=2, high=1)
    assert page["info"]["error"] == str(caught.value) == "low/high: the range is empty (2 > 1)"


def test_the_judges_disagree_filter_and_judge_blocks_read_alike(engine_page) -> None:
    from explorer.judge_cases import case, context_precision, errored, faithfulness, judge_report, repeated

    from heta_nb.explorer.judge_data import UNSTABLE

    results = []
    for i in range(60):
        scores = [repeated([1.0, 0.5, 0.5], 0.666667)] if i % 7 == 3 else [faithfulness()]
        scores.append(errored() if i % 11 == 5 else context_precision(agreement=0.5 if i % 13 == 4 else 1.0))
        results.append(case(f"q{i:04d}", scores, answer=None if i % 17 == 9 else "The capital is City0."))
    report = judge_report(results)
    explorer = Explorer(report)
    assert explorer.options()["quick"] == [UNSTABLE]
    payload = _plain(report_page_data(report, OPEN_CASE_LIMITS))
    states: list[dict[str, Any]] = [
        {},
        {"quick": UNSTABLE},
        {"quick": UNSTABLE, "search": "q001"},
        {"quick": UNSTABLE, "status": "error"},
        {"quick": UNSTABLE, "sort": "faithfulness", "descending": True},
        {"quick": UNSTABLE, "search": "zzzz"},  # nothing: the advice names the quick filter
        {"quick": "regressions"},  # a comparison's filter: refused by both
    ]
    opens = [0, 2]
    page = _page_side(engine_page, payload, states, opens)
    refused = [
        state
        for state, mine in zip(states, page)
        if _assert_same(_kernel_side(explorer, state, opens), mine, state, pair_results=None)
    ]
    assert refused == [{"quick": "regressions"}]
    assert any("j" in c["data"] for entry in page for c in entry["cases"])
    assert engine_page.errors == []


REVIEW_STEPS: list[dict[str, Any]] = [
    {"action": "review_verdict", "case_id": "?", "verdict": "correct", "note": "fine"},  # not started: refused
    {"action": "review_start", "reviewer": "../ana"},  # not a file name: refused
    {"action": "review_start", "reviewer": " ana ", "blind": False},
    {"action": "review_verdict", "verdict": "correct", "note": "  right  "},
    {"action": "review_verdict", "verdict": "partly"},
    {"action": "next"},  # j: a case outside the sample (or not): still reviewable
    {"action": "review_verdict", "verdict": "wrong", "advance": False},
    {"action": "review_verdict", "verdict": "great"},
    {"action": "review_verdict", "verdict": 1.5},
    {"action": "review_verdict", "verdict": "skip", "note": 7},
    {"action": "review_verdict", "case_id": "no-such-case", "verdict": "skip"},
    {"set": {"search": "zzzz nothing"}},
    {"action": "review_next"},  # the filter hiding the next case is cleared
    {"set": {"metric": "beir_ndcg@5", "low": "0.3"}},
    {"action": "review_start", "reviewer": "ana", "blind": True},  # blind: the score filter goes
    {"action": "review_verdict", "verdict": "skip", "note": "no idea"},
    {"action": "previous"},
    {"action": "review_verdict", "verdict": 0.25},
    {"action": "review_stop"},
    {"action": "review_bogus"},
]


def _review_steps_on_page(tab: Any, payload: dict[str, Any]) -> list[Any]:
    return tab.evaluate(
        """([payload, steps]) => {
          const model = new window.HetaPageModel(payload, { hash: false });
          const out = [];
          for (const step of steps) {
            if (step.set) {
              for (const [name, value] of Object.entries(step.set)) model.set(name, value);
              model.save_changes();
            } else {
              const c = model.get("case");
              const message = Object.assign({}, step);
              if (message.case_id === undefined && c) { message.case_id = c.id; message.mode = c.mode; }
              else if (message.case_id !== undefined && message.mode === undefined) message.mode = c ? c.mode : "";
              model.send(message);
            }
            out.push({ review: model.get("review"), info: model.get("info"), columns: model.get("columns"),
                       rows: model.get("rows"), case: model.get("case"), options: model.get("options") });
          }
          return out;
        }""",
        [payload, REVIEW_STEPS],
    )


def _review_steps_in_kernel(explorer: Explorer) -> list[Any]:
    widget = explorer.widget
    out = []
    for step in REVIEW_STEPS:
        if "set" in step:
            for name, value in step["set"].items():
                setattr(widget, name, value)
        else:
            message = dict(step)
            case = widget.case
            if "case_id" not in message and case:
                message.update(case_id=case["id"], mode=case["mode"])
            elif "case_id" in message and "mode" not in message:
                message["mode"] = case["mode"] if case else ""
            widget._handle_custom_msg(message, [])
        out.append(
            {
                "review": widget.review,
                "info": widget.info,
                "columns": widget.columns,
                "rows": widget.rows,
                "case": widget.case,
                "options": widget.options,
            }
        )
    return out


def test_review_mode_reads_alike_in_the_page_and_the_kernel(engine_page, tmp_path) -> None:
    """The same review steps (start, verdicts, bad ones, next, blind, stop) give the same review state,
    progress, rows, columns, counts and open case (blind: no score in either) from both sources."""
    from heta_nb.reviews import review_log

    report = synthetic_report(60, seed=12, error_rate=0.05, report_id="parity")
    benchmark = _benchmark(report)
    payload = _plain(report_page_data(report, OPEN_CASE_LIMITS, benchmark))
    review_log(report, path=tmp_path)
    kernel = _plain(_review_steps_in_kernel(Explorer(report, benchmark=benchmark)))
    page = _review_steps_on_page(engine_page, payload)
    assert len(kernel) == len(page) == len(REVIEW_STEPS)
    for step, mine, theirs in zip(REVIEW_STEPS, page, kernel):
        where = f"after {step}"
        for side in (mine, theirs):
            side["review"].pop("where", None)
            side["review"].pop("download", None)
            side["options"].pop("reports", None)
            side["options"].pop("label_note", None)
        assert mine["review"] == theirs["review"], f"{where}: {_first_difference(mine['review'], theirs['review'])}"
        for key in ("info", "columns", "rows", "case"):
            if key == "info":
                assert {k: mine[key][k] for k in ("count_text", "matched", "case_text", "error")} == {
                    k: theirs[key][k] for k in ("count_text", "matched", "case_text", "error")
                }, where
            else:
                assert mine[key] == theirs[key], f"{where}: {key} {_first_difference(mine[key], theirs[key])}"
        for key in ("statuses", "metrics", "quick"):
            assert mine["options"][key] == theirs["options"][key], f"{where}: options {key}"
    blind = kernel[REVIEW_STEPS.index({"action": "review_start", "reviewer": "ana", "blind": True})]
    assert blind["review"]["blind"] is True and "s" not in blind["case"]["data"]
    assert [c["key"] for c in blind["columns"]] == ["row", "case_id", "query_mode", "query", "answer"]
    assert kernel[-2]["review"]["on"] is False and kernel[-1]["review"]["error"].startswith("review: unknown action")
    stored = review_log(report, path=tmp_path).history()
    assert [r.verdict for r in stored] == ["correct", "partly", "wrong", "skip", 0.25]
    assert stored[0].note == "right" and stored[3].blind is True
    assert engine_page.errors == []
