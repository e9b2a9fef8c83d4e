"""Log reports, comparisons and checks to MLflow (the ``[mlflow]`` extra): params, metrics, tags, artifacts, tables.

Each function logs into ``run_id`` when given, else into the active run, else into a new
run of the current experiment that it ends again; it returns the run's id. Metric keys are
``metric/mode`` (``ndcg_at_5/full_text_search``: MLflow refuses ``@``, so it is written
``_at_``; :mod:`heta_nb.integrations.names` makes every key, unique and valid, from the
untrusted names). ``heta_nb/metric_names.json`` maps every key back to its metric, and every
other key that is not its name as given (a hash added, a character mapped) to that name.
All keys are checked before anything is logged. ``prefix`` puts everything under one name
(two reports in one run: ``prefix="small"``).

The numbers are the report's :class:`~heta_nb.model.summary.MetricSummary`, as every other
view shows them: ``metric/mode`` is the headline (:attr:`~MetricSummary.shown`, the mean of
the scored values) and Heta's own mean is only ever ``metric/mode/heta_mean``. A pair with
no number (n/a, errored, skipped, labels) gets no value metric but the tag
``heta_nb.status/metric/mode`` saying why. Logging again into the same run replaces: tables
and artifacts are overwritten, metrics get the same values, and a param or metric that would
change (another report under the same ``prefix``) raises ``ValueError`` before anything is
logged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from heta_nb._util.optional import require
from heta_nb._version import __version__
from heta_nb.integrations.names import (
    KeyBook,
    Name,
    check_keys,
    flatten,
    is_number,
    param_value,
    renamed,
    shorten_name,
    tracker_key,
)
from heta_nb.llm_judges.totals import judge_totals
from heta_nb.model.io import load_report
from heta_nb.model.summary import RECORD_KEYS

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.comparison import Comparison
    from heta_nb.gate import CheckResult
    from heta_nb.model.report import EvaluationReport

__all__ = ["benchmark_dataset", "log_check", "log_comparison", "log_report", "report_metrics", "report_params"]

ARTIFACTS = "heta_nb"
"""The artifact folder everything is logged under."""
_KB_RUNTIME = ("artifacts", "run_record", "recipe", "created_at", "updated_at")
"""KB manifest keys that record a build, not a setting (the recipe is logged from ``recipe_manifest``)."""
_BATCH = 100
_COMPARED = ("ci_low", "ci_high", "p_value", "p_adjusted", "mean", "baseline_mean", "n", "wins", "ties", "losses")
_SETTINGS = ("resamples", "confidence", "seed", "alpha", "correction", "include_skipped")
_CHECKED = ("diff", "ci_low", "ci_high", "p_adjusted", "new_mean", "baseline_mean", "n")
_LOGGED_ARTIFACTS = "mlflow.loggedArtifacts"
"""The run tag MLflow's ``log_table`` lists its tables in (how the UI knows a JSON file is a table)."""
_DATASET_CONTEXT = "mlflow.data.context"
"""The dataset input tag ``mlflow.evaluate`` sets (``mlflow.utils.mlflow_tags.MLFLOW_DATASET_CONTEXT``)."""


def _mlflow() -> Any:
    return require("mlflow", extra="mlflow", purpose="heta_nb.integrations.mlflow")


@contextlib.contextmanager
def _run(run_id: str | None, name: str) -> Iterator[tuple[Any, str]]:
    """``(client, run id)``: the given run, the active one, or a new one ended on exit."""
    mlflow = _mlflow()
    client = mlflow.MlflowClient()
    if run_id is not None:
        yield client, run_id
        return
    active = mlflow.active_run()
    if active is not None:
        yield client, active.info.run_id
        return
    run = mlflow.start_run(run_name=name)
    status = "FAILED"
    try:
        yield client, run.info.run_id
        status = "FINISHED"
    finally:
        mlflow.end_run(status=status)


def _refuse_changes(client: Any, run_id: str, params: Mapping[str, str], metrics: Mapping[str, float]) -> None:
    """Raise ``ValueError`` (before anything is logged) if a param or metric of the run would change value.

    MLflow refuses to change a param, and a metric logged again with another value would
    silently replace the number: both mean something else was logged under the same keys.
    """
    data = client.get_run(run_id).data
    clashes = [k for k, v in params.items() if k in data.params and data.params[k] != v]
    clashes += [k for k, v in metrics.items() if k in data.metrics and data.metrics[k] != v]
    if clashes:
        shown = ", ".join(repr(k) for k in sorted(clashes)[:5]) + (", ..." if len(clashes) > 5 else "")
        raise ValueError(
            f"run {run_id} already has {len(clashes)} param(s) or metric(s) with other values ({shown}): "
            "something else was logged under the same keys; nothing was logged. "
            "Log into another run, or give another prefix= (e.g. prefix='new')."
        )


def _send(
    client: Any, run_id: str, params: Mapping[str, str], metrics: Mapping[str, float], tags: Mapping[str, str]
) -> None:
    """Params, metrics and tags in batches MLflow accepts (100 params or tags, 1,000 metrics per call)."""
    entities = require("mlflow.entities", extra="mlflow", purpose="heta_nb.integrations.mlflow")
    import time

    now = int(time.time() * 1000)
    param_list = [entities.Param(k, v) for k, v in params.items()]
    tag_list = [entities.RunTag(k, param_value(v)) for k, v in tags.items()]
    metric_list = [entities.Metric(k, float(v), now, 0) for k, v in metrics.items()]
    for start in range(0, max(len(param_list), len(tag_list), 1), _BATCH):
        client.log_batch(run_id, params=param_list[start : start + _BATCH], tags=tag_list[start : start + _BATCH])
    for start in range(0, len(metric_list), 1000):
        client.log_batch(run_id, metrics=metric_list[start : start + 1000])


def _log_tables(client: Any, run_id: str, tables: Mapping[str, Any]) -> None:
    """Write each ``{path: frame}`` as MLflow's ``log_table`` does, but replacing the file.

    ``log_table`` appends the rows to a table already at that path (logging twice doubles
    it); this writes the same JSON (``DataFrame.to_json(orient="split")``, read back by
    ``mlflow.load_table``) with ``log_text``, which overwrites, and lists the path in the
    ``mlflow.loggedArtifacts`` tag as ``log_table`` does, so the UI shows it as a table.
    """
    for path, frame in tables.items():
        client.log_text(run_id, _table(frame).to_json(orient="split", index=False, date_format="iso"), path)
    listed = json.loads(client.get_run(run_id).data.tags.get(_LOGGED_ARTIFACTS, "[]"))
    missing = [{"path": path, "type": "table"} for path in tables]
    missing = [entry for entry in missing if entry not in listed]
    if missing:
        client.set_tag(run_id, _LOGGED_ARTIFACTS, json.dumps(listed + missing))


def _folder(prefix: str) -> str:
    """The artifact folder: ``heta_nb``, or ``heta_nb/PREFIX`` (the prefix made a safe path)."""
    return tracker_key(ARTIFACTS, prefix)


def report_params(report: EvaluationReport, prefix: str = "") -> dict[str, str]:
    """The settings of a report as tracker params: identity, benchmark, modes, run settings, recipe, KB.

    Args:
        report: The report.
        prefix: Put every key under this name.

    Returns:
        ``{key: text}``, keys valid for MLflow, values at most 500 characters.
    """
    return _params(report, prefix)[0]


def _params(report: EvaluationReport, prefix: str) -> tuple[dict[str, str], dict[str, str]]:
    """:func:`report_params` and the keys that are not their names (:func:`_renamed`)."""
    book = KeyBook(prefix)
    bench = report.benchmark
    fixed: dict[str, Any] = {"report_id": report.report_id, "knowledge_base_name": report.knowledge_base_name}
    fixed.update({f"benchmark.{k}": getattr(bench, k) for k in ("name", "version", "split", "task_type")})
    fixed.update(query_modes=list(report.modes), schema_version=report.schema_version)
    given = {book.dotted(name): param_value(value) for name, value in fixed.items()}  # first: they keep their keys
    settings = report.metadata.get("heta_nb")
    if isinstance(settings, Mapping):
        for name in ("top_k", "evaluators", "concurrency", "timeout_s", "retries", "trace", "status", "version"):
            if name in settings:
                given[book("run", name, sep=".")] = param_value(settings[name])
        options = settings.get("query_options")
        if isinstance(options, Mapping):
            for parts, value in flatten(options, ("run", "query_options")):
                given[book(*parts, sep=".")] = value
    for parts, value in flatten(report.recipe_manifest, ("recipe",)):
        given[book(*parts, sep=".")] = value
    for index, manifest in enumerate(report.knowledge_base_manifests):
        base = ("kb",) if len(report.knowledge_base_manifests) == 1 else ("kb", str(index))
        for parts, value in flatten(manifest, base, skip=_KB_RUNTIME):
            given[book(*parts, sep=".")] = value
    keys = book.keys()
    return {keys[name]: value for name, value in given.items()}, renamed(keys)


def report_metrics(
    report: EvaluationReport, prefix: str = ""
) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """Per mode × metric, the report's one :class:`~heta_nb.model.summary.MetricSummary`, as metrics and tags.

    A pair with a number (status ``"scored"``): ``metric/mode`` is the headline
    (``shown``: the mean of the scored values, skipped ones left out), ``/n`` its n,
    ``/ci_low`` and ``/ci_high`` its interval (left out when too few values), ``/heta_mean``
    Heta's ``score_summary`` value (skipped scores averaged in as 0), and the counts
    ``/errors``, ``/skipped`` and ``/evaluator_errors`` (always, 0 included, so an evaluator
    error count is always next to the value). Any other status gets no value, n or interval,
    but the tag ``heta_nb.status/metric/mode`` (``"n/a: full_text_search returns no answers"``,
    ``"errored: every score is an evaluator error (95)"``); the counts are logged too, except
    for n/a pairs (the mode cannot produce the metric). Run level: ``cases``, ``errors``,
    ``duration_s``; per LLM judge (:func:`~heta_nb.llm_judges.totals.judge_totals`),
    ``judge/NAME/calls``, ``/cached_calls``, ``/tokens_in``, ``/tokens_out`` and ``/cost`` (a
    cost not known is no number but the tag ``heta_nb.status/judge/NAME/cost``).

    Args:
        report: The report.
        prefix: Put every key under this name.

    Returns:
        ``(metrics, tags, names)``: finite values by key, status tags by key, and the metric
        each ``metric/mode`` key and status tag stands for.
    """
    book = KeyBook(prefix)
    items: list[tuple[Name, Any]] = []
    status: list[tuple[Name, str]] = []
    metric_of: dict[Name, str] = {}
    for s in report.metric_summaries():
        base = book(s.metric, s.mode)
        metric_of[base] = s.metric
        if s.status == "scored":
            low, high = s.shown_ci
            items += [(base, s.shown), (base / "n", s.shown_n), (base / "ci_low", low), (base / "ci_high", high)]
            items.append((base / "heta_mean", s.heta_mean))
        else:
            status.append((base, f"{s.status}: {s.reason}" if s.reason else s.status))
        if s.status != "n/a":
            items += [(base / field, getattr(s, field)) for field in ("errors", "skipped", "evaluator_errors")]
    items += [(book("cases"), report.case_count), (book("errors"), report.error_count)]
    if report.duration_s is not None:
        items.append((book("duration_s"), report.duration_s))
    for total in judge_totals(report).values():  # the one sum of the judges' usage
        base = book("judge", total.name)
        items += [
            (base / field, getattr(total, field)) for field in ("calls", "cached_calls", "tokens_in", "tokens_out")
        ]
        if total.cost_unknown:
            status.append((base / "cost", f"cost {total.cost_text}"))
        else:
            items.append((base / "cost", total.cost))
    return book.resolve(items, status, metric_of)


def benchmark_dataset(report: EvaluationReport) -> dict[str, str]:
    """The report's benchmark as the fields of an MLflow dataset (``mlflow.entities.Dataset``).

    ``name`` is the benchmark's name; ``source`` a ``code`` source naming the benchmark
    (``name:version:split``, and its homepage); ``schema`` the case fields (``case_id``,
    ``query``) as MLflow column specs; ``profile`` its version, split, task type and number
    of cases. ``digest`` hashes all of these with every ``(case_id, query)`` in the report,
    so it is the same for every report of the same benchmark cases (MLflow then keeps one
    dataset entry, whichever run logged it first) and changes when a case or query does.

    Args:
        report: The report.

    Returns:
        ``{"name", "digest", "source_type", "source", "schema", "profile"}``, all text.
    """
    benchmark = report.benchmark
    rows = report.rows()
    ids = list(rows.case_index)
    cases = sorted({(ids[code], query) for code, query in zip(rows.case_code, rows.queries)})
    source = {"heta_nb.benchmark": benchmark.key}
    if benchmark.homepage:
        source["heta_nb.homepage"] = benchmark.homepage
    columns = [{"type": "string", "name": name, "required": True} for name in ("case_id", "query")]
    profile = {"version": benchmark.version, "split": benchmark.split, "task_type": benchmark.task_type}
    fields = {
        "name": param_value(benchmark.name),
        "source_type": "code",
        "source": json.dumps({"tags": source}, sort_keys=True),
        "schema": json.dumps({"mlflow_colspec": columns}),
        "profile": json.dumps({**profile, "cases": len({case_id for case_id, _ in cases})}),
    }
    hashed = json.dumps([fields, cases], sort_keys=True, separators=(",", ":"))  # ASCII: lone surrogates escaped
    return {**fields, "digest": hashlib.sha256(hashed.encode("ascii")).hexdigest()[:10]}


def _log_dataset(client: Any, run_id: str, report: EvaluationReport) -> None:
    """Log the benchmark as the run's dataset input, context ``evaluation`` (as ``mlflow.evaluate`` does)."""
    entities = require("mlflow.entities", extra="mlflow", purpose="heta_nb.integrations.mlflow")
    dataset = entities.Dataset(**benchmark_dataset(report))
    tags = [entities.InputTag(key=_DATASET_CONTEXT, value="evaluation")]
    client.log_inputs(run_id, datasets=[entities.DatasetInput(dataset=dataset, tags=tags)])


def log_report(
    report: Any,
    run_id: str | None = None,
    *,
    prefix: str = "",
    html: bool = True,
    table: bool = True,
) -> str:
    """Log a report: settings as params, metrics per mode (:func:`report_metrics`), the benchmark
    as the run's dataset input, ``report.json``, the HTML page and the tables.

    Logging the same report again into the same run replaces what the first call logged
    (one copy of each table row, the same metric values); a param or metric that would
    change raises ``ValueError`` before anything is logged.

    Args:
        report: An ``EvaluationReport`` or anything :func:`heta_nb.load_report` takes.
        run_id: The run to log into (default: the active run, else a new one, ended after).
        prefix: Put every param, metric, tag and artifact under this name.
        html: Also log the standalone offline HTML page (``report.html``).
        table: Also log the cases table (``cases.json``: one row per case × mode). The
            summary table (``summary.json``: one row per mode × metric, the columns of
            :data:`~heta_nb.model.summary.RECORD_KEYS`) is always logged.

    Returns:
        The run's id.

    Raises:
        ValueError: The run already has one of these params or metrics with another value.
    """
    loaded = load_report(report)
    folder = _folder(prefix)
    metrics, tags, names = report_metrics(loaded, prefix)
    params, renamed = _params(loaded, prefix)
    names = {**{k: v for k, v in renamed.items() if k not in names}, **names}
    tags = {"heta_nb.version": __version__, tracker_key("heta_nb.report_id", prefix): loaded.report_id, **tags}
    check_keys(params=params, metrics=metrics, tags=tags, artifacts=[folder])
    with _run(run_id, loaded.report_id) as (client, rid):
        _refuse_changes(client, rid, params, metrics)
        _log_dataset(client, rid, loaded)
        _send(client, rid, params, metrics, tags)
        client.log_dict(rid, names, f"{folder}/metric_names.json")
        client.log_text(rid, loaded.to_json(), f"{folder}/report.json")
        if html:
            from heta_nb.export import to_html

            client.log_text(rid, to_html(loaded), f"{folder}/report.html")
        import pandas as pd

        summary = pd.DataFrame([s.record() for s in loaded.metric_summaries()], columns=list(RECORD_KEYS))
        tables = {f"{folder}/summary.json": summary}
        if table:
            tables[f"{folder}/cases.json"] = loaded.cases_frame()
        _log_tables(client, rid, tables)
    return rid


def _untested(verdict: str, reason: str, number: Any) -> str:
    """The text logged instead of the numbers of a row not tested (verdict or reason ``"n/a: ..."``)
    or without a number (its verdict, with the reason), else ``""``."""
    if not verdict.startswith("n/a") and is_number(number):
        return ""
    if not reason:
        return verdict or "n/a"
    return reason if reason.startswith("n/a:") or not verdict else f"{verdict}: {reason}"


def log_comparison(comparison: Comparison, run_id: str | None = None, *, prefix: str = "", html: bool = True) -> str:
    """Log a comparison: its settings, per system × metric the difference, CI and p-values, the page, the table.

    Metric keys are ``compare/metric/system/diff`` (and ``/ci_low``, ``/ci_high``, ``/p_value``,
    ``/p_adjusted``, ``/mean``, ``/baseline_mean``, ``/n``, ``/wins``, ``/ties``, ``/losses`` and
    ``/mdd``, the minimum detectable difference),
    apart from a report's own ``metric/mode`` metrics when both are logged into one run. A row
    not tested (verdict ``"n/a: ..."``) or without a difference logs no number, but the tag
    ``heta_nb.status/compare/metric/system`` with its verdict.

    Args:
        comparison: The :class:`~heta_nb.comparison.Comparison`.
        run_id: The run to log into (default: the active run, else a new one, ended after).
        prefix: Put everything under this name.
        html: Also log the standalone HTML page (``comparison.html``).

    Returns:
        The run's id.

    Raises:
        ValueError: The run already has one of these params or metrics with another value.
    """
    folder = _folder(prefix)
    settings = {name: getattr(comparison, name) for name in ("baseline", "systems", "metrics", *_SETTINGS)}
    params = {
        tracker_key(prefix, f"comparison.{k}"): param_value(list(v) if k in ("systems", "metrics") else v)
        for k, v in settings.items()
    }
    book = KeyBook(prefix)
    items: list[tuple[Name, Any]] = []
    status: list[tuple[Name, str]] = []
    metric_of: dict[Name, str] = {}
    for row in comparison.summary_rows():
        base = book("compare", row["metric"], row["system"])
        metric_of[base] = row["metric"]
        text = _untested(str(row.get("verdict") or ""), "", row.get("mean_diff"))
        if text:
            status.append((base, text))
            continue
        items += [(base / "diff", row.get("mean_diff")), (base / "mdd", row.get("min_detectable_difference"))]
        items += [(base / field, row.get(field)) for field in _COMPARED]
    metrics, tags, names = book.resolve(items, status, metric_of)
    tags["heta_nb.version"] = __version__
    check_keys(params=params, metrics=metrics, tags=tags, artifacts=[folder])
    name = f"compare {' vs '.join(comparison.systems)}"
    with _run(run_id, shorten_name(name)) as (client, rid):
        _refuse_changes(client, rid, params, metrics)
        _send(client, rid, params, metrics, tags)
        client.log_dict(rid, names, f"{folder}/comparison_metric_names.json")
        if comparison.warnings or comparison.notes:
            client.log_text(
                rid, "\n".join([*comparison.warnings, *comparison.notes]) + "\n", f"{folder}/comparison_notes.txt"
            )
        if html:
            from heta_nb.export import to_html

            client.log_text(rid, to_html(comparison), f"{folder}/comparison.html")
        _log_tables(client, rid, {f"{folder}/comparison.json": comparison.summary_frame()})
    return rid


def log_check(result: CheckResult, run_id: str | None = None, *, prefix: str = "") -> str:
    """Log a regression check: its thresholds, per mode × metric the difference and p-value, the verdict.

    Tags ``heta_nb.check.verdict`` and ``heta_nb.check.ok``; metrics ``check/exit_code``,
    ``check/regressions`` and per row ``check/metric/mode/diff`` (``/ci_low``, ``/ci_high``,
    ``/p_adjusted``, ``/new_mean``, ``/baseline_mean``, ``/n``, ``/mdd``); a row not tested (n/a) or
    without a difference logs no number, but the tag ``heta_nb.status/check/metric/mode`` with
    its verdict and reason. Artifacts ``check.md``, ``check.json``, ``check.xml`` (JUnit) and
    the rows as a table (``check_rows.json``).

    Args:
        result: The :class:`~heta_nb.gate.CheckResult`.
        run_id: The run to log into (default: the active run, else a new one, ended after).
        prefix: Put everything under this name.

    Returns:
        The run's id.

    Raises:
        ValueError: The run already has one of these params or metrics with another value.
    """
    folder = _folder(prefix)
    settings = result.settings
    book = KeyBook(prefix)
    given = {
        book.dotted("check.new"): result.new["report_id"],
        book.dotted("check.baseline"): result.baseline["report_id"],
    }
    given.update({book.dotted(f"check.{name}"): settings.get(name) for name in (*_SETTINGS, "max_new_errors")})
    given = {name: param_value(value) for name, value in given.items()}
    given.update({book(*parts, sep="."): value for parts, value in flatten(settings["thresholds"], ("check",))})
    keys = book.keys()
    params = {keys[name]: value for name, value in given.items()}
    book = KeyBook(prefix)
    items: list[tuple[Name, Any]] = [
        (book("check", "exit_code"), result.exit_code),
        (book("check", "regressions"), len(result.regressions)),
        (book("check", "flipped_broke"), sum(1 for c in result.flips if c.kind == "broke")),
        (book("check", "flipped_fixed"), sum(1 for c in result.flips if c.kind == "fixed")),
    ]
    status: list[tuple[Name, str]] = []
    metric_of: dict[Name, str] = {}
    for row in result.rows:
        base = book("check", row.metric, row.mode)
        metric_of[base] = row.metric
        text = _untested(str(row.verdict or ""), str(getattr(row, "reason", "") or ""), getattr(row, "diff", None))
        if text:
            status.append((base, text))
            continue
        items += [(base / field, getattr(row, field, None)) for field in _CHECKED]
        items.append((base / "mdd", getattr(row, "min_detectable_difference", None)))
    metrics, tags, names = book.resolve(items, status, metric_of)
    tags.update(
        {
            tracker_key("heta_nb.check.verdict", prefix): result.verdict,
            tracker_key("heta_nb.check.ok", prefix): str(result.ok).lower(),
            "heta_nb.version": __version__,
        }
    )
    names.update({k: v for k, v in renamed(keys).items() if k not in names})
    check_keys(params=params, metrics=metrics, tags=tags, artifacts=[folder])
    with _run(run_id, shorten_name(f"check {result.new['report_id']} vs {result.baseline['report_id']}")) as (
        client,
        rid,
    ):
        _refuse_changes(client, rid, params, metrics)
        _send(client, rid, params, metrics, tags)
        client.log_dict(rid, names, f"{folder}/check_metric_names.json")
        client.log_text(rid, result.to_markdown(), f"{folder}/check.md")
        client.log_text(rid, result.to_json(), f"{folder}/check.json")
        client.log_text(rid, result.to_junit(), f"{folder}/check.xml")
        _log_tables(client, rid, {f"{folder}/check_rows.json": result.frame()})
    return rid


def _table(frame: Any) -> Any:
    """A frame ``to_json`` can write: categories and nullable types as plain objects, missing as None."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if str(column.dtype) in ("category", "boolean", "string", "str") or column.dtype == object:
            out[name] = column.astype(object).where(column.notna(), None)
    return out
