"""Hostile metric, mode and manifest names logged to a real local MLflow store: every value under its
own key, no run left FAILED half-logged, ``metric_names.json`` naming each key's metric.

The ``tracking`` fixture (a SQLite store) is in ``conftest.py``.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.integrations import mlflow as hm
from heta_nb.integrations.names import MAX_KEY, KeyBook, check_keys, tracker_key

pytestmark = pytest.mark.hostile

SUFFIXES = ("n", "ci_low", "ci_high", "heta_mean", "errors", "skipped", "evaluator_errors")
LONG = "m" * 300
METRIC_SETS = {
    "at and _at_": ("ndcg@5", "ndcg_at_5"),
    "accents": ("é", "ü"),
    "accents and their letters": ("é", "e", "e_", "ü"),
    "dots": ("..", ".", "...", "..x"),
    "slashes": ("a//b", "a/b", "x/", "/x", "x"),
    "300 characters": (LONG + "1", LONG + "2"),
    "differ after the cut": ("q" * 260 + "/a", "q" * 260 + "/b", "q" * 250 + "@" * 20),
    "equal after normalising": ("a<b", "a>b", "a|b", "a_b", "a b?", "a b!"),
    "colliding with a suffix": ("k", "k/n", "k/ci_low"),
    "slashes only": ("/", "//", "_", "/_/"),
}
MODE_SETS = {
    "accents": ("é", "ü"),
    "slashes": ("x/", "/x", "a//b", "a/b"),
    "dots": ("..", "../..", "."),
    "long": ("w" * 240, "w" * 240 + "@"),
}


def _value(metric: int, mode: int) -> float:
    """A value per (metric, mode), exact in binary, so each can be found once among the metrics."""
    return (metric + 1) / 16 + mode / 512


def hostile_report(
    metrics: Sequence[str] = ("score",),
    modes: Sequence[str] = ("full_text_search",),
    *,
    recipe: Any = None,
    report_id: str = "hostile",
    shift: float = 0.0,
) -> heta_nb.EvaluationReport:
    """report-normal.json's first 3 full-text cases, once per mode, scored ``_value(metric, mode)``."""
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    base = [r for r in data["case_results"] if r["query_mode"] == "full_text_search" and not r.get("error")][:3]
    results = []
    for m, mode in enumerate(modes):
        for result in base:
            copied = copy.deepcopy(result)
            copied["query_mode"] = mode
            copied["scores"] = [
                {"name": name, "value": _value(i, m) + shift, "passed": None, "metadata": {}}
                for i, name in enumerate(metrics)
            ]
            results.append(copied)
    data.update(case_results=results, query_modes=list(modes), report_id=report_id, score_summary={})
    if recipe is not None:
        data["recipe_manifest"] = recipe
    data["score_summary"] = heta_nb.load_report(data).recomputed_score_summary()
    return heta_nb.load_report(data)


def _mlflow_accepts(keys: Any) -> None:
    """MLflow's own validation of metric, param and tag keys (``mlflow/utils/validation.py``)."""
    validation = pytest.importorskip("mlflow.utils.validation")
    for key in keys:
        validation._validate_metric_name(key)
        validation._validate_param_name(key)
        validation._validate_tag_name(key)
        assert len(key) <= validation.MAX_ENTITY_KEY_LENGTH == MAX_KEY, key


def _check_run(tracking: Any, run_id: str, report: heta_nb.EvaluationReport, tmp_path: Path) -> dict[str, str]:
    run = tracking.client.get_run(run_id)
    assert run.info.status == "FINISHED"
    metrics, params, tags = run.data.metrics, run.data.params, run.data.tags
    _mlflow_accepts([*metrics, *params, *tags])
    names = json.loads(tracking.text(run_id, "heta_nb/metric_names.json", tmp_path))
    heads = []
    for s in report.metric_summaries():
        metric, mode = s.metric, s.mode
        want = _value(report.metric_names.index(metric), report.modes.index(mode))
        found = [k for k in names if k in metrics and names[k] == metric and metrics[k] == want]
        found = [k for k in found if metrics.get(f"{k}/n") == s.shown_n]
        assert len(found) == 1, (metric, mode, found)
        key = found[0]
        assert all(f"{key}/{suffix}" in metrics for suffix in SUFFIXES), key  # truncation kept every suffix
        heads.append(key)
    assert len(set(heads)) == len(heads) == len(report.metric_summaries())
    assert params["query_modes"]
    return names


@pytest.mark.parametrize("metrics", list(METRIC_SETS.values()), ids=list(METRIC_SETS))
def test_hostile_metric_names_each_keep_their_value(tracking: Any, tmp_path: Path, metrics: tuple[str, ...]) -> None:
    report = hostile_report(metrics)
    assert len(report.metric_names) == len(metrics)
    run_id = hm.log_report(report, html=False, table=False)
    _check_run(tracking, run_id, report, tmp_path)


@pytest.mark.parametrize("modes", list(MODE_SETS.values()), ids=list(MODE_SETS))
def test_hostile_mode_names_each_keep_their_value(tracking: Any, tmp_path: Path, modes: tuple[str, ...]) -> None:
    report = hostile_report(("ndcg@5", "ndcg_at_5"), modes)
    assert report.modes == modes
    run_id = hm.log_report(report, html=False, table=False)
    _check_run(tracking, run_id, report, tmp_path)


@pytest.mark.parametrize("prefix", ["..", "a//b", "x/", "é", "p" * 300])
def test_a_hostile_prefix_is_a_safe_key_and_folder(tracking: Any, tmp_path: Path, prefix: str) -> None:
    report = hostile_report(("ndcg@5", "ndcg_at_5"))
    run_id = hm.log_report(report, prefix=prefix, html=False, table=False)
    run = tracking.client.get_run(run_id)
    assert run.info.status == "FINISHED"
    _mlflow_accepts([*run.data.metrics, *run.data.params, *run.data.tags])
    folder = tracker_key("heta_nb", prefix)
    assert ".." not in folder.split("/")
    paths = [a.path for a in tracking.client.list_artifacts(run_id, folder)]
    assert f"{folder}/metric_names.json" in paths and f"{folder}/report.json" in paths
    assert len({v for k, v in run.data.metrics.items() if not k.endswith(SUFFIXES)}) >= 2  # both values


def test_flattened_params_that_read_alike_are_two_keys(tracking: Any, tmp_path: Path) -> None:
    recipe = {"a.b": "dotted", "a": {"b": "nested"}, "é": "e-acute", "ü": "u-umlaut", "x/": "slash", "..": "dots"}
    recipe["k" * 300 + "1"] = "long-1"
    recipe["k" * 300 + "2"] = "long-2"
    report = hostile_report(recipe=recipe)
    run_id = hm.log_report(report, html=False, table=False)
    names = _check_run(tracking, run_id, report, tmp_path)
    params = tracking.client.get_run(run_id).data.params
    texts = [v for v in recipe.values() if isinstance(v, str)] + ["nested"]
    for text in texts:
        assert sum(1 for v in params.values() if v == text) == 1, text
    assert params["recipe.a.b"] == "nested"  # the nested key is its name; the dotted one is hashed
    dotted = next(k for k, v in params.items() if v == "dotted")
    assert dotted.startswith("recipe.a.b_") and names[dotted] == 'recipe["a.b"]'
    for key, value in params.items():
        if value in texts and key != "recipe.a.b":
            assert key in names, key  # every key that is not its name is named


def test_a_comparison_and_a_check_of_colliding_names_keep_every_row(tracking: Any, tmp_path: Path) -> None:
    metrics = ("ndcg@5", "ndcg_at_5", "é", "ü", "a//b", "a/b")
    old = hostile_report(metrics, report_id="old")
    new = hostile_report(metrics, report_id="new", shift=1 / 1024)
    comparison = heta_nb.compare(old, new, resamples=200)
    run_id = hm.log_comparison(comparison, run_id=tracking.new_run(), html=False)
    data = tracking.client.get_run(run_id).data
    _mlflow_accepts([*data.metrics, *data.params, *data.tags])
    diffs = [k for k in data.metrics if k.startswith("compare/") and k.endswith("/diff")]
    tested = [r for r in comparison.summary_rows() if r.get("mean_diff") is not None]
    assert len(diffs) == len(tested) == len(metrics)
    names = json.loads(tracking.text(run_id, "heta_nb/comparison_metric_names.json", tmp_path))
    assert sorted(names[k[: -len("/diff")]] for k in diffs) == sorted(metrics)
    result = heta_nb.check(new, old, resamples=200)
    run_id = hm.log_check(result, run_id=tracking.new_run())
    data = tracking.client.get_run(run_id).data
    _mlflow_accepts([*data.metrics, *data.params, *data.tags])
    checked = [k for k in data.metrics if k.endswith("/diff")]
    assert len(checked) == len(result.rows) == len(metrics)


def test_nothing_is_logged_when_a_key_would_be_refused(tracking: Any) -> None:
    with pytest.raises(ValueError, match=r"MLflow would refuse.*nothing was logged"):
        check_keys(metrics=["fine", "a//b"])
    for bad in ("", "x/", "/x", "..", "a/./b", "ndcg@5", "x" * 251):
        with pytest.raises(ValueError):
            check_keys(tags=[bad])
    check_keys(metrics=["ndcg_at_5/full_text_search", "heta_nb.status/a b:c-d"])


@pytest.mark.parametrize("seed", range(4))
def test_random_hostile_names_give_valid_unique_keys(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "ab./@:_- é\u00fc\u65e5\ud800\\|<>"
    raw = ["".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 2, 5, 40, 260]))) for _ in range(300)]
    book = KeyBook(prefix=rng.choice(["", "p", "..", "é/x"]))
    heads = [book(rng.choice(raw), rng.choice(raw)) for _ in range(200)]
    members = [h / s for h in heads for s in ("n", "ci_low")]
    keys = book.keys(members)
    assert len(set(keys.values())) == len(keys)  # one key per distinct name
    _mlflow_accepts(keys.values())
    for head in heads:
        assert keys[head / "ci_low"] == f"{keys[head]}/ci_low"  # a family keeps one head
    assert tracker_key("ndcg@5", "full_text_search") == "ndcg_at_5/full_text_search"


def test_big_integer_scores_are_exact_in_the_logged_cases_table(tracking: Any, tmp_path: Path) -> None:
    report = hostile_report()
    data = json.loads(report.to_json())
    for result, value in zip(data["case_results"], (2**53 + 1, 2**64, 2**63 - 1)):
        result["scores"].append({"name": "big", "value": value, "passed": None, "metadata": {}})
    data["score_summary"] = {}
    big = heta_nb.load_report(data)
    run_id = hm.log_report(big, html=False)
    assert tracking.client.get_run(run_id).info.status == "FINISHED"
    table = json.loads(tracking.text(run_id, "heta_nb/cases.json", tmp_path))
    column = table["columns"].index("big")
    assert [row[column] for row in table["data"]] == [2**53 + 1, 2**64, 2**63 - 1]
