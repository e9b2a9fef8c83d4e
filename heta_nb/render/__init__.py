"""Static HTML views of heta_nb objects, for notebooks and exports.

Each ``render_*_html`` function builds a plain-data context (:mod:`heta_nb.render.context`)
and lays it out with an autoescaping Jinja2 template (``templates/``). The output is a
self-contained HTML fragment: styles scoped under ``.heta-report``, no scripts, no
external resources, readable with styles stripped (GitHub) and in light or dark themes.

The model objects' ``_repr_mimebundle_`` methods call :func:`repr_mimebundle` lazily,
so importing the model never imports Jinja2.

The parts: ``context/`` (one module per view), ``limits`` (:class:`RenderLimits`),
``env`` (the Jinja2 environment and number formats), ``svg`` (sparklines as data),
``figures`` (matplotlib figures as SVG/PNG); standalone pages are :mod:`heta_nb.export`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from heta_nb._util.text import shorten
from heta_nb._util.unicode import valid_text
from heta_nb.render.context import (
    benchmark_context,
    build_report_context,
    case_context,
    comparison_context,
    report_text,
    response_context,
    run_context,
    score_context,
    widget_context,
)
from heta_nb.render.env import environment
from heta_nb.render.limits import RenderLimits
from heta_nb.render.store import render_store_html

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.benchmark import Benchmark
    from heta_nb.comparison import Comparison
    from heta_nb.model import EvaluationCaseResult, EvaluationReport, EvaluationScore, QueryResponse
    from heta_nb.runner.state import RunState

__all__ = [
    "RenderLimits",
    "build_report_context",
    "render_benchmark_html",
    "render_case_html",
    "render_check_html",
    "render_comparison_html",
    "render_history_html",
    "render_leaderboard_html",
    "render_report_html",
    "render_response_html",
    "render_run_html",
    "render_score_html",
    "render_store_html",
    "render_widget_parts",
    "report_plain_text",
    "repr_mimebundle",
]

_PLAIN_CHARS = 2000


def _render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def _report(report: EvaluationReport | Mapping[str, Any]) -> EvaluationReport:
    from heta_nb.model import EvaluationReport

    return report if isinstance(report, EvaluationReport) else EvaluationReport.from_dict(report)


def render_report_html(
    report: EvaluationReport | Mapping[str, Any],
    limits: RenderLimits | None = None,
    *,
    id_prefix: str | None = None,
) -> str:
    """The report view: header, score summary, worst cases per mode, errors, drill-downs.

    Args:
        report: the report (or its serialized dict).
        limits: what to show at most (default :class:`RenderLimits`).
        id_prefix: prefix of the element ids; by default derived from the report id,
            so the same report always renders to the same HTML.
    """
    context = build_report_context(_report(report), limits, id_prefix=id_prefix)
    return _render("report.html.j2", ctx=context)


def report_plain_text(report: EvaluationReport | Mapping[str, Any], limits: RenderLimits | None = None) -> str:
    """A concise ``text/plain`` summary: identity, counts, status and the first metrics per mode."""
    return report_text(build_report_context(_report(report), limits))


def render_case_html(case_result: EvaluationCaseResult, limits: RenderLimits | None = None) -> str:
    """One case result's drill-down: query, scores, answer, ranked results, error, trace."""
    return _render("case.html.j2", ctx=case_context(case_result, limits))


def render_score_html(score: EvaluationScore, limits: RenderLimits | None = None) -> str:
    """One score as a small table: value, verdict, skipped reason, metadata."""
    return _render("score.html.j2", ctx=score_context(score, limits))


def render_response_html(response: QueryResponse, limits: RenderLimits | None = None) -> str:
    """One query response: the answer and the ranked results."""
    return _render("response.html.j2", ctx=response_context(response, limits))


def render_benchmark_html(benchmark: Benchmark, limits: RenderLimits | None = None) -> str:
    """A benchmark: manifest, counts, label distributions and its first cases."""
    return _render("benchmark.html.j2", ctx=benchmark_context(benchmark, limits))


def render_run_html(state: RunState, limits: RenderLimits | None = None) -> str:
    """A static snapshot of a run: progress, rate, ETA, errors, running means per mode."""
    return _render("run.html.j2", ctx=run_context(state, limits))


def render_comparison_html(comparison: Comparison, *, explorer_links: bool = False) -> str:
    """The static comparison view (scoped CSS, no scripts, safe text); ``explorer_links``: the
    stage counts link to the page's explorer filtered to those cases (an export has one)."""
    return _render("comparison.html.j2", ctx=comparison_context(comparison, explorer_links=explorer_links))


def render_check_html(result: Any) -> str:
    """The regression gate's view of a :class:`~heta_nb.gate.CheckResult`: verdict first."""
    from heta_nb.render.context.check import check_context

    return _render("check.html.j2", ctx=check_context(result))


def render_widget_parts(state: RunState, summaries: Iterable[Any] = ()) -> dict[str, str]:
    """``{"title", "stats", "build", "means", "errors"}`` HTML strings for the live widget
    (its means from the final report's ``summaries`` once there are some)."""
    module = environment().get_template("widget.html.j2").module
    context = widget_context(state, summaries)
    return {
        name: valid_text(str(getattr(module, name)(context))) for name in ("title", "stats", "build", "means", "errors")
    }


def _error_html(exc: BaseException) -> str | None:
    """A short escaped note on why a view failed (None if even that cannot render)."""
    try:
        return _render("error.html.j2", kind=type(exc).__name__, message=str(exc)[:300])
    except Exception:  # noqa: BLE001 - a repr must never raise
        return None


def _safe_repr(obj: Any) -> str:
    try:
        return shorten(repr(obj), _PLAIN_CHARS)
    except Exception:  # noqa: BLE001 - a repr must never raise
        return f"<{type(obj).__name__}>"


def _wanted(mime: str, include: Collection[str] | None, exclude: Collection[str] | None) -> bool:
    return (not include or mime in include) and not (exclude and mime in exclude)


_VIEWS: dict[str, str] = {
    "EvaluationCaseResult": "render_case_html",
    "EvaluationScore": "render_score_html",
    "QueryResponse": "render_response_html",
    "Benchmark": "render_benchmark_html",
    "Comparison": "render_comparison_html",
    "CheckResult": "render_check_html",
    "EvaluationRun": "render_evaluation_run_html",
    "Leaderboard": "render_leaderboard_html",
    "History": "render_history_html",
}
"""A heta_nb class (its name) -> the name of its HTML view here: a class keeps its view
wherever in heta_nb it is defined, and a view replaced on this module (a test) is used."""


def render_evaluation_run_html(run: Any) -> str:
    """The static snapshot of a running (or finished) :class:`EvaluationRun`."""
    return render_run_html(run.state)


def render_leaderboard_html(board: Any) -> str:
    """The static leaderboard view (``board.to_context()``: a :class:`heta_nb.sweeps.Leaderboard`)."""
    from heta_nb.render.context.leaderboard import leaderboard_context

    return _render("leaderboard.html.j2", ctx=leaderboard_context(board.to_context()))


def render_history_html(history: Any) -> str:
    """The static view of a recipe's history (``history.to_context()``: a :class:`heta_nb.comparison.History`)."""
    from heta_nb.render.context.history import history_context

    return _render("history.html.j2", ctx=history_context(history.to_context()))


def _view(obj: Any) -> Callable[[Any], str]:
    for cls in type(obj).__mro__:
        name = _VIEWS.get(cls.__qualname__)
        if name is not None and cls.__module__.startswith("heta_nb."):
            return globals()[name]  # type: ignore[no-any-return]
    raise TypeError(f"no HTML view for {type(obj).__name__}")


def repr_mimebundle(
    obj: Any, include: Collection[str] | None = None, exclude: Collection[str] | None = None
) -> dict[str, str]:
    """IPython's mime bundle for a report, case result, score, response, benchmark or comparison.

    Always has a concise ``text/plain``; ``text/html`` only when ``include``/``exclude``
    allow it. Never raises: if rendering fails, ``text/html`` is a short escaped note.
    Every text can be sent as UTF-8 (lone surrogates become U+FFFD).
    """
    return {mime: valid_text(text) for mime, text in _mimebundle(obj, include, exclude).items()}


def _mimebundle(obj: Any, include: Collection[str] | None, exclude: Collection[str] | None) -> dict[str, str]:
    from heta_nb.model import EvaluationReport

    want_html = _wanted("text/html", include, exclude)
    if isinstance(obj, EvaluationReport):
        # One context for both: the plain text is made from the same numbers.
        try:
            context = build_report_context(obj)
        except Exception as exc:  # noqa: BLE001 - a repr must never raise
            return _with_error({"text/plain": _safe_repr(obj)}, exc, want_html)
        bundle = {"text/plain": shorten(report_text(context), _PLAIN_CHARS)}
        if want_html:
            try:
                bundle["text/html"] = _render("report.html.j2", ctx=context)
            except Exception as exc:  # noqa: BLE001
                return _with_error(bundle, exc, want_html)
        return bundle
    bundle = {"text/plain": _safe_repr(obj)}
    if want_html:
        try:
            bundle["text/html"] = _view(obj)(obj)
        except Exception as exc:  # noqa: BLE001
            return _with_error(bundle, exc, want_html)
    return bundle


def _with_error(bundle: dict[str, str], exc: BaseException, want_html: bool) -> dict[str, str]:
    note = _error_html(exc) if want_html else None
    if note is not None:
        bundle["text/html"] = note
    return bundle
