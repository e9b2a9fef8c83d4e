"""HTML of a :class:`~heta_nb.comparison.Comparison`: the notebook view and the standalone page."""

from __future__ import annotations

import functools
import hashlib
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from heta_nb.render.env import environment

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.comparison import Comparison
    from heta_nb.export import ExportLimits

__all__ = ["comparison_context", "comparison_document", "render_comparison_html"]

QUERY_CHARS = 140
NAME_CHARS = 80
NOTE_CHARS = 400


def _signed(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:+.3f}"


def _clip(text: Any, limit: int = QUERY_CHARS) -> str:
    value = "" if text is None else str(text)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def comparison_context(comparison: Comparison, *, extremes: int = 5) -> dict[str, Any]:
    """Plain data for ``comparison.html.j2``."""
    from heta_nb.comparison import p_digits

    data = comparison.to_context()
    rows = data["rows"]
    alpha = data["settings"]["alpha"]
    spans = [abs(v) for r in rows for v in (r["ci_low"], r["ci_high"]) if isinstance(v, float) and math.isfinite(v)]
    scale = max(spans) if spans else 1.0
    scale = scale or 1.0
    table = []
    for row in rows:
        lo, hi, diff = row["ci_low"], row["ci_high"], row["mean_diff"]
        finite = all(isinstance(v, float) and math.isfinite(v) for v in (lo, hi, diff))
        verdict = row["verdict"]
        direction = (
            "heta-better" if verdict.startswith("better") else "heta-worse" if verdict.startswith("worse") else ""
        )
        table.append(
            {
                **row,
                "system": _clip(row["system"], NAME_CHARS),
                "metric": _clip(row["metric"], NAME_CHARS),
                "diff": _signed(diff),
                "ci": f"[{_signed(lo)}, {_signed(hi)}]" if finite else "—",
                "p": "—" if not math.isfinite(row["p_adjusted"]) else p_digits(row["p_adjusted"], alpha, 3, "g"),
                "direction": direction,
                "bar": {
                    "lo": round(60 + 56 * lo / scale, 2),
                    "hi": round(60 + 56 * hi / scale, 2),
                    "mid": round(60 + 56 * diff / scale, 2),
                    "label": f"difference {_signed(diff)}, CI {_signed(lo)} to {_signed(hi)}",
                }
                if finite
                else None,
            }
        )
    overlap = data["overlap"]
    per_system = {item["name"]: item for item in overlap.get("systems", [])}
    systems = []
    for system in data["systems"]:
        info = per_system.get(system["name"], {})
        clipped = {k: _clip(system[k], NAME_CHARS) for k in ("name", "report_id", "mode", "knowledge_base_name")}
        systems.append({**system, **clipped, "cases": info.get("cases", 0), "errors": info.get("errors", 0)})
    blocks = []
    if extremes:
        for name in comparison.systems:
            if name == comparison.baseline:
                continue
            for metric in list(comparison.metrics)[:2]:
                sides = []
                for title, frame in (
                    ("most improved", comparison.most_improved(metric, n=extremes, system=name)),
                    ("most regressed", comparison.most_regressed(metric, n=extremes, system=name)),
                ):
                    records = frame.to_dict("records")
                    sides.append(
                        {
                            "title": title,
                            "rows": [
                                {
                                    "case_id": _clip(r.get("case_id"), NAME_CHARS),
                                    "query": _clip(r.get("query")),
                                    "base": r.get(comparison.baseline),
                                    "value": r.get(name),
                                }
                                for r in records
                            ],
                        }
                    )
                blocks.append({"system": _clip(name, NAME_CHARS), "metric": _clip(metric, NAME_CHARS), "sides": sides})
    settings = data["settings"]
    benchmarks = sorted({_clip(s["benchmark"], NAME_CHARS) for s in data["systems"]})
    aligned = overlap.get("common", 0)
    key = "|".join(s["name"] + ":" + str(s["report_id"]) for s in data["systems"])
    return {
        "id": "heta-c-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10],
        "systems": systems,
        "baseline": _clip(data["baseline"], NAME_CHARS),
        "benchmarks": benchmarks,
        "aligned": f"{aligned:,}",
        "method": f"{settings['resamples']:,} resamples, seed {settings['seed']}",
        "confidence_pct": f"{100 * settings['confidence']:g} %",
        "correction": "Holm-corrected over "
        + f"{settings['family_size']} test{'s' if settings['family_size'] != 1 else ''}"
        if settings["correction"] == "holm"
        else "uncorrected",
        "p_header": "p (adj.)" if settings["correction"] == "holm" else "p",
        "include_skipped": settings["include_skipped"],
        "scale": f"{scale:.3f}",
        "rows": table,
        "warnings": [_clip(w, NOTE_CHARS) for w in data["warnings"]],
        "notes": [_clip(n, NOTE_CHARS) for n in data["notes"]],
        "extremes": blocks,
    }


def render_comparison_html(comparison: Comparison) -> str:
    """The static comparison view (scoped CSS, no scripts, safe text)."""
    return environment().get_template("comparison.html.j2").render(ctx=comparison_context(comparison))


def comparison_document(comparison: Comparison, *, limits: ExportLimits, title: str | None = None) -> str:
    """A standalone page: the comparison view, paired plots and an explorer of per-case deltas."""
    from markupsafe import Markup

    from heta_nb._version import __version__
    from heta_nb.export import asset, figure_entry

    figures = []
    for name in comparison.systems:
        if name == comparison.baseline:
            continue
        for metric in list(comparison.metrics)[: max(1, limits.figures // 2)]:
            figures.append(
                figure_entry(
                    f"{metric}: {name} against {comparison.baseline}, case by case",
                    functools.partial(comparison.plot_paired, metric, system=name),
                )
            )
            figures.append(
                figure_entry(
                    f"{metric}: per-case differences {name} − {comparison.baseline}",
                    functools.partial(comparison.plot_deltas, metric, system=name),
                )
            )
    frame = comparison.cases_frame()
    columns = [{"key": str(c), "label": str(c)} for c in frame.columns]
    rows = []
    for record in frame.to_dict("records"):
        row = {}
        for key, value in record.items():
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            elif isinstance(value, str):
                value = _clip(value, limits.text_chars)
            elif hasattr(value, "item"):
                value = value.item()
            row[str(key)] = value
        row.setdefault("mode", row.get("metric"))
        row.setdefault("status", "ok")
        rows.append(row)
    # The mode filter selects a metric: its options are clipped exactly as the rows' metric
    # cells are, or a metric name longer than ``text_chars`` would match no row at all.
    metric_options = list(dict.fromkeys(_clip(metric, limits.text_chars) for metric in comparison.metrics))
    explorer = {"columns": columns, "rows": rows, "modes": metric_options, "metrics": []}
    facts = [
        ("systems", ", ".join(comparison.systems)),
        ("baseline", comparison.baseline),
        ("exported by", f"heta_nb {__version__}"),
    ]
    context = comparison_context(comparison)
    return (
        environment()
        .get_template("standalone.html.j2")
        .render(
            title=title or f"heta_nb comparison · {', '.join(comparison.systems)}",
            version=__version__,
            exported_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            fragment=Markup(render_comparison_html(comparison)),
            figures=figures,
            explorer=explorer,
            explorer_rows=len(rows),
            explorer_noun="aligned case × metric rows (the mode filter selects a metric)",
            data_id="heta-explorer-" + context["id"],
            facts=facts,
            manifests=[],
            explorer_js=Markup(asset("explorer.js")),
        )
    )
