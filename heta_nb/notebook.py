"""Notebook sections (nbformat v4 cells) and whole notebooks for reports and comparisons.

Every section is a markdown heading with a short narrative, followed by code cells
whose stored outputs are exactly what running them produces (a report view, a
summary table, figures as SVG, the worst cases), each with ``text/html`` or an image
plus ``text/plain``, so the notebook reads well on GitHub unexecuted and executing it
with nbclient reproduces the outputs. Cell ids are derived from the report id, so a
re-export diffs cleanly.
"""

from __future__ import annotations

import errno
import hashlib
import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from heta_nb._util.text import unlinked
from heta_nb._util.unicode import valid_text
from heta_nb.model import EvaluationReport

__all__ = [
    "FigureView",
    "TableView",
    "comparison_figure",
    "display_bundle",
    "figure_view",
    "md_escape",
    "sections",
    "table_view",
    "to_notebook",
]

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~])")


def md_escape(text: Any) -> str:
    """Escape untrusted text for a Markdown cell (no HTML, no Markdown syntax, no autolink).

    Lone surrogates read as U+FFFD; URLs, ``www.`` names and e-mail addresses stay text
    (:func:`heta_nb._util.text.unlinked`).
    """
    value = valid_text(str(text)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return unlinked(_MD_SPECIAL.sub(r"\\\1", " ".join(value.split())))


class FigureView:
    """A figure shown as deterministic SVG (plus a one-line text/plain caption)."""

    def __init__(self, svg: str | None, caption: str) -> None:
        self.svg = svg
        """None when matplotlib could not draw it (the caption says why)."""
        self.caption = caption

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if self.svg is None:
            return {"text/plain": self.caption}
        return {"image/svg+xml": self.svg, "text/plain": self.caption}


def _figure(draw: Callable[[], Any], caption: str) -> FigureView:
    from heta_nb.render.figures import draw_svg

    svg, problem = draw_svg(draw)
    return FigureView(svg, caption if svg is not None else f"{caption}: not drawn ({problem})")


class TableView:
    """A DataFrame shown the same way everywhere: ``to_html`` and ``to_string`` of all of it.

    A DataFrame's own repr depends on the display settings and terminal width of the
    process showing it; exported notebooks store this instead, so re-running them
    reproduces the stored outputs exactly.
    """

    def __init__(self, frame: Any) -> None:
        self.frame = frame

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        formatters = {
            name: _p_format for name in self.frame.columns if str(name) in ("p_value", "p_adjusted", "p", "p_adj")
        }
        return {
            "text/html": self.frame.to_html(float_format=_float_format, formatters=formatters, na_rep="—", border=0),
            "text/plain": self.frame.to_string(float_format=_float_format, formatters=formatters, na_rep="—"),
        }


def _float_format(value: float) -> str:
    """Three decimals, as every other view shows a number."""
    return f"{value:.3f}"


def _p_format(value: Any) -> str:
    """A p-value as every view shows it (never rounded to 0: ``<0.001``), ``—`` when there is none."""
    from heta_nb.stats.format import p_text

    return p_text(float(value), 0.05) if isinstance(value, float) and math.isfinite(value) else "—"


def table_view(frame: Any) -> TableView:
    """Wrap a DataFrame so its notebook output is deterministic (see :class:`TableView`)."""
    return TableView(frame)


def figure_view(report: Any, kind: str, metric: str | None = None) -> FigureView:
    """A report figure for notebooks: ``"summary"`` (means with CIs) or ``"scores"`` of one metric."""
    from heta_nb.model.io import load_report
    from heta_nb.plots import plot_metric_summary, plot_scores

    report = load_report(report)
    if kind == "summary":
        caption = f"Mean score per mode with 95 % confidence intervals ({report.report_id})"
        return _figure(lambda: plot_metric_summary(report), caption)
    if kind == "scores" and metric is not None:
        caption = f"Distribution of {metric} per mode ({report.report_id})"
        return _figure(lambda: plot_scores(report, metric), caption)
    raise ValueError("figure kind must be 'summary' or 'scores' (with a metric)")


def display_bundle(obj: Any) -> dict[str, Any]:
    """The display data IPython would produce for ``obj`` (our objects and DataFrames), as UTF-8 text."""
    if hasattr(obj, "_repr_mimebundle_"):
        data = obj._repr_mimebundle_()
        bundle = dict(data[0] if isinstance(data, tuple) else data)
    else:
        bundle = {"text/plain": repr(obj)}
        html = getattr(obj, "_repr_html_", None)
        if callable(html):
            value = html()
            if value:
                bundle["text/html"] = value
    return {mime: valid_text(value) if isinstance(value, str) else value for mime, value in bundle.items()}


class _Builder:
    def __init__(self, key: str) -> None:
        import nbformat.v4 as v4

        self.v4 = v4
        self.key = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        self.cells: list[Any] = []
        self.namespace: dict[str, Any] = {}

    def _id(self) -> str:
        return f"heta-{self.key}-{len(self.cells):02d}"

    def markdown(self, text: str) -> None:
        cell = self.v4.new_markdown_cell(valid_text(text))
        cell["id"] = self._id()
        self.cells.append(cell)

    def code(self, source: str, value: Any = None, *, show: bool = True) -> None:
        """A code cell whose stored output is ``value`` as IPython would display it."""
        cell = self.v4.new_code_cell(valid_text(source))
        cell["id"] = self._id()
        if show and value is not None:
            count = sum(1 for c in self.cells if c.cell_type == "code") + 1
            cell["execution_count"] = count
            cell["outputs"] = [self.v4.new_output("execute_result", data=display_bundle(value), execution_count=count)]
        self.cells.append(cell)


def summary_lines(summaries: Sequence[Any]) -> list[str]:
    """Markdown lines on a report's scores, one per metric, from the one summary: the best
    mode where several have a number (:func:`~heta_nb.model.summary.best_modes`), the
    metric's modes with no number and why (n/a never leads), evaluator errors beside the value."""
    from heta_nb.model.summary import best_modes

    best = best_modes(summaries)
    lines = []
    for metric in dict.fromkeys(s.metric for s in summaries if s.status != "labels"):
        rows = [s for s in summaries if s.metric == metric]
        scored = [s for s in rows if s.scored]
        parts = []
        leaders = [s for s in scored if metric in best and s.shown == best[metric]]
        for top in leaders:
            low, high = top.shown_ci
            ci = f", 95 % CI {low:.3f}–{high:.3f}" if math.isfinite(low) and math.isfinite(high) else ""
            parts.append(f"best in {md_escape(top.mode)} ({top.value_text()}{ci}, n={top.shown_n:,})")
        parts.extend(f"{s.value_text()} in {md_escape(s.mode)} (n={s.shown_n:,})" for s in scored if s not in leaders)
        parts.extend(f"{s.status} in {md_escape(s.mode)} ({md_escape(s.reason)})" for s in rows if not s.scored)
        parts.extend(f"{s.error_text} in {md_escape(s.mode)}" for s in rows if s.evaluator_errors and s.scored)
        lines.append(f"- {md_escape(metric)}: " + "; ".join(parts))
    return lines


def _report_cells(builder: _Builder, report: EvaluationReport, source: str, name: str = "report") -> None:
    from heta_nb.tables.distributions import worst_cases

    counts = report.mode_counts()
    results = len(report.case_results)
    errors = report.error_count
    summaries = report.metric_summaries()
    duration = report.duration_s
    lines = [
        f"## Evaluation report {md_escape(report.report_id)}",
        "",
        f"Knowledge base **{md_escape(report.knowledge_base_name)}** on benchmark "
        f"**{md_escape(report.benchmark.name)}** (version {md_escape(report.benchmark.version)}, split "
        f"{md_escape(report.benchmark.split)}, {md_escape(report.benchmark.task_type)}): "
        f"{results:,} case results over {len(counts)} mode(s), {errors:,} error(s)"
        + (f", {duration:.1f} s." if duration is not None else "."),
    ]
    lines += ["", *summary_lines(summaries)]
    notes = [f"{md_escape(s.mode)} {md_escape(s.metric)}: {md_escape(s.note)}" for s in summaries if s.note]
    if notes:
        lines += ["", "Where Heta's summary hides something: " + "; ".join(notes[:6]) + "."]
    builder.markdown("\n".join(lines))
    builder.code(f"import heta_nb\n\n{name} = heta_nb.load_report({source!r})\n{name}", report)
    builder.markdown(
        "### Scores\nThe mean of the scored values per mode and metric (skipped scores left out), its n "
        "and 95 % confidence interval, why a metric has no number (`status`, `reason`), errors and "
        "evaluator errors; Heta's own mean (skipped scores counted as 0) is `heta_mean`."
    )
    builder.code(f"heta_nb.notebook.table_view({name}.summary_frame())", table_view(report.summary_frame()))
    numeric = [s.metric for s in summaries if s.kind != "text"]
    if numeric:
        builder.markdown("### Distributions")
        builder.code(f"heta_nb.notebook.figure_view({name}, 'summary')", figure_view(report, "summary"))
        first = numeric[0]
        builder.code(f"heta_nb.notebook.figure_view({name}, 'scores', {first!r})", figure_view(report, "scores", first))
        builder.markdown(f"### Worst cases by {md_escape(first)}")
        builder.code(
            f"heta_nb.notebook.table_view(heta_nb.tables.distributions.worst_cases({name}, {first!r}, n=10))",
            table_view(worst_cases(report, first, n=10)),
        )


def comparison_figure(comparison: Any, kind: str, metric: str, system: str | None = None) -> FigureView:
    """A comparison figure for notebooks: ``"paired"`` scatter or ``"deltas"`` histogram."""
    if kind == "paired":
        caption = f"{metric}: each case, baseline against {system or 'the first system'}"
        return _figure(lambda: comparison.plot_paired(metric, system=system), caption)
    if kind == "deltas":
        caption = f"{metric}: per-case differences against the baseline"
        return _figure(lambda: comparison.plot_deltas(metric, system=system), caption)
    raise ValueError("comparison figure kind must be 'paired' or 'deltas'")


def _comparison_cells(builder: _Builder, comparison: Any, sources: list[str]) -> None:
    from heta_nb.stats.format import p_text

    rows = comparison.summary_rows()
    holm = comparison.correction == "holm"
    pct = f"{comparison.confidence * 100:g} %"
    lines = [
        f"## Comparison of {md_escape(comparison.description())}",
        "",
        f"Paired by case, {comparison.resamples:,} resamples; "
        + (
            f"p-values: {md_escape(comparison.family_text)} (unadjusted p beside the adjusted one)"
            if holm
            else f"uncorrected p-values ({md_escape(comparison.family_text)})"
        )
        + f"; {pct} bootstrap CIs per test (not adjusted).",
        "",
        *(f"- {md_escape(line)}" for line in comparison.headline()),
        "",
    ]
    decided = [r for r in rows if r["significant"]]
    for row in decided:
        lines.append(
            f"- {md_escape(row['system'])} is {'better' if row['mean_diff'] > 0 else 'worse'} than "
            f"{md_escape(row['baseline'])} on {md_escape(row['metric'])}: {row['mean_diff']:+.3f} ({pct} CI "
            f"{row['ci_low']:+.3f} to {row['ci_high']:+.3f}, p={p_text(row['p_value'], comparison.alpha)}"
            + (f", adjusted p={p_text(row['p_adjusted'], comparison.alpha)}" if holm else "")
            + f", n={row['n']}; {md_escape(row['family'])})"
        )
    if not decided:
        lines.append(
            f"- No difference is statistically detectable at the {comparison.alpha:.0%} level"
            + (" after correction." if holm else ".")
        )
    for warning in comparison.warnings:
        lines.append(f"- Warning: {md_escape(warning)}")
    for note in comparison.notes:
        lines.append(f"- Note: {md_escape(note)}")
    builder.markdown("\n".join(lines))
    arguments = {k: v for k, v in comparison.arguments.items() if v is not None}
    call = ", ".join(["*reports", *(f"{k}={v!r}" for k, v in arguments.items())])
    builder.code(
        "import heta_nb\n\n"
        f"reports = [heta_nb.load_report(source) for source in {sources!r}]\n"
        f"comparison = heta_nb.compare({call})\ncomparison",
        comparison,
    )
    builder.code("heta_nb.notebook.table_view(comparison.summary_frame())", table_view(comparison.summary_frame()))
    numeric = comparison.differing_metrics()  # the clearest difference first, n/a last
    if numeric:
        first = numeric[0]
        builder.markdown(f"### Per-case differences on {md_escape(first)}")
        builder.code(
            f"heta_nb.notebook.comparison_figure(comparison, 'deltas', {first!r})",
            comparison_figure(comparison, "deltas", first),
        )
        builder.code(
            f"heta_nb.notebook.table_view(comparison.most_regressed({first!r}, n=10))",
            table_view(comparison.most_regressed(first, n=10)),
        )


def sections(obj: Any, *, source: Any = None) -> list[Any]:
    """Notebook cells presenting a report or a comparison.

    Args:
        obj: an :class:`EvaluationReport` (or anything ``load_report`` accepts) or a
            :class:`~heta_nb.comparison.Comparison`.
        source: how the notebook reloads the report(s): a path, URL or
            ``STORE:KB/REPORT_ID`` (default ``"report.json"``); for a comparison, a
            list with one source per report.

    Returns:
        nbformat v4 cells (markdown and code with outputs).
    """
    from heta_nb.comparison import Comparison

    if callable(getattr(obj, "notebook_sections", None)):  # a view made above this module (a Leaderboard)
        return list(obj.notebook_sections(source=source))
    if isinstance(obj, Comparison):
        sources = list(source) if isinstance(source, (list, tuple)) else None
        if sources is None:
            sources = [f"report-{i + 1}.json" for i in range(len(obj.reports))]
        builder = _Builder("comparison:" + "|".join(obj.systems))
        _comparison_cells(builder, obj, sources)
        return builder.cells
    from heta_nb.model.io import load_report

    report = load_report(obj)
    builder = _Builder(report.report_id)
    _report_cells(builder, report, source or "report.json")
    return builder.cells


def _companion_action(target: Path, data: bytes, report: EvaluationReport, input_file: Path | None) -> str:
    """``"write"``, ``"keep"`` or ``"replace"`` for a companion file; raises for a different report.

    An absent file is written; the input file itself, or a file holding this very report
    (same bytes or an equal report), is kept as it is; an older copy of the same report
    id may be replaced; anything else (another report, not a report) is never touched.
    """
    from heta_nb._util.fs import read_regular_file
    from heta_nb.errors import ReportExistsError
    from heta_nb.model.io import load_report

    if not os.path.lexists(target):
        return "write"
    existing: EvaluationReport | None
    try:
        if input_file is not None and target.resolve() == input_file:
            return "keep"
        if target.is_file() and target.stat().st_size == len(data) and read_regular_file(target) == data:
            return "keep"
        existing = load_report(target)
    except Exception:  # unreadable or not a report: it is not ours to destroy
        existing = None
    if existing is not None and existing == report:
        return "keep"
    if existing is not None and existing.report_id == report.report_id:
        return "replace"  # an earlier export of the same report (e.g. re-running the demo)
    held = f"report {existing.report_id!r}" if existing is not None else "something that is not this report"
    raise ReportExistsError(
        f"{target}: already holds {held}, not report {report.report_id!r}; not replacing it "
        "(move it away, choose another notebook name, or give the notebook a source)"
    )


def _exists_error(path: str | os.PathLike[str]) -> FileExistsError:
    return FileExistsError(errno.EEXIST, "already exists; overwrite=True replaces it", os.fspath(path))


def to_notebook(
    obj: Any, path: str | os.PathLike[str] | None = None, *, source: Any = None, overwrite: bool = True
) -> Any:
    """A complete, ``nbformat.validate``-clean notebook; written (atomically) to ``path`` if given.

    Without ``source``, a report is saved next to the notebook as ``<name>.report.json``
    (``<name>.report-N.json`` for each report of a comparison) and the notebook reloads
    it from there, so the pair can be shared as is. A companion file that already holds
    the same report, or that is the input file itself, is left as it is; one holding a
    different report (or anything else) is never replaced: ``ReportExistsError``.

    Args:
        overwrite: False raises ``FileExistsError`` instead of replacing an existing
            notebook (or an older copy of the same report in its companion file).
            Nothing is written when an error is raised.
    """
    import nbformat
    from nbformat.v4 import new_notebook

    from heta_nb._util.atomic import write_atomically, write_target
    from heta_nb.comparison import Comparison
    from heta_nb.model.io import encode_report, load_report, local_report_file

    if path is not None and not overwrite and os.path.lexists(path):
        raise _exists_error(path)
    if path is not None:  # a FIFO or a device is refused before a companion file is written
        write_target(path)
    writes: list[tuple[Path, bytes]] = []
    if path is not None and source is None:
        stem = Path(path).with_suffix("").name
        folder = Path(path).parent
        if isinstance(obj, Comparison):
            pairs = [(f"{stem}.report-{i + 1}.json", report) for i, report in enumerate(obj.reports)]
            input_file = None
            source = [name for name, _ in pairs]
        else:
            input_file = local_report_file(obj)
            obj = load_report(obj)
            pairs = [(f"{stem}.report.json", obj)]
            source = pairs[0][0]
        for name, report in pairs:
            target = folder / name
            data = encode_report(report)
            action = _companion_action(target, data, report, input_file)
            if action == "replace" and not overwrite:
                raise _exists_error(target)
            if action != "keep":
                writes.append((target, data))
    notebook = new_notebook(
        cells=sections(obj, source=source),
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
            "heta_nb": {"generated_by": "heta_nb.to_notebook"},
        },
    )
    nbformat.validate(notebook)
    if path is not None:
        for target, data in writes:
            write_atomically(target, data)
        text = nbformat.writes(notebook) + "\n"
        write_atomically(path, text.encode("utf-8"))
    return notebook
