"""Log reports, comparisons and checks to MLflow (the ``[mlflow]`` extra): params, metrics, artifacts, tables.

Each function logs into ``run_id`` when given, else into the active run, else into a new
run of the current experiment that it ends again; it returns the run's id. Metric keys are
``metric/mode`` (``ndcg_at_5/full_text_search``: MLflow refuses ``@``, so it is written
``_at_``; ``heta_nb/metric_names.json`` maps every key back to its metric). ``prefix``
puts everything under one name (two reports in one run: ``prefix="small"``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from heta_nb._util.optional import require
from heta_nb._version import __version__
from heta_nb.integrations.names import MAX_VALUE, flatten, param_value, tracker_key
from heta_nb.model.io import load_report

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.comparison import Comparison
    from heta_nb.gate import CheckResult
    from heta_nb.model.report import EvaluationReport

__all__ = ["log_check", "log_comparison", "log_report", "report_metrics", "report_params"]

ARTIFACTS = "heta_nb"
"""The artifact folder everything is logged under."""
_KB_RUNTIME = ("artifacts", "run_record", "recipe", "created_at", "updated_at")
"""KB manifest keys that record a build, not a setting (the recipe is logged from ``recipe_manifest``)."""
_BATCH = 100


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


class _Keys:
    """Tracker keys under a prefix, remembering which metric each key stands for."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.names: dict[str, str] = {}

    def __call__(self, *parts: str, metric: str | None = None) -> str:
        key = tracker_key(self.prefix, *parts)
        if metric is not None:
            self.names[key] = metric
        return key


def _finite(items: Iterable[tuple[str, Any]]) -> dict[str, float]:
    out = {}
    for key, value in items:
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and value == value
            and abs(value) != float("inf")
        ):
            out[key] = float(value)
    return out


def report_params(report: EvaluationReport, prefix: str = "") -> dict[str, str]:
    """The settings of a report as tracker params: identity, benchmark, modes, run settings, recipe, KB.

    Args:
        report: The report.
        prefix: Put every key under this name.

    Returns:
        ``{key: text}``, keys valid for MLflow, values at most 500 characters.
    """
    key = _Keys(prefix)
    params: dict[str, str] = {
        key("report_id"): param_value(report.report_id),
        key("knowledge_base_name"): param_value(report.knowledge_base_name),
        key("benchmark.name"): param_value(report.benchmark.name),
        key("benchmark.version"): param_value(report.benchmark.version),
        key("benchmark.split"): param_value(report.benchmark.split),
        key("benchmark.task_type"): param_value(report.benchmark.task_type),
        key("query_modes"): param_value(list(report.modes)),
        key("schema_version"): param_value(report.schema_version),
    }
    settings = report.metadata.get("heta_nb")
    if isinstance(settings, Mapping):
        for name in ("top_k", "evaluators", "concurrency", "timeout_s", "retries", "trace", "status", "version"):
            if name in settings:
                params[key(f"run.{name}")] = param_value(settings[name])
        options = settings.get("query_options")
        if isinstance(options, Mapping):
            for name, value in flatten(options, "run.query_options"):
                params[key(name)] = value
    for name, value in flatten(report.recipe_manifest, "recipe"):
        params[key(name)] = value
    for index, manifest in enumerate(report.knowledge_base_manifests):
        base = "kb" if len(report.knowledge_base_manifests) == 1 else f"kb.{index}"
        for name, value in flatten(manifest, base, skip=_KB_RUNTIME):
            params[key(name)] = value
    return params


def report_metrics(report: EvaluationReport, prefix: str = "") -> tuple[dict[str, float], dict[str, str]]:
    """Per mode × metric: Heta's mean as ``metric/mode``, with ``/n``, ``/ci_low``, ``/ci_high``,
    ``/mean_scored``, ``/errors`` and ``/skipped``; and run-level counts.

    Args:
        report: The report.
        prefix: Put every key under this name.

    Returns:
        ``(metrics, names)``: finite values by key, and the metric each ``metric/mode`` key stands for.
    """
    key = _Keys(prefix)
    items: list[tuple[str, Any]] = []
    for s in report.metric_summaries():
        base = key(s.metric, s.mode, metric=s.metric)
        items.append((base, s.mean))
        for field in ("n", "ci_low", "ci_high", "mean_scored", "errors", "skipped"):
            items.append((f"{base}/{field}", getattr(s, field)))
    items += [(key("cases"), report.case_count), (key("errors"), report.error_count)]
    if report.duration_s is not None:
        items.append((key("duration_s"), report.duration_s))
    return _finite(items), key.names


def log_report(
    report: Any,
    run_id: str | None = None,
    *,
    prefix: str = "",
    html: bool = True,
    table: bool = True,
) -> str:
    """Log a report: settings as params, metrics per mode, ``report.json`` and the HTML page, the cases table.

    Args:
        report: An ``EvaluationReport`` or anything :func:`heta_nb.load_report` takes.
        run_id: The run to log into (default: the active run, else a new one, ended after).
        prefix: Put every param, metric and artifact under this name.
        html: Also log the standalone offline HTML page (``report.html``).
        table: Also log the cases table with ``log_table`` (``cases.json``: one row per case × mode).

    Returns:
        The run's id.
    """
    loaded = load_report(report)
    folder = "/".join(p for p in (ARTIFACTS, prefix) if p)
    with _run(run_id, loaded.report_id) as (client, rid):
        metrics, names = report_metrics(loaded, prefix)
        tags = {"heta_nb.version": __version__, tracker_key("heta_nb.report_id", prefix): loaded.report_id}
        _send(client, rid, report_params(loaded, prefix), metrics, tags)
        client.log_dict(rid, names, f"{folder}/metric_names.json")
        client.log_text(rid, loaded.to_json(), f"{folder}/report.json")
        if html:
            from heta_nb.export import to_html

            client.log_text(rid, to_html(loaded), f"{folder}/report.html")
        if table:
            client.log_table(rid, _table(loaded.cases_frame()), f"{folder}/cases.json")
    return rid


def log_comparison(comparison: Comparison, run_id: str | None = None, *, prefix: str = "", html: bool = True) -> str:
    """Log a comparison: its settings, per system × metric the difference, CI and p-values, the page, the table.

    Metric keys are ``compare/metric/system/diff`` (and ``/ci_low``, ``/ci_high``, ``/p_value``,
    ``/p_adjusted``, ``/mean``, ``/baseline_mean``, ``/n``), apart from a report's own
    ``metric/mode`` metrics when both are logged into one run.

    Args:
        comparison: The :class:`~heta_nb.comparison.Comparison`.
        run_id: The run to log into (default: the active run, else a new one, ended after).
        prefix: Put everything under this name.
        html: Also log the standalone HTML page (``comparison.html``).

    Returns:
        The run's id.
    """
    key = _Keys(prefix)
    folder = "/".join(p for p in (ARTIFACTS, prefix) if p)
    params = {
        key("comparison.baseline"): param_value(comparison.baseline),
        key("comparison.systems"): param_value(list(comparison.systems)),
        key("comparison.metrics"): param_value(list(comparison.metrics)),
    }
    for name in ("resamples", "confidence", "seed", "alpha", "correction", "include_skipped"):
        params[key(f"comparison.{name}")] = param_value(getattr(comparison, name))
    items: list[tuple[str, Any]] = []
    for row in comparison.summary_rows():
        base = key("compare", row["metric"], row["system"], metric=row["metric"])
        for field, name in (
            ("mean_diff", "diff"),
            ("ci_low", "ci_low"),
            ("ci_high", "ci_high"),
            ("p_value", "p_value"),
        ):
            items.append((f"{base}/{name}", row[field]))
        for field in ("p_adjusted", "mean", "baseline_mean", "n", "wins", "ties", "losses"):
            items.append((f"{base}/{field}", row[field]))
    name = f"compare {' vs '.join(comparison.systems)}"
    with _run(run_id, shorten_name(name)) as (client, rid):
        _send(client, rid, params, _finite(items), {"heta_nb.version": __version__})
        client.log_dict(rid, key.names, f"{folder}/comparison_metric_names.json")
        client.log_table(rid, _table(comparison.summary_frame()), f"{folder}/comparison.json")
        if comparison.warnings or comparison.notes:
            client.log_text(
                rid, "\n".join([*comparison.warnings, *comparison.notes]) + "\n", f"{folder}/comparison_notes.txt"
            )
        if html:
            from heta_nb.export import to_html

            client.log_text(rid, to_html(comparison), f"{folder}/comparison.html")
    return rid


def log_check(result: CheckResult, run_id: str | None = None, *, prefix: str = "") -> str:
    """Log a regression check: its thresholds, per mode × metric the difference and p-value, the verdict.

    Tags ``heta_nb.check.verdict`` and ``heta_nb.check.ok``; metrics ``check/exit_code``,
    ``check/regressions`` and per row ``check/metric/mode/diff`` (``/ci_low``, ``/ci_high``,
    ``/p_adjusted``, ``/new_mean``, ``/baseline_mean``, ``/n``); artifacts ``check.md``,
    ``check.json``, ``check.xml`` (JUnit) and the rows as a table (``check_rows.json``).

    Args:
        result: The :class:`~heta_nb.gate.CheckResult`.
        run_id: The run to log into (default: the active run, else a new one, ended after).
        prefix: Put everything under this name.

    Returns:
        The run's id.
    """
    key = _Keys(prefix)
    folder = "/".join(p for p in (ARTIFACTS, prefix) if p)
    settings = result.settings
    params = {
        key("check.new"): param_value(result.new["report_id"]),
        key("check.baseline"): param_value(result.baseline["report_id"]),
    }
    for name in ("alpha", "confidence", "resamples", "seed", "correction", "include_skipped", "max_new_errors"):
        params[key(f"check.{name}")] = param_value(settings.get(name))
    for name, value in flatten(settings["thresholds"], "check"):
        params[key(name)] = value
    items: list[tuple[str, Any]] = [
        (key("check", "exit_code"), result.exit_code),
        (key("check", "regressions"), len(result.regressions)),
        (key("check", "flipped_broke"), sum(1 for c in result.flips if c.kind == "broke")),
        (key("check", "flipped_fixed"), sum(1 for c in result.flips if c.kind == "fixed")),
    ]
    for row in result.rows:
        base = key("check", row.metric, row.mode, metric=row.metric)
        for field, name in (
            ("diff", "diff"),
            ("ci_low", "ci_low"),
            ("ci_high", "ci_high"),
            ("p_adjusted", "p_adjusted"),
        ):
            items.append((f"{base}/{name}", getattr(row, field)))
        for field in ("new_mean", "baseline_mean", "n"):
            items.append((f"{base}/{field}", getattr(row, field)))
    tags = {
        tracker_key("heta_nb.check.verdict", prefix): result.verdict,
        tracker_key("heta_nb.check.ok", prefix): str(result.ok).lower(),
        "heta_nb.version": __version__,
    }
    with _run(run_id, shorten_name(f"check {result.new['report_id']} vs {result.baseline['report_id']}")) as (
        client,
        rid,
    ):
        _send(client, rid, params, _finite(items), tags)
        client.log_dict(rid, key.names, f"{folder}/check_metric_names.json")
        client.log_text(rid, result.to_markdown(), f"{folder}/check.md")
        client.log_text(rid, result.to_json(), f"{folder}/check.json")
        client.log_text(rid, result.to_junit(), f"{folder}/check.xml")
        client.log_table(rid, _table(result.frame()), f"{folder}/check_rows.json")
    return rid


def shorten_name(name: str) -> str:
    """A run name MLflow shows whole (at most 250 characters)."""
    return name if len(name) <= MAX_VALUE // 2 else name[: MAX_VALUE // 2 - 1] + "…"


def _table(frame: Any) -> Any:
    """A frame ``log_table`` can write: categories and nullable types as plain objects, missing as None."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if str(column.dtype) in ("category", "boolean", "string", "str") or column.dtype == object:
            out[name] = column.astype(object).where(column.notna(), None)
    return out
