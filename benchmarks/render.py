"""Render time and size of the static HTML report view (issue: render layer budgets).

Budget: a 10,000-case x 3-mode report with 5 results per case renders in <= 150 ms
and <= 300 KB (best of 5). Each timed render uses a fresh report object over the same
data, so nothing cached on the object helps; the one-off template compilation is
timed separately. The fixture reports are rendered too. For context, the table also
shows the machine's floor: one bare Python pass over every score of the report.

    python benchmarks/render.py [--cases 10000] [--results 5] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

from heta_nb import load_report
from heta_nb.model.report import EvaluationReport
from heta_nb.render import build_report_context, render_report_html
from heta_nb.render.env import environment
from heta_nb.testing import synthetic_report

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "heta-0.1.2").glob("report-*.json"))
MODES = ("full_text_search", "extractive_answer", "sql_text_search")
BUDGET_MS = 150.0
BUDGET_KB = 300.0


def best_of(repeat: int, func) -> tuple[float, object]:
    """Best wall time in ms over ``repeat`` runs, and the last result."""
    best = float("inf")
    value = None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        value = func()
        best = min(best, time.perf_counter() - start)
    return best * 1000, value


def bare_pass(report: EvaluationReport) -> None:
    """Touch every score once: the least any one-pass summary has to do."""
    for result in report.raw["case_results"]:
        for score in result["scores"]:
            score["value"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases (each run in 3 modes)")
    parser.add_argument("--results", type=int, default=5, help="results per response")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print(f"building synthetic_report({args.cases:,}, modes={len(MODES)}, results_per_case={args.results}) ...")
    report = synthetic_report(args.cases, modes=MODES, results_per_case=args.results)
    data = report.raw

    start = time.perf_counter()
    environment().get_template("report.html.j2")
    compile_ms = (time.perf_counter() - start) * 1000

    rows = []
    context_ms, context = best_of(args.repeat, lambda: build_report_context(EvaluationReport.from_raw(data)))
    template = environment().get_template("report.html.j2")
    template_ms, _ = best_of(args.repeat, lambda: template.render(ctx=context))
    ms, html = best_of(args.repeat, lambda: render_report_html(EvaluationReport.from_raw(data)))
    rows.append((f"{args.cases:,} cases x {len(MODES)} modes", ms, len(str(html).encode()) / 1024, True))
    floor_ms, _ = best_of(args.repeat, lambda: bare_pass(report))
    for path in FIXTURES:
        fixture = load_report(path)
        fms, fhtml = best_of(args.repeat, lambda f=fixture: render_report_html(EvaluationReport.from_raw(f.raw)))
        rows.append((path.name, fms, len(str(fhtml).encode()) / 1024, False))

    print(f"\ntemplate compilation (once per process): {compile_ms:.1f} ms")
    print(f"machine floor, a bare pass over every score of the big report: {floor_ms:.1f} ms")
    print(f"big report: context {context_ms:.1f} ms + template {template_ms:.1f} ms (best of each)\n")
    header = f"{'report':<34} {'ms':>8} {'budget':>7} {'ratio':>6}   {'KB':>7} {'budget':>7} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for name, ms, kb, budgeted in rows:
        if budgeted:
            print(
                f"{name:<34} {ms:>8.1f} {BUDGET_MS:>7.0f} {ms / BUDGET_MS:>6.2f}   "
                f"{kb:>7.1f} {BUDGET_KB:>7.0f} {kb / BUDGET_KB:>6.2f}"
            )
        else:
            print(f"{name:<34} {ms:>8.1f} {'':>7} {'':>6}   {kb:>7.1f}")


if __name__ == "__main__":
    main()
