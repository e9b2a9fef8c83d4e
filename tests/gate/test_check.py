"""heta_nb.check: verdicts on report pairs with a known truth, thresholds, floors, flipped cases and errors."""

from __future__ import annotations

import copy
import math

import gate_pairs as gp
import pandas as pd
import pytest

import heta_nb
from heta_nb.gate import ROW_COLUMNS, CheckResult
from heta_nb.stats.paired import holm
from heta_nb.testing import assert_no_regression


@pytest.fixture(scope="module")
def base() -> dict:
    return gp.base_dict()


@pytest.fixture(scope="module")
def base_report(base: dict) -> heta_nb.EvaluationReport:
    return gp.as_report(copy.deepcopy(base))


def test_a_true_regression_fails_every_row_and_lists_the_cases_that_broke(base: dict, base_report) -> None:
    result = heta_nb.check(gp.as_report(gp.degraded(base)), base_report)
    assert result.verdict == "regression" and result.exit_code == 1 and not result.ok
    assert {r.verdict for r in result.rows} == {"regression"}
    assert len(result.rows) == 6  # 2 modes x 3 numeric metrics
    for row in result.rows:
        assert row.diff < 0 and row.ci_high < 0 and row.p_adjusted < 0.05
        assert "more than the 0 tolerated" in row.reason
    broke = [c for c in result.flips if c.kind == "broke"]
    assert broke and not [c for c in result.flips if c.kind == "fixed"]
    assert all(c.baseline is True or c.baseline > 0 for c in broke)  # passed, then failed
    assert all(c.new is False or c.new == 0 for c in broke)
    assert result.headline.startswith("FAILED: regression in 6 of 6 checks")
    assert repr(result).splitlines()[0] == f"heta-nb check: {result.headline}"


def test_a_true_improvement_passes(base: dict, base_report) -> None:
    result = heta_nb.check(base_report, gp.as_report(gp.degraded(base)))
    assert result.verdict == "improvement" and result.exit_code == 0 and result.ok
    assert {r.verdict for r in result.rows} == {"improvement"}
    assert all(c.kind == "fixed" for c in result.flips) and result.flips
    assert result.assert_ok() is result


def test_noise_is_underpowered_at_no_tolerance_and_no_change_at_a_visible_tolerance(base: dict, base_report) -> None:
    """Noise passes either way; with no drop tolerated the benchmark cannot rule out a smaller one
    (underpowered), and with a tolerance larger than what it can see, "no detectable change" holds."""
    noisy = gp.as_report(gp.jittered(base))
    result = heta_nb.check(noisy, base_report)
    assert result.verdict == "underpowered" and result.exit_code == 0 and result.ok
    assert {r.verdict for r in result.rows} == {"underpowered"}
    comparison = result.comparisons["extractive_answer"]
    for row in (r for r in result.rows if r.mode == "extractive_answer"):
        assert row.min_detectable_difference == comparison.sensitivity("new", row.metric).mdd  # one computation
        assert f"differences under {row.min_detectable_difference:.3g} cannot be told apart" in row.reason
    widest = max(r.min_detectable_difference for r in result.rows)
    seen = heta_nb.check(noisy, base_report, max_drop=widest * 1.01)
    assert seen.verdict == "no detectable change" and {r.verdict for r in seen.rows} == {"no detectable change"}
    narrow = heta_nb.check(noisy, base_report, max_drop=widest * 0.5)
    assert "underpowered" in {r.verdict for r in narrow.rows}
    assert any("tolerated cannot be verified" in r.reason for r in narrow.rows if r.verdict == "underpowered")
    for row in result.rows:
        assert abs(row.diff) < 1e-9 and row.losses > 0 and row.wins > 0  # it moved, both ways, by as much
    # cases did flip (bools swapped both ways): listed, but not a regression
    assert {c.kind for c in result.flips} == {"broke", "fixed"}


def test_rows_hold_compares_statistics_holm_adjusted_per_mode(base: dict, base_report) -> None:
    new = gp.as_report(gp.degraded(base, by=0.02))
    result = heta_nb.check(new, base_report, resamples=2000)
    # compare() of the same pair, mode with mode, gives the very same numbers and families
    paired = heta_nb.compare(base_report, new, names=["b", "n"], resamples=2000)
    for mode in gp.MODES:
        raw = []
        for row in paired.summary_rows():
            if row["mode"] != mode:
                continue
            ours = next(r for r in result.rows if r.mode == mode and r.metric == row["metric"])
            assert (ours.n, ours.diff, ours.ci_low, ours.ci_high, ours.p_value, ours.p_adjusted) == (
                row["n"],
                row["mean_diff"],
                row["ci_low"],
                row["ci_high"],
                row["p_value"],
                row["p_adjusted"],
            )
            assert ours.family == f"Holm over the 3 metrics of {mode} (new vs baseline)"
            assert row["family"] == f"Holm over the 3 metrics of {mode} (n vs b)"
            raw.append(row["p_value"])
        assert [r.p_adjusted for r in result.rows if r.mode == mode] == holm(raw)
    assert result.settings["family_size"] == 3
    assert set(result.settings["families"]) == set(gp.MODES)


def test_max_drop_absolute_and_relative(base: dict, base_report) -> None:
    new = gp.as_report(gp.degraded(base, by=0.01, metrics=("beir_ndcg@5",), modes=("extractive_answer",)))
    strict = heta_nb.check(new, base_report, metrics="beir_ndcg@5", modes="extractive_answer")
    assert strict.verdict == "regression" and strict.rows[0].diff == pytest.approx(-0.01, abs=1e-3)
    loose = heta_nb.check(new, base_report, metrics="beir_ndcg@5", modes="extractive_answer", max_drop=0.02)
    assert loose.verdict == "within tolerance" and loose.ok and "within 0.02" in loose.rows[0].reason
    baseline_mean = loose.rows[0].baseline_mean
    relative = heta_nb.check(new, base_report, metrics="beir_ndcg@5", modes="extractive_answer", max_drop="5%")
    assert relative.rows[0].tolerated == pytest.approx(0.05 * baseline_mean)
    assert relative.verdict == "within tolerance"  # 1 % of ~0.55 is below the 0.01 drop... 5 % is above
    tight = heta_nb.check(new, base_report, metrics="beir_ndcg@5", modes="extractive_answer", max_drop="1%")
    assert tight.verdict == "regression" and "1% = 0.005" in tight.rows[0].reason
    per_metric = heta_nb.check(new, base_report, max_drop={"beir_ndcg@5/extractive_answer": 0.02})
    row = next(r for r in per_metric.rows if r.mode == "extractive_answer" and r.metric == "beir_ndcg@5")
    assert row.verdict == "within tolerance" and per_metric.ok


def test_a_floor_fails_the_new_report_alone(base: dict, base_report) -> None:
    new = gp.as_report(gp.degraded(base, by=0.02, metrics=("beir_ndcg@5",), modes=("full_text_search",)))
    mean = next(s.shown for s in new.metric_summaries() if (s.mode, s.metric) == ("full_text_search", "beir_ndcg@5"))
    failed = heta_nb.check(
        new, base_report, metrics=["answer_contains"], floors={"beir_ndcg@5/full_text_search": mean + 0.01}
    )
    assert failed.verdict == "regression"
    rows = {(r.mode, r.metric): r for r in failed.rows}
    floor_row = rows[("full_text_search", "beir_ndcg@5")]  # checked although metrics= left it out
    assert floor_row.floor_failed and floor_row.floor_mean == pytest.approx(mean)
    assert f"new mean {mean:.3f} is below the floor" in floor_row.reason
    assert ("extractive_answer", "beir_ndcg@5") not in rows  # that floor named one mode only
    passed = heta_nb.check(new, base_report, floors={"beir_ndcg@5": mean - 0.01}, max_drop=0.05)
    assert passed.ok and all(r.floor == pytest.approx(mean - 0.01) for r in passed.rows if r.metric == "beir_ndcg@5")


def test_a_bare_floor_applies_to_every_mode_but_an_unchanged_mode_below_it_is_not_failed(base: dict, base_report):
    """A mode whose baseline was below the floor too and that did not change is not a new failure
    (the README's `--floor ndcg@5=0.6` failed an unchanged mode); strict_floors fails it."""
    new = gp.as_report(gp.jittered(base))  # the same means, cases moved both ways
    means = {(s.mode, s.metric): s.shown for s in new.metric_summaries()}
    low, high = sorted(means[(mode, "beir_ndcg@5")] for mode in gp.MODES)
    floor = (low + high) / 2  # one mode is below it in both reports, the other above
    result = heta_nb.check(new, base_report, floors={"beir_ndcg@5": floor})
    rows = {r.mode: r for r in result.rows if r.metric == "beir_ndcg@5"}
    assert all(r.floor == floor for r in rows.values())  # a bare key: every mode
    below = next(mode for mode in gp.MODES if means[(mode, "beir_ndcg@5")] == low)
    assert rows[below].floor_failed and rows[below].verdict == "underpowered"
    assert "below the floor" in rows[below].reason and "as the baseline was" in rows[below].reason
    assert result.ok
    strict = heta_nb.check(new, base_report, floors={"beir_ndcg@5": floor}, strict_floors=True)
    assert not strict.ok and {r.mode for r in strict.regressions} == {below}
    per_mode = heta_nb.check(new, base_report, floors={f"beir_ndcg@5/{below}": floor}, strict_floors=True)
    assert [r.mode for r in per_mode.rows if r.floor is not None] == [below]


def test_not_comparable_pairs_say_why(base: dict, base_report) -> None:
    fewer = gp.as_report(gp.base_dict(100))
    result = heta_nb.check(fewer, base_report)
    assert result.verdict == "not comparable" and result.exit_code == 2 and not result.ok
    assert any("case sets differ (baseline 120, new 100; 100 in both)" in r for r in result.reasons)
    assert {r.verdict for r in result.rows} == {"not comparable"} and not result.flips
    allowed = heta_nb.check(fewer, base_report, require_same_cases=False, allow_unverified=True)
    assert allowed.ok and allowed.verdict in ("underpowered", "no detectable change", "improvement")
    assert any("case sets differ" in w for w in allowed.warnings)

    other = copy.deepcopy(base)
    other["benchmark"]["version"] = "2"
    different = heta_nb.check(gp.as_report(other), base_report)
    assert different.verdict == "not comparable"
    assert "the benchmarks differ: new ran 'synthetic:2:test', baseline ran 'synthetic:1:test'" in different.reasons

    missing = heta_nb.check(base_report, base_report, modes=["full_text_search", "sql_text_search"])
    assert missing.verdict == "not comparable"
    assert any("has no mode 'sql_text_search'" in r for r in missing.reasons)

    cancelled = copy.deepcopy(base)
    cancelled["metadata"]["heta_nb"] = {"status": "cancelled", "done": 40, "total": 240}
    assert (
        "the new report is cancelled (40 of 240 case results)"
        in heta_nb.check(gp.as_report(cancelled), base_report).reasons
    )


def test_a_floor_still_fails_a_pair_that_is_not_comparable(base: dict, base_report) -> None:
    fewer = gp.as_report(gp.base_dict(100))
    result = heta_nb.check(fewer, base_report, floors={"beir_ndcg@5": 0.99})
    assert result.verdict == "regression" and result.exit_code == 1
    assert {r.verdict for r in result.rows if r.metric == "beir_ndcg@5"} == {"regression"}


def test_errors_are_listed_and_gated_on_request(base: dict, base_report) -> None:
    broken = copy.deepcopy(base)
    hit = [r for r in broken["case_results"] if r["query_mode"] == "full_text_search"][:7]
    for result in hit:
        result.update(
            scores=[],
            response=None,
            error={"message": "index gone", "error_type": "LookupError", "retryable": False, "metadata": {}},
        )
    new = gp.as_report(broken)
    listed = heta_nb.check(new, base_report)
    assert listed.ok  # errors leave the paired set (as in compare); listed, not gated
    assert [c.case_id for c in listed.error_changes] == [r["case_id"] for r in hit]
    assert all(c.kind == "new error" and c.new == "LookupError: index gone" for c in listed.error_changes)
    counts = {e.mode: e for e in listed.errors}
    assert (counts["full_text_search"].introduced, counts["extractive_answer"].introduced) == (7, 0)
    assert any("errored cases are left out" in w for w in listed.warnings)
    gated = heta_nb.check(new, base_report, max_new_errors=5)
    assert gated.verdict == "regression" and gated.headline.endswith("(errors/full_text_search)")
    assert heta_nb.check(new, base_report, max_new_errors=7).ok
    back = heta_nb.check(base_report, new)
    assert {c.kind for c in back.error_changes} == {"error fixed"}


def test_a_mode_that_errors_on_every_case_is_a_regression(base: dict, base_report) -> None:
    broken = copy.deepcopy(base)
    for result in broken["case_results"]:
        if result["query_mode"] == "extractive_answer":
            result.update(
                scores=[],
                response=None,
                error={"message": "down", "error_type": "RuntimeError", "retryable": False, "metadata": {}},
            )
    result = heta_nb.check(gp.as_report(broken), base_report)
    assert result.verdict == "regression"
    rows = [r for r in result.rows if r.mode == "extractive_answer"]
    assert rows and all(r.verdict == "regression" and "errored on every case" in r.reason for r in rows)
    assert math.isnan(rows[0].new_mean)


def test_pass_marks_decide_what_flips(base: dict, base_report) -> None:
    new = gp.as_report(gp.degraded(base, by=0.02, metrics=("beir_ndcg@5",)))
    default = heta_nb.check(new, base_report, metrics="beir_ndcg@5")
    marked = heta_nb.check(new, base_report, metrics="beir_ndcg@5", pass_at={"beir_ndcg@5": 0.5})
    assert all(c.baseline > 0 and c.new == 0 for c in default.flips)
    assert marked.flips and all(c.baseline >= 0.5 > c.new for c in marked.flips)
    assert len(marked.flips) != len(default.flips)


def test_bad_settings_are_refused_with_the_setting_named(base_report) -> None:
    with pytest.raises(ValueError, match="alpha must be in"):
        heta_nb.check(base_report, base_report, alpha=1.5)
    with pytest.raises(ValueError, match="max_drop: expected a finite number >= 0"):
        heta_nb.check(base_report, base_report, max_drop=-0.1)
    with pytest.raises(ValueError, match="max_drop: expected a number such as 0.02"):
        heta_nb.check(base_report, base_report, max_drop="two%")
    with pytest.raises(ValueError, match=r"name \['ndgc@5'\], which is no checked metric"):
        heta_nb.check(base_report, base_report, max_drop={"ndgc@5": 0.1})
    with pytest.raises(ValueError, match=r"floors\['beir_ndcg@5'\]: expected a finite number"):
        heta_nb.check(base_report, base_report, floors={"beir_ndcg@5": "high"})


def test_frame_assert_ok_and_assert_no_regression(base: dict, base_report) -> None:
    bad = heta_nb.check(gp.as_report(gp.degraded(base)), base_report)
    frame = bad.frame()
    assert list(frame.columns) == list(ROW_COLUMNS) and len(frame) == 6
    assert frame["n"].dtype == "int64" and frame["significant"].dtype == bool and frame["floor"].isna().all()
    assert frame.attrs["verdict"] == "regression"
    assert isinstance(bad.changes_frame(), pd.DataFrame) and len(bad.changes_frame()) == len(bad.flips)
    with pytest.raises(AssertionError) as raised:
        bad.assert_ok()
    assert str(raised.value) == bad.to_text()
    with pytest.raises(AssertionError, match="FAILED: regression"):
        assert_no_regression(gp.as_report(gp.degraded(base)), base_report)
    assert isinstance(assert_no_regression(base_report, base_report, metrics=["beir_ndcg@5"]), CheckResult)


def test_check_loads_paths_and_never_warns(tmp_path, base: dict, base_report, recwarn) -> None:
    path = tmp_path / "new.json"
    path.write_text(gp.as_report(gp.jittered(base)).to_json())
    result = heta_nb.check(str(path), base_report)
    assert result.new["source"] == str(path) and result.ok
    assert not [w for w in recwarn if "heta" in str(w.category).lower()]
