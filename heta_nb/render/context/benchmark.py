"""The render context of a benchmark: manifest, counts, label distributions, first cases."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from heta_nb._util.text import clip, clip_label, shorten
from heta_nb.render.context.formatting import describe, mapping_entries, percent, safe_url
from heta_nb.render.env import format_count
from heta_nb.render.limits import DEFAULT_LIMITS, RenderLimits

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.benchmark import Benchmark

__all__ = ["benchmark_context"]


def benchmark_context(benchmark: Benchmark, limits: RenderLimits | None = None) -> dict[str, Any]:
    """Manifest, counts, label distributions and the first cases of a benchmark.

    Args:
        benchmark: the benchmark.
        limits: what to show at most.

    Returns:
        Plain data for ``benchmark.html.j2``.
    """
    limits = limits or DEFAULT_LIMITS
    manifest = benchmark.manifest
    cases = benchmark.cases
    label_values: dict[str, dict[str, int]] = {}
    answers = evidence = 0
    for case in cases:
        for key, value in islice(case.labels.items(), 50):
            if len(label_values) >= 50 and key not in label_values:
                continue
            shown = shorten(describe(value, 60), 60)
            bucket = label_values.setdefault(key, {})
            if shown in bucket or len(bucket) < 1000:
                bucket[shown] = bucket.get(shown, 0) + 1
        answers += bool(case.expected.answers)
        evidence += bool(case.expected.evidence)
    labels = []
    for key, bucket in islice(label_values.items(), limits.max_metadata_items):
        top = sorted(bucket.items(), key=lambda item: (-item[1], item[0]))[:10]
        labels.append(
            {
                "key": clip_label(key, limits.max_name_chars),
                "values": [
                    {"value": clip_label(v, 60), "count": format_count(n), "share": percent(n, len(cases))}
                    for v, n in top
                ],
                "more": max(0, len(bucket) - len(top)),
            }
        )
    media: dict[str, int] = {}
    for document in benchmark.documents:
        media[document.media_type] = media.get(document.media_type, 0) + 1
    rows = []
    for case in cases[: limits.max_benchmark_cases]:
        first = case.expected.answers[0] if case.expected.answers else None
        rows.append(
            {
                "case_id": clip_label(case.case_id, limits.max_name_chars),
                "query": clip(case.query, limits.max_cell_chars),
                "answer": clip(first, limits.max_cell_chars) if first is not None else None,
                "answers_more": max(0, len(case.expected.answers) - 1),
                "evidence": format_count(len(case.expected.evidence)),
                "labels": clip_label(describe(dict(case.labels), 120), 120) if case.labels else None,
            }
        )
    evaluators = []
    for evaluator in benchmark.default_evaluators[: limits.max_list_items]:
        name = evaluator if isinstance(evaluator, str) else getattr(evaluator, "name", None)
        if not isinstance(name, str):
            name = getattr(evaluator, "__name__", type(evaluator).__name__)
        evaluators.append(clip_label(name, limits.max_name_chars))
    homepage = manifest.homepage
    return {
        "name": clip_label(manifest.name, limits.max_name_chars),
        "version": clip_label(manifest.version, 40),
        "split": clip_label(manifest.split, 40),
        "task_type": clip_label(manifest.task_type, limits.max_name_chars),
        "build_scope": shorten(manifest.build_scope, 20),
        "homepage": clip_label(homepage, limits.max_name_chars + 40) if homepage else None,
        "homepage_url": safe_url(homepage),
        "license": clip_label(manifest.license, limits.max_name_chars) if manifest.license else None,
        "citation": clip(manifest.citation, limits.max_text_chars) if manifest.citation else None,
        "meta": mapping_entries(manifest.metadata, limits, value_chars=limits.max_text_chars),
        "source": clip_label(benchmark.source, limits.max_name_chars + 80) if benchmark.source else None,
        "documents": format_count(len(benchmark.documents)),
        "cases": format_count(len(cases)),
        "units": format_count(len(benchmark.units)),
        "with_answers": format_count(answers),
        "with_evidence": format_count(evidence),
        "media": [
            {"type": clip_label(t, 60), "count": format_count(n)}
            for t, n in sorted(media.items(), key=lambda item: -item[1])[:10]
        ],
        "evaluators": evaluators,
        "labels": labels,
        "labels_more": max(0, len(label_values) - len(labels)),
        "rows": rows,
        "note": (
            f"showing {len(rows):,} of {len(cases):,} cases" if len(cases) > len(rows) else f"all {len(cases):,} cases"
        ),
    }
