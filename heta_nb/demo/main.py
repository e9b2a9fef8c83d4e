"""``make demo`` / ``heta-nb demo``: evaluate two real Heta recipes on the bundled benchmark."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from heta_nb._util.atomic import write_atomically
from heta_nb.demo.settings import DEMO_EVALUATORS, DEMO_MODES, RECIPE_CHUNKS, load_benchmark

__all__ = ["DemoResult", "run_demo"]

KB_NAME = "saltmarsh isles"


@dataclass
class DemoResult:
    """What the demo produced."""

    reports: dict[str, Any]
    store: Path
    outputs: dict[str, Path] = field(default_factory=dict)
    comparison: Any = None
    seconds: float = 0.0


def run_demo(
    output_dir: str | Path = "demo-output",
    store_dir: str | Path = "demo-store",
    *,
    progress: bool | str | Callable[..., None] = "console",
    stream: IO[str] | None = None,
) -> DemoResult:
    """Evaluate the two demo recipes, save the reports and write the demo outputs.

    Each recipe builds its KB in a fresh temporary object store (so reruns never see
    "already exists" and no stray ``raw/`` objects leak into the corpus); the reports
    go to ``store_dir`` in Heta's layout, replacing the previous demo's.

    Args:
        progress: each evaluation's progress display (as :func:`heta_nb.evaluate`'s); False: none.
        stream: where each recipe's header and the summary of scores are printed. By default
            ``sys.stdout``, and nowhere with ``progress=False`` (a notebook shows the returned
            result; pass ``stream=sys.stdout`` for the text too).

    Returns:
        The reports by recipe name, the store path and the written files.
    """
    from heta_nb.api import evaluate
    from heta_nb.demo.heta_recipes import demo_query_engines, demo_recipe
    from heta_nb.store import ReportStore

    out = stream if stream is not None else (None if progress is False else sys.stdout)
    started = time.perf_counter()
    benchmark = load_benchmark()
    store = ReportStore(store_dir)
    reports: dict[str, Any] = {}
    scratch = Path(tempfile.mkdtemp(prefix="heta_nb-demo-"))
    try:
        for name, (chunk, overlap) in RECIPE_CHUNKS.items():
            if out is not None:
                print(f"\n== recipe {name!r}: BM25 over chunks of {chunk} characters (overlap {overlap})", file=out)
            reports[name] = evaluate(
                benchmark,
                recipe=demo_recipe(scratch / name, chunk, overlap),
                query_engines=demo_query_engines(),
                knowledge_base_name=KB_NAME,
                report_id=name,
                query_modes=list(DEMO_MODES),
                evaluators=list(DEMO_EVALUATORS),
                top_k=5,
                store=store,
                overwrite=True,
                progress=progress,
                metadata={"demo": "heta_nb", "recipe": name},
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = DemoResult(reports=reports, store=Path(store_dir))
    _write_outputs(result, Path(output_dir))
    result.seconds = time.perf_counter() - started
    if out is not None:
        _print_summary(result, out)
    return result


def _write_outputs(result: DemoResult, output_dir: Path) -> None:
    """comparison.html, report.html and report.ipynb (the first recipe), plus summary CSVs."""
    from heta_nb.comparison import compare
    from heta_nb.export import to_html
    from heta_nb.notebook import to_notebook

    output_dir.mkdir(parents=True, exist_ok=True)
    names = list(result.reports)
    # recipes compared in the mode that both retrieves and answers
    gold = load_benchmark()  # the exports show each case's expected answers and evidence, slices its labels
    result.comparison = compare(*result.reports.values(), names=names, modes=["extractive_answer"], benchmark=gold)
    to_html(result.comparison, output_dir / "comparison.html", benchmark=gold)
    result.outputs["comparison"] = output_dir / "comparison.html"
    first = result.reports[names[0]]
    to_html(first, output_dir / "report.html", benchmark=gold)
    result.outputs["report"] = output_dir / "report.html"
    to_notebook(first, output_dir / "report.ipynb")
    result.outputs["notebook"] = output_dir / "report.ipynb"
    for name, report in result.reports.items():
        path = output_dir / f"{name}.summary.csv"
        write_atomically(path, report.summary_frame().to_csv(index=False).encode("utf-8"))
        result.outputs[f"{name} summary"] = path


def _print_summary(result: DemoResult, out: IO[str]) -> None:
    import pandas as pd

    rows = []
    for name, report in result.reports.items():
        for item in report.metric_summaries():
            rows.append(
                {
                    "recipe": name,
                    "mode": item.mode,
                    "metric": item.metric,
                    "mean": item.shown,  # the one summary: of the scored values (n/a: NaN), as compare tests it
                    "n": item.shown_n,
                }
            )
    frame = pd.DataFrame(rows)
    table = frame.pivot_table(index=["mode", "metric"], columns="recipe", values="mean", sort=False, dropna=False)
    print(
        "\n== mean scores (of the scored cases, skipped left out, as compared below; 95 % CIs in the reports)", file=out
    )
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 120):
        print(table.to_string(na_rep="n/a"), file=out)
    if result.comparison is not None:
        comparison = result.comparison
        title = (
            f"paired differences vs {comparison.baseline}, mode by mode (per case, 95 % bootstrap CI per test; "
            f"{comparison.family_text})"
        )
        print(f"\n== {title}", file=out)
        for line in comparison.headline():
            print(f"  {line}", file=out)
        for row in comparison.summary_rows():
            if row["verdict"].startswith("n/a"):
                print(f"  {row['system']:>32} {row['metric']:>18}: {row['verdict']}", file=out)
                continue
            print(
                f"  {row['system']:>32} {row['metric']:>18}: {row['mean_diff']:+.3f} "
                f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]  {row['verdict']}",
                file=out,
            )
        for note in result.comparison.notes:
            print(f"  note: {note}", file=out)
    print(f"\nreports saved in {result.store.resolve()} (Heta's layout):", file=out)
    for report in result.reports.values():
        print(f"  {report.report_key}", file=out)
    for label, path in result.outputs.items():
        print(f"{label}: {path.resolve()}", file=out)
    print(f"demo finished in {result.seconds:.1f} s", file=out)
