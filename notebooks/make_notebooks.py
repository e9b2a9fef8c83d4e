"""Write the tutorial notebooks (stored without outputs; cell ids fixed so diffs stay clean).

    python notebooks/make_notebooks.py

Edit the cell sources here, not in the .ipynb files.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

QUICKSTART = [
    ("md", """# heta_nb quickstart: evaluate two Heta recipes in five minutes

This notebook builds two real [Heta](https://pypi.org/project/heta-framework/) knowledge bases from
recipes that differ only in chunk size, evaluates both on the bundled *Saltmarsh Isles* benchmark with a
live progress widget, explores the reports, compares the recipes with paired statistics, and exports
a standalone HTML page and a notebook. Everything runs offline."""),
    ("code", "%load_ext heta_nb"),
    ("code", """import tempfile
from pathlib import Path

import heta_nb
from heta_nb import demo

workdir = Path(tempfile.mkdtemp(prefix="heta-quickstart-"))
benchmark = demo.load_benchmark()
benchmark"""),
    ("md", """## Two recipes

Both parse the documents, split them into chunks (offline `unicode` tokenisation) and index them for
BM25 full-text search. `small-chunks` cuts 160-character chunks, `large-chunks` 700-character ones.
The demo also registers an `extractive_answer` query mode that answers with the best-matching
sentence, so the answer metrics mean something."""),
    ("code", """recipes = demo.recipes(workdir / "kbs")
store = heta_nb.ReportStore(workdir / "reports")   # Heta's layout: _heta/knowledge_bases/...
settings = dict(
    query_engines=demo.demo_query_engines(),
    knowledge_base_name="saltmarsh isles",
    query_modes=list(demo.DEMO_MODES),
    evaluators=list(demo.DEMO_EVALUATORS),
    top_k=5,
    store=store,
)
{name: recipe.manifest().to_dict()["capabilities_provided"] for name, recipe in recipes.items()}"""),
    ("md", """## Run with live progress

`heta_nb.start` returns at once and shows a live widget (progress, rate, ETA, errors, running scores,
KB build steps, and a **Cancel** button); the kernel stays free. `run.result()` waits for the report.
`heta_nb.evaluate` does the same but blocks."""),
    ("code", """run = heta_nb.start(benchmark, recipe=recipes["small-chunks"], report_id="small-chunks", **settings)"""),
    ("code", """small = run.result()
large = heta_nb.evaluate(benchmark, recipe=recipes["large-chunks"], report_id="large-chunks", **settings)"""),
    ("md", """## Explore a report

A report renders as a static, safe HTML view: header, score summary with confidence intervals (and
the errors and skipped scores Heta's own summary hides), the worst cases per mode, errors, and a
drill-down per case."""),
    ("code", "small"),
    ("code", "small.summary_frame()"),
    ("code", """small.cases_frame().sort_values("recall@5").head()"""),
    ("md", """## Compare the recipes

Paired by case: mean differences with bootstrap confidence intervals, permutation-test p-values
(Holm-corrected), and wins / ties / losses."""),
    ("code", """comparison = heta_nb.compare(small, large, names=["small chunks", "large chunks"], modes=["extractive_answer"])
comparison"""),
    ("code", """comparison.summary_frame()"""),
    ("md", "## Export"),
    ("code", """html_path = workdir / "comparison.html"
heta_nb.to_html(comparison, html_path)        # one offline file, every case searchable
notebook_path = workdir / "small-chunks.ipynb"
heta_nb.to_notebook(small, notebook_path)     # a notebook that renders on GitHub unexecuted
sorted(p.name for p in workdir.iterdir() if p.is_file())"""),
    ("code", "%heta_runs {store.location}"),
]

EXPLORE = [
    ("md", """# Explore evaluation reports

Open reports from a store, drill into cases, look at distributions and per-label slices, find the
worst cases, and open a report that Heta itself wrote."""),
    ("code", "%load_ext heta_nb"),
    ("code", """import tempfile
from pathlib import Path

import heta_nb
from heta_nb import demo

workdir = Path(tempfile.mkdtemp(prefix="heta-explore-"))
result = demo.run_demo(workdir / "output", workdir / "store", progress=False)
store = heta_nb.ReportStore(workdir / "store")"""),
    ("md", "## The store\n\n`%heta_runs` lists every report in a store (a folder, an fsspec URL or a Heta ObjectStore)."),
    ("code", "%heta_runs {store.location}"),
    ("code", """report = store.load("saltmarsh isles", "small-chunks")
report.mode_counts()"""),
    ("md", "## Drill down into one case"),
    ("code", """report.case("q031", "extractive_answer")"""),
    ("md", "## Distributions"),
    ("code", """heta_nb.plots.plot_scores(report, "recall@5").figure"""),
    ("code", """heta_nb.plots.plot_latency(report).figure"""),
    ("code", "heta_nb.tables.score_quantiles(report)"),
    ("md", """## Per-label slices

Reports do not store case labels; join with the benchmark to slice by hop count or question type."""),
    ("code", """benchmark = demo.load_benchmark()
heta_nb.tables.label_breakdown(report, benchmark, "question_type", metrics=["recall@5"])"""),
    ("code", """heta_nb.plots.plot_by_label(report, benchmark, "recall@5", "hops").figure"""),
    ("md", "## The worst cases"),
    ("code", """heta_nb.tables.worst_cases(report, "recall@5", mode="full_text_search", n=8, benchmark=benchmark)"""),
    ("md", """## A report Heta itself wrote

Heta's own `BenchmarkRunner` writes `report.json` into the KB's object store; heta_nb reads it back
exactly (Heta has no loader) and shows it like any other."""),
    ("code", """import asyncio

from heta_framework.evaluation import (
    AnswerContains, BenchmarkManifest, BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace,
    EvidenceRecallAtK, JsonlBenchmark,
)

manifest = benchmark.manifest
heta_benchmark = JsonlBenchmark(
    manifest=BenchmarkManifest(name=manifest.name, version=manifest.version, split=manifest.split,
                               task_type=manifest.task_type),
    documents_jsonl=demo.DATA / "documents.jsonl",
    cases_jsonl=demo.DATA / "cases.jsonl",
    evaluator_list=(EvidenceRecallAtK(k=5), AnswerContains()),
)
recipe = demo.recipes(workdir / "heta")["large-chunks"]
heta_result = await BenchmarkRunner().run(
    benchmark=heta_benchmark, recipe=recipe, knowledge_base_name="heta run",
    query_modes=("full_text_search",),
    workspace=BenchmarkWorkspace(root_dir=workdir / "ws", cache_dir=workdir / "ws" / "cache"),
    config=BenchmarkRunConfig(top_k=5, report_id="written-by-heta"),
)
heta_report = heta_nb.load_report(heta_result.report)
heta_report"""),
    ("code", """%heta_runs {recipe.stores.objects.config.root}"""),
]

OWN_KB = [
    ("md", """# Evaluate your own knowledge base

heta_nb's runner takes any retrieval function or non-Heta system, custom evaluators, benchmarks in
common formats, and long runs that you shard, interrupt and resume."""),
    ("code", "%load_ext heta_nb"),
    ("code", """import re
import tempfile
from pathlib import Path

import heta_nb
from heta_nb import demo

workdir = Path(tempfile.mkdtemp(prefix="heta-own-kb-"))
benchmark = demo.load_benchmark()
documents = {d.document_id: d.read_bytes().decode() for d in benchmark.documents}
words = lambda text: set(re.findall(r"[a-z0-9]+", text.lower()))"""),
    ("md", """## A plain function as the knowledge base

Any function taking the query text (and optionally `mode`, `top_k`, `options`, `trace`) works. It may
return a list of result dicts; `source.document_id` tells heta_nb which benchmark document it is."""),
    ("code", """def keyword_search(query, top_k=5):
    q = words(query)
    ranked = sorted(documents, key=lambda d: -len(q & words(documents[d])))
    return [{"id": d, "text": documents[d][:300], "score": len(q & words(documents[d])),
             "source": {"document_id": d}} for d in ranked[:top_k]]

report = heta_nb.evaluate(benchmark, kb=keyword_search, knowledge_base_name="keyword search",
                          query_modes=["keywords"], evaluators=["recall@5", "ndcg@5", "mrr@5"],
                          store=None, progress=False)
report.summary_frame()[["query_mode", "metric", "mean", "n", "ci_low", "ci_high"]]"""),
    ("md", """## A custom evaluator

A function `(case, response)` returning a number, a bool or a string; its name is the score name."""),
    ("code", """def distinct_documents(case, response):
    return len({r.source.get("document_id") for r in response.results})

report = heta_nb.evaluate(benchmark, kb=keyword_search, knowledge_base_name="keyword search",
                          query_modes=["keywords"], evaluators=["recall@5", distinct_documents],
                          store=None, progress=False)
report.summary_frame()[["metric", "mean", "n"]]"""),
    ("md", """## A BEIR-format folder

`heta_nb.load_benchmark` reads Heta's JSONL layout, BEIR folders (graded qrels) and MultiHop-RAG files."""),
    ("code", """import json

beir = workdir / "beir_tiny"
(beir / "qrels").mkdir(parents=True)
corpus = [("b1", "Tides", "The spring tide floods the salt marsh twice a month."),
          ("b2", "Ferries", "The ferry to Greyholm leaves at dawn."),
          ("b3", "Lamps", "The lighthouse lamp burns paraffin.")]
(beir / "corpus.jsonl").write_text("\\n".join(json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in corpus))
(beir / "queries.jsonl").write_text("\\n".join(json.dumps({"_id": q, "text": t}) for q, t in
                                     [("q1", "when does the tide flood the marsh"), ("q2", "ferry departure")]))
(beir / "qrels" / "test.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\tb1\\t2\\nq2\\tb2\\t1\\nq2\\tb3\\t0\\n")
beir_benchmark = heta_nb.load_benchmark(beir)
beir_docs = {d.document_id: d.read_bytes().decode() for d in beir_benchmark.documents}

def beir_search(query, top_k=10):
    q = words(query)
    ranked = sorted(beir_docs, key=lambda d: -len(q & words(beir_docs[d])))
    return [{"id": d, "text": beir_docs[d], "source": {"document_id": d}} for d in ranked[:top_k]]

heta_nb.evaluate(beir_benchmark, kb=beir_search, knowledge_base_name="beir search", query_modes=["bm0"],
                 store=None, progress=False).summary_frame()[["metric", "mean", "n"]]"""),
    ("md", """## Shards and merge

`shard=(i, n)` runs a stable subset (by a hash of the case id); `merge_reports` puts the shards
together into exactly the report a single run gives."""),
    ("code", """common = dict(kb=keyword_search, knowledge_base_name="keyword search", query_modes=["keywords"],
              evaluators=["recall@5"], store=None, progress=False, report_id="sharded")
shards = [heta_nb.evaluate(benchmark, shard=(i, 3), **common) for i in range(3)]
merged = heta_nb.merge_reports(shards)
single = heta_nb.evaluate(benchmark, **common)
[len(s.case_results) for s in shards], dict(merged.score_summary) == dict(single.score_summary)"""),
    ("md", """## Interrupt and resume

Every finished case is checkpointed in the store as it completes. Cancel a run (or lose the kernel):
`resume=True` with the same report id finishes only what is missing."""),
    ("code", """import time

def slow_search(query, top_k=5):
    time.sleep(0.05)
    return keyword_search(query, top_k)

store = heta_nb.ReportStore(workdir / "store")
run = heta_nb.start(benchmark, kb=slow_search, knowledge_base_name="slow search", query_modes=["keywords"],
                    evaluators=["recall@5"], store=store, report_id="resumable", concurrency=2, progress=False)
while run.state.done < 10:
    time.sleep(0.05)
run.cancel()
partial = run.result()
partial.metadata["heta_nb"]["status"], len(partial.case_results)"""),
    ("code", """finished = heta_nb.evaluate(benchmark, kb=slow_search, knowledge_base_name="slow search",
                            query_modes=["keywords"], evaluators=["recall@5"], store=store,
                            report_id="resumable", resume=True, concurrency=8, progress=False)
finished.metadata["heta_nb"]["status"], finished.metadata["heta_nb"]["resumed"], len(finished.case_results)"""),
]


def build(name: str, cells: list[tuple[str, str]], folder: Path = HERE) -> Path:
    """Write one notebook with deterministic cell ids and no outputs."""
    stem = name.split("-", 1)[0]
    notebook = new_notebook(
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
        }
    )
    for index, (kind, source) in enumerate(cells):
        cell = new_markdown_cell(source) if kind == "md" else new_code_cell(source)
        cell["id"] = f"nb{stem}-{index:02d}"
        notebook.cells.append(cell)
    nbformat.validate(notebook)
    nbformat.write(notebook, folder / name)
    return folder / name


NOTEBOOKS = {
    "01-quickstart.ipynb": QUICKSTART,
    "02-explore-a-report.ipynb": EXPLORE,
    "03-your-own-kb.ipynb": OWN_KB,
}


def main(folder: Path = HERE) -> None:
    for name, cells in NOTEBOOKS.items():
        build(name, cells, folder)


if __name__ == "__main__":
    main()
