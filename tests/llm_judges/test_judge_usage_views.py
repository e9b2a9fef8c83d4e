"""The judges' calls, tokens and cost read the same live (the widget's state, from the events) and
in the finished report (``judge_totals``): one computation."""

from __future__ import annotations

from typing import Any

from llm_judges.conftest import capital_kb, capitals

import heta_nb
from heta_nb.llm_judges import JudgeModel
from heta_nb.llm_judges.standin import standin_answer
from heta_nb.llm_judges.totals import judge_totals
from heta_nb.render import render_widget_parts
from heta_nb.runner.state import RunState, replay


def test_the_widget_counts_judge_usage_as_cases_finish_and_ends_on_the_reports_totals() -> None:
    events: list[Any] = []
    seen: list[int] = []

    def model(prompt: str, system: str) -> dict[str, Any]:
        return {"text": standin_answer(system, prompt), "tokens_in": 120, "tokens_out": 7}

    def on_event(event: Any) -> None:
        events.append(event)
        if event.kind == "cases_finished":
            seen.append(replay(events, RunState()).judge_totals["answer_relevance"].calls)

    report = heta_nb.evaluate(
        capitals(20),
        kb=capital_kb,
        evaluators=["answer_relevance", "answer_f1"],
        judge_model=JudgeModel(model, name="priced-model"),
        judge_prices={"priced-model": (2.0, 4.0)},
        judge_cache=None,
        store=None,
        progress=False,
        on_event=on_event,
    )
    state = replay(events, RunState())
    assert state.judges == ("answer_relevance",)
    live, final = state.judge_totals["answer_relevance"], judge_totals(report)["answer_relevance"]
    assert live.record() == final.record()
    assert (final.calls, final.tokens_in, final.tokens_out) == (20, 2400, 140)
    assert final.cost_text == "$0.0054"  # 2400 * 2e-6 + 140 * 4e-6
    assert seen == sorted(seen) and seen[-1] == 20  # it accrued as the cases finished
    html = "".join(render_widget_parts(state).values())
    assert "judge <code>answer_relevance</code> (priced-model): 20 calls" in html and "cost $0.0054" in html
