"""Standalone, offline, shareable HTML exports of reports and comparisons.

``to_html(obj, path)`` writes one self-contained file: the static view (readable with
JavaScript off), score-distribution figures as inline SVG images, an explorer of
**every** case (search, filter by mode / status / metric range, sortable columns),
and the manifests and versions needed to trace it. A Content-Security-Policy meta
tag forbids every remote load; the file references nothing outside itself.

Size discipline: texts are truncated and only the top results are kept, so the
file is smaller than the report.json it comes from (the full data stays in the
store). Files are written atomically.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from heta_nb._util.atomic import write_atomically
from heta_nb._version import __version__
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import as_float

__all__ = ["ExportLimits", "export", "to_html"]

EXPLORER_TEXT_CHARS = 160
MANIFEST_CHARS = 60_000


@dataclass(frozen=True)
class ExportLimits:
    """How much of a report goes into a standalone file (the full data stays in the store)."""

    text_chars: int = EXPLORER_TEXT_CHARS
    """Characters kept of each query, answer, top result and error in the explorer."""
    manifest_chars: int = MANIFEST_CHARS
    """Characters kept of each manifest shown for traceability."""
    figures: int = 3
    """Figures: the mean-per-mode summary, then one distribution per metric."""
    cases_per_mode: int = 100
    """Rows per mode in the static (no-JavaScript) case tables."""
    details: int = 60
    """Cases with a static drill-down."""


def _truncate(text: Any, limit: int) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_number(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return value if math.isfinite(as_float(value)) else None  # JSON has no inf; ints may exceed floats
    return None


def report_explorer_data(report: EvaluationReport, limits: ExportLimits) -> dict[str, Any]:
    """Rows and column specs of the case explorer (plain JSON data)."""
    metrics = list(report.metric_names)
    columns = [
        {"key": "case_id", "label": "case"},
        {"key": "mode", "label": "mode"},
        {"key": "status", "label": "status"},
        {"key": "latency_ms", "label": "latency ms"},
        *({"key": f"score:{name}", "label": name} for name in metrics),
        {"key": "query", "label": "query"},
        {"key": "answer", "label": "answer"},
        {"key": "top_result", "label": "top result"},
        {"key": "error", "label": "error"},
    ]
    rows = []
    chars = limits.text_chars
    for result in report.raw["case_results"]:
        response = result["response"] or {}
        error = result["error"]
        results = response.get("results") or []
        row: dict[str, Any] = {
            "case_id": result["case_id"],
            "mode": result["query_mode"],
            "status": "ok" if error is None else "error",
            "latency_ms": _json_number(result["latency_ms"]),
            "query": _truncate(result["query"], chars),
            "answer": _truncate(response.get("answer"), chars),
            "top_result": _truncate(results[0]["text"], chars) if results else None,
            "error": _truncate(f"{error['error_type']}: {error['message']}", chars) if error else None,
        }
        for score in result["scores"]:
            row[f"score:{score['name']}"] = _json_number(score["value"])
        rows.append(row)
    return {"columns": columns, "rows": rows, "modes": list(report.modes), "metrics": [f"score:{m}" for m in metrics]}


def _figures(report: EvaluationReport, limits: ExportLimits) -> list[dict[str, str]]:
    from heta_nb.plots import plot_metric_summary, plot_scores

    figures: list[tuple[str, Callable[[], Any]]] = []
    numeric = [m.metric for m in report.metric_summaries() if m.kind != "text"]
    metrics = list(dict.fromkeys(numeric))
    if metrics:
        figures.append(
            (
                "mean score per mode with 95 % confidence intervals",
                lambda: plot_metric_summary(report, metrics=metrics[:8]),
            )
        )
    for metric in metrics[: max(0, limits.figures - 1)]:
        figures.append((f"distribution of {metric} per mode", functools.partial(plot_scores, report, metric)))
    return [figure_entry(caption, draw) for caption, draw in figures]


def figure_entry(caption: str, draw: Callable[[], Any]) -> dict[str, str]:
    """A figure of a standalone page: its SVG as a data URI, or why it could not be drawn."""
    from heta_nb.plots import draw_svg

    svg, problem = draw_svg(draw)
    if svg is None:
        return {"data_uri": "", "alt": caption, "caption": f"{caption}: not drawn ({problem})"}
    return {
        "data_uri": "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii"),
        "alt": caption,
        "caption": caption,
    }


def _manifest_block(title: str, value: Any, limit: int) -> dict[str, Any]:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    return {"title": title, "text": text[:limit], "truncated": len(text) > limit, "size": len(text)}


def _report_document(report: EvaluationReport, limits: ExportLimits, title: str | None) -> str:
    from markupsafe import Markup

    from heta_nb.render import RenderLimits, render_report_html
    from heta_nb.render.env import environment

    fragment = render_report_html(
        report, RenderLimits(max_cases_per_mode=limits.cases_per_mode, max_details=limits.details)
    )
    info = report.metadata.get("heta_nb")
    writer = f"heta_nb {info.get('version')}" if isinstance(info, Mapping) else "heta-framework"
    facts = [
        ("report id", report.report_id),
        ("report key", report.report_key or "(not stored)"),
        ("schema version", report.schema_version),
        ("benchmark", f"{report.benchmark.key} ({report.benchmark.task_type})"),
        (
            "knowledge base",
            ", ".join(str(m.get("name")) for m in report.knowledge_base_manifests) or report.knowledge_base_name,
        ),
        ("started / finished", f"{report.started_at} / {report.finished_at}"),
        ("written by", writer),
        ("exported by", f"heta_nb {__version__}"),
    ]
    data = report.raw  # read only: json.dumps of three small parts, not a copy of the report
    manifests = [
        _manifest_block("Recipe manifest", data["recipe_manifest"], limits.manifest_chars),
        _manifest_block("Knowledge-base manifest", data["knowledge_base_manifest"], limits.manifest_chars),
        _manifest_block("Run metadata", data["metadata"], limits.manifest_chars),
    ]
    explorer = report_explorer_data(report, limits)
    template = environment().get_template("standalone.html.j2")
    return template.render(
        title=title or f"heta_nb report {report.report_id} · {report.benchmark.key}",
        version=__version__,
        exported_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        fragment=Markup(fragment),
        figures=_figures(report, limits),
        explorer=explorer,
        explorer_rows=len(explorer["rows"]),
        explorer_noun="case results",
        data_id="heta-explorer-" + hashlib.sha1(report.report_id.encode("utf-8", "surrogatepass")).hexdigest()[:10],
        facts=facts,
        manifests=manifests,
        explorer_js=Markup(asset("explorer.js")),
    )


def asset(name: str) -> str:
    return (resources.files("heta_nb") / "render" / "assets" / name).read_text(encoding="utf-8")


def to_html(
    obj: Any,
    path: str | os.PathLike[str] | None = None,
    *,
    limits: ExportLimits | None = None,
    title: str | None = None,
) -> str:
    """A standalone HTML document for a report or a comparison; written to ``path`` if given.

    Args:
        obj: an :class:`EvaluationReport` (or anything ``load_report`` accepts) or a
            :class:`~heta_nb.comparison.Comparison`.
        path: where to write (atomically; missing parent folders are created, a
            folder is refused); None only returns the text.
        limits: how much to include (texts are truncated; the full data stays in the store).
        title: the document title.

    Returns:
        The HTML text.
    """
    limits = limits or ExportLimits()
    from heta_nb.comparison import Comparison

    if isinstance(obj, Comparison):
        from heta_nb.render.comparison import comparison_document

        html = comparison_document(obj, limits=limits, title=title)
    else:
        from heta_nb.model.io import load_report

        html = _report_document(load_report(obj), limits, title)
    if path is not None:
        write_atomically(path, html.encode("utf-8"))
    return html


def export(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``obj`` to ``path`` by extension: ``.html`` standalone page or ``.ipynb`` notebook."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix in (".html", ".htm"):
        to_html(obj, target)
    elif suffix == ".ipynb":
        from heta_nb.notebook import to_notebook

        to_notebook(obj, target)
    else:
        raise ValueError(f"{target}: unknown export format {suffix or '(none)'!r}; use .html or .ipynb")
    return target
