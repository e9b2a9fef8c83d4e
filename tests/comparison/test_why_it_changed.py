"""Why a comparison changed: stage attribution on pairs with a known cause, slices with their
multiplicity (statsmodels' Holm and Benjamini-Hochberg), McNemar in the summary (statsmodels),
clustered comparisons (statsmodels' cluster-robust OLS) and plan().

The reports are real runs of the runner over function knowledge bases whose failures are put in
on purpose: retrieval broken for some cases (the evidence is gone, and the answer with it),
generation broken for others (the evidence is there, the answer is wrong), both (one of two
evidence documents lost and the answer wrong), and an evaluator that changes its score while the
output stays the same (noise).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from comparison.why_cases import N, bench, kb_with, run

import heta_nb
from heta_nb.comparison import compare, plan
from heta_nb.comparison.stages import stage_lines
from heta_nb.stats.power import cases_needed

sm = pytest.importorskip("statsmodels.api")
multitest = pytest.importorskip("statsmodels.stats.multitest")
contingency = pytest.importorskip("statsmodels.stats.contingency_tables")


@pytest.fixture(scope="module")
def runs() -> dict[str, heta_nb.EvaluationReport]:
    never = kb_with("", lambda i: False)
    return {
        "good": run("good", never),
        "retrieval": run("retrieval", kb_with("retrieval", lambda i: i % 3 == 0)),
        "generation": run("generation", kb_with("generation", lambda i: i % 3 == 1)),
        "both": run("both", kb_with("both", lambda i: i % 5 == 2)),
        "noise": run("noise", never, {f"c{i:02d}" for i in range(0, N, 7)}),
        "topic": run("topic", kb_with("generation", lambda i: i % 4 == 0)),  # every "tides" case broken
    }


def _compare(a: Any, b: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(a, b, **kwargs)


def _stages(c: Any, mode: str, **kwargs: Any) -> Any:
    table = c.stages(**kwargs)
    return table[table["mode"] == mode]


def test_retrieval_broken_on_purpose_is_retrieval(runs: dict[str, Any]) -> None:
    c = _compare(runs["good"], runs["retrieval"])
    answer = _stages(c, "answer")
    broken = {f"c{i:02d}" for i in range(N) if i % 3 == 0}
    assert set(answer["case_id"]) == broken and set(answer["stage"]) == {"retrieval"}
    assert set(answer["direction"]) == {"regressed"} and answer.attrs["evidence"] == "evidence_recall@5"
    search = _stages(c, "search")  # no answers: the evidence metric is the outcome
    assert set(search["case_id"]) == broken and set(search["stage"]) == {"retrieval"}
    assert set(search["outcome"]) == {"evidence_recall@5"}
    line = next(x for x in stage_lines(c.stages()) if x.startswith("retrieval/answer"))
    assert f"of {len(broken)} regressed cases, {len(broken)} lost their evidence in retrieval" in line
    counts = c.stage_counts()
    row = counts[(counts["mode"] == "answer") & (counts["direction"] == "regressed")].iloc[0]
    assert (row["retrieval"], row["generation"], row["both"], row["neither"], row["total"]) == (20, 0, 0, 0, 20)
    # the other way round: the baseline broken, the candidate finds the evidence again
    back = _stages(_compare(runs["retrieval"], runs["good"]), "answer")
    assert set(back["direction"]) == {"improved"} and set(back["stage"]) == {"retrieval"}


def test_generation_broken_on_purpose_is_generation(runs: dict[str, Any]) -> None:
    c = _compare(runs["good"], runs["generation"])
    answer = _stages(c, "answer")
    assert set(answer["case_id"]) == {f"c{i:02d}" for i in range(N) if i % 3 == 1}
    assert set(answer["stage"]) == {"generation"}
    assert (answer["evidence_baseline"] == answer["evidence_value"]).all()  # retrieval as good
    assert _stages(c, "search").empty  # retrieval did not change


def test_evidence_partly_lost_and_a_wrong_answer_is_both(runs: dict[str, Any]) -> None:
    answer = _stages(_compare(runs["good"], runs["both"]), "answer")
    assert set(answer["stage"]) == {"both"} and len(answer) == len([i for i in range(N) if i % 5 == 2])
    assert (answer["evidence_value"] == 0.5).all() and (answer["evidence_baseline"] == 1.0).all()


def test_a_score_that_moves_with_the_output_unchanged_is_neither(runs: dict[str, Any]) -> None:
    c = _compare(runs["good"], runs["noise"])
    answer = _stages(c, "answer", answer="flaky")
    assert set(answer["stage"]) == {"neither"} and set(answer["case_id"]) == {f"c{i:02d}" for i in range(0, N, 7)}
    assert _stages(c, "answer").empty  # answer_f1 did not move
    with pytest.raises(ValueError, match="not compared"):
        c.stages(answer="nope")


def test_slices_put_the_slice_that_moved_first_and_adjust_like_statsmodels(runs: dict[str, Any]) -> None:
    c = _compare(runs["good"], runs["topic"], benchmark=bench())
    frame = c.slices("labels.topic", metrics=["answer_f1"])
    answer = frame[frame["mode"] == "answer"]
    assert answer.iloc[0]["slice"] == "tides" and answer.iloc[0]["significant"]
    assert answer.iloc[0]["verdict"].startswith("worse") and not answer.iloc[1:]["significant"].any()
    assert set(answer["correction"]) == {"Holm over 4 slices of labels.topic"}
    raw = answer["p_value"].to_numpy()
    assert np.allclose(answer["p_adjusted"], multitest.multipletests(raw, method="holm")[1])
    bh = c.slices("labels.topic", metrics=["answer_f1"], correction="bh")
    bh = bh[bh["mode"] == "answer"].set_index("slice")
    expected = multitest.multipletests(bh["p_value"].to_numpy(), method="fdr_bh")[1]
    assert np.allclose(bh["p_adjusted"], expected)
    assert set(bh["correction"]) == {"Benjamini-Hochberg over 4 slices of labels.topic"}
    # each slice's test is the comparison's paired test on the slice's cases
    tides = [f"c{i:02d}" for i in range(N) if i % 4 == 0]
    deltas = c.cases_frame("answer_f1")
    mine = deltas[deltas["case_id"].isin(tides)]
    column = next(k for k in deltas.columns if k.startswith("delta ") and k.endswith("/answer"))
    assert answer.iloc[0]["mean_diff"] == pytest.approx(mine[column].mean())
    small = c.slices("labels.topic", metrics=["answer_f1"], min_cases=16)
    assert set(small["verdict"]) == {"too small to test (15 cases < 16)"} and not small["significant"].any()
    with pytest.raises(ValueError, match="benchmark"):
        _compare(runs["good"], runs["topic"]).slices()


def test_mcnemar_in_the_summary_is_statsmodels_exact(runs: dict[str, Any]) -> None:
    c = _compare(runs["good"], runs["generation"])
    rows = {(r["mode"], r["metric"]): r for r in c.summary_rows()}
    values = c.aligned_values("answer_contains")
    before, after = values["good/answer"], values["generation/answer"]
    table = [
        [np.sum((before == 1) & (after == 1)), np.sum((before == 1) & (after == 0))],
        [np.sum((before == 0) & (after == 1)), np.sum((before == 0) & (after == 0))],
    ]
    want = contingency.mcnemar(table, exact=True).pvalue
    assert rows[("answer", "answer_contains")]["mcnemar_p"] == pytest.approx(want, rel=1e-12)
    assert math.isnan(rows[("answer", "answer_f1")]["mcnemar_p"]) or set(np.unique(before)) <= {0.0, 1.0}
    assert "mcnemar_p" in c.summary_frame().columns


def test_clustered_comparison_is_statsmodels_cluster_robust(runs: dict[str, Any]) -> None:
    gold = bench()
    c = _compare(runs["good"], runs["both"], benchmark=gold, cluster_by="document", cluster_method="robust")
    row = next(r for r in c.summary_rows() if (r["mode"], r["metric"]) == ("answer", "answer_f1"))
    frame = c.cases_frame("answer_f1")
    column = next(k for k in frame.columns if k.startswith("delta ") and k.endswith("/answer"))
    groups = [int(case[1:]) // 2 for case in frame["case_id"]]  # the source document: two cases each
    fit = sm.OLS(frame[column].to_numpy(), np.ones(len(frame))).fit(
        cov_type="cluster", cov_kwds={"groups": np.asarray(groups)}, use_t=True
    )
    low, high = fit.conf_int(alpha=0.05)[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-9)
    assert row["p_value"] == pytest.approx(float(fit.pvalues[0]), rel=1e-6)
    assert row["clusters"] == N // 2 and row["design_effect"] > 0
    assert any("clustered by document (30 documents" in note for note in c.notes)
    assert "cluster-robust t over 30 documents" in c.test("both/answer", "answer_f1").method
    boot = _compare(runs["good"], runs["both"], benchmark=gold, cluster_by="document", cluster_method="bootstrap")
    brow = next(r for r in boot.summary_rows() if (r["mode"], r["metric"]) == ("answer", "answer_f1"))
    assert brow["clusters"] == 30 and brow["ci_low"] < brow["mean_diff"] < brow["ci_high"]
    mapping = {f"c{i:02d}": i // 2 for i in range(N)}  # the same clusters, given as a mapping
    again = _compare(runs["good"], runs["both"], cluster_by=mapping, cluster_method="robust")
    arow = next(r for r in again.summary_rows() if (r["mode"], r["metric"]) == ("answer", "answer_f1"))
    assert (arow["ci_low"], arow["ci_high"], arow["p_value"]) == (row["ci_low"], row["ci_high"], row["p_value"])
    with pytest.raises(ValueError, match="benchmark"):
        _compare(runs["good"], runs["both"], cluster_by="document")


def test_plan_from_a_comparison_and_from_a_report(runs: dict[str, Any]) -> None:
    c = _compare(runs["good"], runs["both"])
    row = next(r for r in c.summary_rows() if (r["mode"], r["metric"]) == ("answer", "answer_f1"))
    found = plan(c, "answer_f1", 0.05, system="both/answer")
    deltas = c.deltas("answer_f1", "both/answer")
    sd = float(np.std(deltas, ddof=1))
    assert found.cases == cases_needed(sd, 0.05, tests=row["family_size"]) and found.cases_now == row["n"]
    assert found.detectable_now == pytest.approx(row["min_detectable_difference"], rel=1e-12)
    assert "observed paired differences" in found.text
    one = plan(runs["good"], "answer_f1", 0.05)
    assert one.mode == "answer" and "uncorrelated" in one.basis  # the assumption is said
    with pytest.raises(ValueError, match="difference"):
        plan(c, "answer_f1", 0.0)


def test_the_explorer_filters_a_stage_in_the_kernel_and_the_export_links_to_it(runs: dict[str, Any], tmp_path) -> None:
    import html
    import re
    from urllib.parse import unquote

    c = _compare(runs["good"], runs["retrieval"])
    explorer = c.explore().choose_system("retrieval/answer")
    assert "stage = retrieval" in explorer.options()["labels"] and "stage = unchanged" in explorer.options()["labels"]
    explorer.filter(label="stage = retrieval")
    shown = set(explorer.selection["case_id"])
    table = c.stages()
    assert shown == set(table[(table["system"] == "retrieval/answer") & (table["stage"] == "retrieval")]["case_id"])
    explorer.filter(label="stage = generation")
    assert explorer.matched == 0
    page = heta_nb.to_html(c)
    links = {unquote(html.unescape(link)) for link in re.findall(r'href="(#system=[^"]+)"', page)}
    assert "#system=retrieval/answer&label=stage = retrieval" in links  # the count opens those cases
    assert "#system=retrieval/search&label=stage = retrieval" in links
    assert not re.search(r'href="#system', c._repr_html_())  # the notebook view has no explorer to link to
