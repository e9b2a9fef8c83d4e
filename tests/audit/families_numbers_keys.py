"""Issue 35's families 3 and 13 as attacks for ``attack_rerun.py``: hostile MLflow names, big integers.

``attacks(quick)`` returns ``(title, attack, describe)`` triples; each attack returns a dict with a
``problems`` list (empty: nothing got through) and the counts ``describe`` prints.

1. Hostile MLflow names: metric, mode, prefix and manifest names that collide after
   normalisation (``ndcg@5``/``ndcg_at_5``, ``é``/``ü``, ``{"a.b"}``/``{"a": {"b"}}``), are not
   their own path (``..``, ``a//b``, ``x/``) or are too long: every key must pass MLflow's own
   validation, no two names may share a key, and real runs (a temporary SQLite store) must end
   FINISHED with every value under its own key.
2. Big integers: scores of 2**53 + 1, int64's ends, 2**64, 10**30 in ``cases_frame``,
   ``scores_frame``, Arrow and Parquet read back: the exact integer or a ``ValueError`` refusal,
   never a rounded float.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import heta_nb  # noqa: E402
from heta_nb.integrations.names import KeyBook, tracker_key  # noqa: E402

FIXTURES = Path("/work/shared/fixtures/heta-0.1.2")
if not FIXTURES.exists():
    from helpers import FIXTURES  # type: ignore[no-redef]  # noqa: E402

Attack = tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]

NAMES = [
    "ndcg@5", "ndcg_at_5", "é", "ü", "e", "日本", "..", ".", "...", "..x", "a//b", "a/b", "x/", "/x", "x",
    "a<b", "a>b", "a_b", "k", "k/n", "k/ci_low", "\ud800", "a:b", "a b", "tab\there", "new\nline",
    "m" * 300 + "1", "m" * 300 + "2", "q" * 260 + "/a", "q" * 260 + "/b", "/" * 3, "_", "__",
]  # fmt: skip


def _report(metrics: Sequence[str], modes: Sequence[str], *, recipe: Any = None, values: Any = None) -> Any:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    base = [r for r in data["case_results"] if r["query_mode"] == "full_text_search" and not r.get("error")][:2]
    results = []
    for m, mode in enumerate(modes):
        for c, result in enumerate(base):
            copied = copy.deepcopy(result)
            copied["query_mode"] = mode
            copied["scores"] = [
                {"name": name, "value": values[c] if values else (i + 1) / 16 + m / 512, "passed": None, "metadata": {}}
                for i, name in enumerate(metrics)
            ]
            results.append(copied)
    data.update(case_results=results, query_modes=list(modes), report_id="attack", score_summary={})
    if recipe is not None:
        data["recipe_manifest"] = recipe
    data["score_summary"] = heta_nb.load_report(data).recomputed_score_summary()
    return heta_nb.load_report(data)


def _refused(key: str) -> str:
    from mlflow.exceptions import MlflowException
    from mlflow.utils import validation

    try:
        validation._validate_metric_name(key)
        validation._validate_param_name(key)
        validation._validate_tag_name(key)
        validation._validate_length_limit("key", validation.MAX_ENTITY_KEY_LENGTH, key)
    except MlflowException as exc:
        return str(exc)[:120]
    return ""


def attack_mlflow_names(quick: bool) -> dict[str, Any]:
    """Keys from hostile names (pure), then real runs into a temporary SQLite store."""
    import mlflow

    from heta_nb.integrations import mlflow as hm

    problems: list[str] = []
    rng = random.Random(35)
    names = [*NAMES, *("".join(rng.choice("a./@é_:-\\ ") for _ in range(rng.randint(1, 280))) for _ in range(200))]
    book = KeyBook(prefix="p")
    heads = [book(a, b) for a in names[: 40 if quick else None] for b in ("m", "x/", "é")]
    keys = book.keys([h / s for h in heads for s in ("n", "ci_low")])
    for name, key in keys.items():
        if why := _refused(key):
            problems.append(f"key {key[:60]!r} of {name.text[:40]!r}: {why}")
    if len(set(keys.values())) != len(keys):
        problems.append(f"{len(keys) - len(set(keys.values()))} names share a key")
    cases = [
        (("ndcg@5", "ndcg_at_5"), ("full_text_search",), None, ""),
        (("é", "ü", "e"), ("é", "ü"), None, ".."),
        (("..", "a//b", "x/", "/x"), ("x/", "/x"), None, "a//b"),
        (("m" * 300 + "1", "m" * 300 + "2"), ("w" * 240,), {"a.b": "1", "a": {"b": "2"}, "é": "3", "ü": "4"}, ""),
    ]
    runs = 0
    previous = mlflow.get_tracking_uri()
    with tempfile.TemporaryDirectory() as tmp:
        mlflow.set_tracking_uri(f"sqlite:///{tmp}/mlflow.db")
        try:
            experiment = mlflow.create_experiment("attack", artifact_location=(Path(tmp) / "a").as_uri())
            client = mlflow.MlflowClient()
            for metrics, modes, recipe, prefix in cases[: 2 if quick else None]:
                report = _report(metrics, modes, recipe=recipe)
                run_id = client.create_run(experiment).info.run_id
                runs += 1
                try:
                    hm.log_report(report, run_id=run_id, prefix=prefix, html=False, table=False)
                except Exception as exc:  # noqa: BLE001 - any crash is a finding
                    problems.append(f"log_report({metrics}, {modes}) raised {type(exc).__name__}: {str(exc)[:100]}")
                    continue
                logged = client.get_run(run_id).data.metrics
                for s in report.metric_summaries():
                    want = (report.metric_names.index(s.metric) + 1) / 16 + report.modes.index(s.mode) / 512
                    found = [k for k, v in logged.items() if v == want and f"{k}/n" in logged]
                    if len(found) != 1:
                        problems.append(f"{s.metric!r} in {s.mode!r}: {len(found)} keys hold its value")
                if recipe is not None:
                    params = client.get_run(run_id).data.params
                    lost = [v for v in ("1", "2", "3", "4") if v not in params.values()]
                    if lost:
                        problems.append(f"flattened params lost: {lost}")
            run_id = mlflow.start_run(experiment_id=experiment).info.run_id
            mlflow.end_run()
            runs += 1
            report = _report(("ndcg@5", "ndcg_at_5"), ("..",))
            with mlflow.start_run(run_id=run_id):
                hm.log_report(report, prefix="x/", html=False, table=False)
            if client.get_run(run_id).info.status != "FINISHED":
                problems.append(f"run ended {client.get_run(run_id).info.status}")
        finally:
            mlflow.set_tracking_uri(previous)
    return {"names": len(names), "keys": len(keys), "runs": runs, "problems": problems, "folder": tracker_key("..")}


BIG = [2**53 + 1, -(2**53 + 1), 2**63 - 1, -(2**63), 2**64, 10**30, -(10**30) - 1]


def _exact(got: Any, want: int) -> bool:
    if isinstance(got, str):
        try:
            got = json.loads(got)
        except ValueError:
            return False
    return isinstance(got, int) and not isinstance(got, bool) and got == want


def attack_big_integers(quick: bool) -> dict[str, Any]:
    """Each big integer (alone, with a small int, with a float) through frames, Arrow and Parquet."""
    from heta_nb.tables import cases_frame, scores_frame
    from heta_nb.tables.arrow import read_parquet, to_arrow, to_parquet

    problems: list[str] = []
    checks = refused = 0
    values = BIG[:3] if quick else BIG
    with tempfile.TemporaryDirectory() as tmp:
        for n, value in enumerate(values):
            for other in (1, 0.5):
                label = f"{value} with {other!r}"
                try:
                    report = _report(("big",), ("full_text_search",), values=[value, other])
                    cases = cases_frame(report)["big"].tolist()[0]
                    scores = scores_frame(report)
                    score = scores.loc[scores["metric"] == "big", "value"].tolist()[0]
                    arrow = to_arrow(report, "cases").column("big").to_pylist()[0]
                    folder = Path(tmp) / f"{n}-{other}"
                    to_parquet(report, folder)
                    back = read_parquet(folder)
                    assert isinstance(back, dict)
                    parquet = back["cases"]["big"].tolist()[0]
                    parquet_score = back["scores"].loc[back["scores"]["metric"] == "big", "value"].tolist()[0]
                except ValueError:
                    refused += 1
                    continue
                except Exception as exc:  # noqa: BLE001 - a crash is a finding
                    problems.append(f"{label}: {type(exc).__name__}: {str(exc)[:100]}")
                    continue
                for where, got in (
                    ("cases_frame", cases),
                    ("scores_frame", score),
                    ("to_arrow", arrow),
                    ("parquet cases", parquet),
                    ("parquet scores", parquet_score),
                ):
                    checks += 1
                    exact = _exact(got, value) or (isinstance(got, float) is False and str(got) == str(value))
                    if not exact:
                        rounded = isinstance(got, float) and math.isfinite(got)
                        problems.append(f"{label}: {where} gave {got!r}" + (" (rounded)" if rounded else ""))
    return {"values": len(values), "checks": checks, "refused": refused, "problems": problems}


def attacks(quick: bool) -> list[Attack]:
    """The two families, bounded: a few seconds quick, well under a minute in full."""
    return [
        (
            "hostile MLflow names",
            lambda: _timed(attack_mlflow_names, quick),
            lambda r: f"{r['names']} names, {r['keys']} keys, {r['runs']} runs",
        ),
        (
            "big integers x frames/Parquet",
            lambda: _timed(attack_big_integers, quick),
            lambda r: f"{r['values']} integers x 2 columns, {r['checks']} checks, {r['refused']} refused",
        ),
    ]


def _timed(attack: Callable[[bool], dict[str, Any]], quick: bool) -> dict[str, Any]:
    started = time.perf_counter()
    result = attack(quick)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


if __name__ == "__main__":
    for title, run, describe in attacks("--quick" in sys.argv):
        outcome = run()
        print(f"{title}: {describe(outcome)}; {len(outcome['problems'])} got through")
        for problem in outcome["problems"][:10]:
            print(f"  {problem}")
