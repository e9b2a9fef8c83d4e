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
    ("md", """While it runs, the widget's **Explore results so far** button opens the case explorer on the cases
finished so far: its counts grow as cases finish, and it becomes the final report's explorer when
the run ends. `heta_nb.explore(run)` does the same in a cell of its own, and `run.partial_report()`
is a real report of the cases finished so far (summary, frames, views, export and compare work on
it; `metadata["heta_nb"]["partial"]` says how far the run was; it is never saved: the store only
holds the final report). Once the run has ended, it is the final report."""),
    ("code", """run.wait(20)  # "Run All" gets here at once: wait for the first 20 results
so_far = run.partial_report()
partial = so_far.metadata["heta_nb"].get("partial")  # {"done", "total"}; None once the run has ended
print(f"results so far: {partial['done']} of {partial['total']}" if partial else "the run has ended")"""),
    ("code", """small = run.result()
large = heta_nb.evaluate(benchmark, recipe=recipes["large-chunks"], report_id="large-chunks", **settings)"""),
    ("md", """## Explore a report

A report renders as a static, safe HTML view: header, score summary with confidence intervals (and
the errors and skipped scores Heta's own summary hides), the worst cases per mode, errors, and a
drill-down per case."""),
    ("code", "small"),
    ("code", "small.summary_frame()"),
    ("code", """small.cases_frame().sort_values("recall@5").head()"""),
    ("md", """## Explore every case

`report.explore()` opens a case explorer: search (case id, query, answer, error), filter by mode, status,
benchmark label or metric range, sort any column, and click a row (or press `j` / `k`) to see the query,
the expected answers and evidence, the answer, the retrieved chunks marked relevant or not, every score
and the trace. The kernel does the work and sends one page of 50 rows at a time, so it stays fast on
100,000 results. What you find is plain data: `explorer.selection` is the filtered DataFrame and
`explorer.case` the open case."""),
    ("code", """explorer = small.explore(benchmark=benchmark, mode="extractive_answer")
explorer"""),
    ("code", """explorer.filter(search="light", metric="answer_f1", high=0.5).sort("recall@5")
explorer.open(0)
explorer.selection[["case_id", "query", "recall@5", "answer_f1"]].head()"""),
    ("md", """## Compare the recipes

Paired by case: mean differences with bootstrap confidence intervals, permutation-test p-values
(Holm-corrected), and wins / ties / losses."""),
    ("code", """comparison = heta_nb.compare(small, large, names=["small chunks", "large chunks"], modes=["extractive_answer"])
comparison"""),
    ("code", """comparison.summary_frame()"""),
    ("md", """Explore the comparison case by case: both recipes side by side, deltas coloured, and quick filters
for the regressions, the improvements or every case that differs (ordered by the metric you choose)."""),
    ("code", """comparison.explore(benchmark=benchmark, quick="regressions", metric="answer_f1")"""),
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
    ("md", """## Explore every case

`%heta_explore` (or `heta_nb.explore`) takes a report, a comparison, a path, `STORE:KB/ID`, or a whole
store (`--store`: pick a report in the widget). With the benchmark, the label filter and the gold data
in the case panel work too."""),
    ("code", """%heta_explore --store {store.location}"""),
    ("code", """benchmark = demo.load_benchmark()
explorer = heta_nb.explore(report, benchmark=benchmark, label="hops = 3", metric="recall@5", high=0.5)
explorer"""),
    ("code", """explorer.open(0)
explorer.case.case_id, explorer.matched, explorer.status_counts"""),
    ("md", """## Results while a run goes on

`heta_nb.explore(run)` explores a running evaluation (the handle of `heta_nb.start`): the table holds
the cases finished so far, its counts grow as cases finish (a few refreshes a second at most, from a
thread of its own, so it keeps up while this kernel is busy in another cell), and it becomes the final
report's explorer when the run ends. The live widget's **Explore results so far** button opens the same
explorer. `run.partial_report()` is a report of the cases finished so far, marked partial and never
saved. Here a "KB" replays the stored report's responses, a little slowly."""),
    ("code", """import time

responses = {(r.query, r.query_mode): r.response.raw for r in report.case_results if r.response is not None}


def replay_kb(query, *, mode, top_k):
    time.sleep(0.05)
    return responses[(query, mode)]


run = heta_nb.start(benchmark, kb=replay_kb, knowledge_base_name="replay", query_modes=list(demo.DEMO_MODES),
                    evaluators=list(demo.DEMO_EVALUATORS), top_k=5, store=None, concurrency=2, progress=False)
heta_nb.explore(run, benchmark=benchmark, status="ok")"""),
    ("code", """run.wait(20)  # "Run All" gets here at once: wait for the first 20 results
so_far = run.partial_report()
partial = so_far.metadata["heta_nb"].get("partial")  # {"done", "total"}; None once the run has ended
print(f"results so far: {partial['done']} of {partial['total']}" if partial else "the run has ended")
so_far.summary_frame().shape"""),
    ("code", """replayed = run.result()
dict(replayed.score_summary) == dict(report.score_summary)"""),
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

A function `(case, response)` (sync or async) returning a number, a bool or a string; its name is the
score name. An object with a `name` and an `evaluate(*, case, response)` method works too.

`response` has the same shape whatever your KB returned: here it is heta_nb's `QueryResponse`, built
from the list of dicts `keyword_search` returns (the response the report records), so
`response.results` (each with `id`, `text`, `score`, `source`, `metadata`), `response.answer` (None
here: this KB does not answer), `response.citations` and `response.metadata` are always there. For a
Heta `KnowledgeBase` it is Heta's own `QueryResponse`, exactly what Heta's evaluators get in Heta's runner.

To see the very object your KB returned, add a parameter named `raw` (`f(case, response, raw)`, or a
keyword `raw`): here, the list of dicts itself."""),
    ("code", """def distinct_documents(case, response):
    return len({r.source.get("document_id") for r in response.results})

def top_overlap(case, response, raw):  # raw: keyword_search's own list of dicts
    return raw[0]["score"] if raw else 0

report = heta_nb.evaluate(benchmark, kb=keyword_search, knowledge_base_name="keyword search",
                          query_modes=["keywords"], evaluators=["recall@5", distinct_documents, top_overlap],
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


SCALE_OUT = [
    ("md", """# Beyond one machine: sweep recipes over benchmarks, on Dask

One recipe can run several benchmarks, and one benchmark can compare several recipes. `heta_nb.sweep`
evaluates every (recipe, benchmark) pair, in parallel, saves each report in a store, reuses finished
reports when it runs again, and returns a **leaderboard**: each recipe's mean and confidence interval
per benchmark and metric, and which differences from a baseline recipe are real (paired tests,
Holm-corrected over the whole board). Here the pairs run on a Dask `LocalCluster` of two worker
processes; the same call runs on any Dask cluster. Everything runs offline."""),
    ("code", "%load_ext heta_nb"),
    ("code", """import functools
import tempfile
from pathlib import Path

import heta_nb
from heta_nb import demo
from heta_nb.benchmark import Benchmark
from heta_nb.demo.heta_recipes import demo_recipe

workdir = Path(tempfile.mkdtemp(prefix="heta-scale-out-"))
store = workdir / "store"
whole = demo.load_benchmark()


def by_hops(version, keep):
    \"\"\"The demo's cases with some numbers of hops: the same documents, another benchmark version.\"\"\"
    cases = [case for case in whole.cases if keep(int(case.labels.get("hops", 0)))]
    return Benchmark(whole.manifest.replace(version=version), whole.documents, cases, evaluators=whole.default_evaluators)


benchmarks = {"single-hop": by_hops("1-single-hop", lambda h: h <= 1), "multi-hop": by_hops("1-multi-hop", lambda h: h >= 2)}
{name: len(b.cases) for name, b in benchmarks.items()}"""),
    ("md", """## Recipes as factories

A Heta recipe carries its stores, and Heta's `ParseDocuments` reads everything under `raw/`: one recipe
*object* evaluated on two benchmarks would mix their corpora. So a sweep takes a **factory**, a function
`folder -> recipe`, and calls it once per pair with the pair's own folder. Three chunk sizes of the
demo's full-text (BM25) recipe:"""),
    ("code", """recipes = {
    f"chunks-{size}": functools.partial(demo_recipe, chunk_size=size, overlap=size // 8)
    for size in (120, 300, 700)
}
settings = dict(
    query_engines=demo.demo_query_engines(),
    query_modes=["extractive_answer"],
    evaluators=["recall@5", "ndcg@5", "answer_f1"],
    top_k=5,
)"""),
    ("md", """## A Dask cluster

`LocalCluster` starts a scheduler and two worker processes on this machine (the link opens the Dask
dashboard: task stream, workers, memory). Heta's full-text KBs score every chunk in Python, so pairs
are CPU-bound: threads would take turns on one interpreter lock, processes run side by side."""),
    ("code", """try:
    from dask.distributed import Client, LocalCluster
except ImportError:  # the [notebooks] extra (make lab) installs Dask; without it the pairs run in local processes
    client = None
    print("Dask is not installed: pip install 'heta-nb[notebooks]' (or make lab) for the cluster and its dashboard; "
          "the sweep below runs in a local process pool instead.")
else:
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    print(f"Dask dashboard: {client.dashboard_link}")"""),
    ("md", """## The sweep

The table shows each pair as it goes: queued, building (the recipe step), running n/N, done or
failed, with an overall ETA. When it ends it stays in the notebook as an ordinary output."""),
    ("code", """board = heta_nb.sweep(benchmarks, recipes, store=store, executor=client or "processes", **settings)
board"""),
    ("md", """## Reading the leaderboard

★ marks the best mean of each column; ▲ and ▼ mark differences from the baseline (the first recipe)
that survive Holm's correction over every test on the board; hover a cell for its paired difference.
`frame()` has every number: means and CIs, ranks, paired differences with their CIs, raw and
adjusted p-values, wins / ties / losses."""),
    ("code", "board.frame(wide=True)"),
    ("md", """Every recipe against the baseline, with its verdict: `better` / `worse` where the difference is
real, `underpowered` where the benchmark could not have seen a difference that small
(`min_detectable_difference`: the smallest it can tell apart), `n/a` where the mode cannot
produce the metric."""),
    ("code", """columns = ["benchmark", "system", "metric", "mean_diff", "diff_ci_low", "diff_ci_high", "p_adjusted",
           "min_detectable_difference", "verdict"]
board.frame().query("not is_baseline")[columns]"""),
    ("code", """board.plot("ndcg@5")"""),
    ("code", """board.plot("answer_f1", kind="dots")"""),
    ("md", """Each paired test is `heta_nb.compare` on the two reports; the comparison is one call away:"""),
    ("code", """board.comparison("multi-hop", "chunks-700")"""),
    ("md", """## Run it again

Finished reports are reused as they are (an interrupted pair resumes from its checkpoint), so a re-run
only does what is missing. Without `executor=`, pairs run in a process pool sized to this machine."""),
    ("code", """import time

started = time.perf_counter()
again = heta_nb.sweep(benchmarks, recipes, store=store, **settings)
f"re-run in {time.perf_counter() - started:.1f} s, same board: {again.rows() == board.rows()}\""""),
    ("md", """## Share it

An offline HTML page, notebook sections, or the command line over the store:"""),
    ("code", """board.to_html(workdir / "leaderboard.html")
cells = heta_nb.sections(board)
import subprocess, sys

print(subprocess.run([sys.executable, "-m", "heta_nb", "leaderboard", str(store), "--metrics", "ndcg@5"],
                     capture_output=True, text=True).stdout)"""),
    ("md", """## On an existing cluster

Point a `Client` at the scheduler instead of a `LocalCluster` (on SLURM, `dask_jobqueue.SLURMCluster`
gives one); the store and the recipes' folders (`workdir=`) must be paths every worker can reach, a
shared file system or an fsspec URL:

```python
client = Client("tcp://scheduler.example.org:8786")
board = heta_nb.sweep(benchmarks, recipes, store="/shared/heta/sweeps", workdir="/shared/heta/kbs",
                      executor=client, **settings)
```"""),
    ("code", """if client is not None:
    client.close()
    cluster.close()"""),
]


JUDGES = [
    ("md", """# LLM judges: judging the demo report

heta_nb's retrieval and answer metrics compare a response with the benchmark's gold data. **LLM
judges** ask a language model instead: is every claim of the answer supported by the retrieved
chunks (faithfulness)? Does the answer address the question (answer relevance)? Are the top-ranked
chunks the relevant ones (context precision)? Or any rubric you write in plain words.

This notebook judges the demo's reports *without querying the knowledge bases again*
(`heta_nb.rescore` replays their recorded responses): it picks a judge model, estimates the calls
first, judges, reads one case's verdicts and the calls, tokens and cost, compares the two recipes
under the same judge, explores the cases, and replays the judge's answers from a cache, as CI would.
Without a model configured it uses an offline stand-in, so it runs in seconds."""),
    ("code", "%load_ext heta_nb"),
    ("code", """import tempfile
from pathlib import Path

import heta_nb
from heta_nb import demo

workdir = Path(tempfile.mkdtemp(prefix="heta-judges-"))
result = demo.run_demo(workdir / "output", workdir / "store", progress=False)
store = heta_nb.ReportStore(workdir / "store")
benchmark = demo.load_benchmark()
demo_report = result.reports["small-chunks"]"""),
    ("md", """## Choose the judge model

A judge asks a language model. Name one (a [LiteLLM](https://docs.litellm.ai/docs/providers) model)
in environment variables before starting Jupyter. A local model with [Ollama](https://ollama.com)
(`ollama pull llama3.1` first):

```bash
export HETA_NB_JUDGE_MODEL=ollama/llama3.1
export HETA_NB_JUDGE_API_BASE=http://localhost:11434
```

or a hosted API (without `HETA_NB_JUDGE_API_KEY`, LiteLLM reads the provider's own variable, here
`OPENAI_API_KEY`):

```bash
export HETA_NB_JUDGE_MODEL=openai/gpt-4o-mini
export HETA_NB_JUDGE_API_KEY=sk-...
```

The next cell wraps Heta's `LanguageModel` in `heta_nb.JudgeModel`. Without `HETA_NB_JUDGE_MODEL` it
takes `heta_nb.llm_judges.standin_model()`: a deterministic **stand-in** that calls a claim supported
when most of its words occur in one chunk. It is not a language model and its verdicts are not a
language model's: it is there so this notebook runs offline and repeatably. Every score it gives
names it as its model."""),
    ("code", """import os

model_name = os.environ.get("HETA_NB_JUDGE_MODEL")
if model_name:
    from heta_framework.common.models.language.model import LanguageModel

    model = heta_nb.JudgeModel(
        LanguageModel(
            model_name=model_name,
            api_base=os.environ.get("HETA_NB_JUDGE_API_BASE"),
            api_key=os.environ.get("HETA_NB_JUDGE_API_KEY"),
        )
    )
    print(f"judge model: {model.name}")
else:
    model = heta_nb.llm_judges.standin_model()
    print(
        f"HETA_NB_JUDGE_MODEL is not set: judging with {model.name!r}.\\n"
        "This is a deterministic stand-in (word overlap), NOT a language model: its verdicts are not a "
        "language model's.\\nSet HETA_NB_JUDGE_MODEL (see above) and restart the kernel for real verdicts."
    )"""),
    ("md", """## What will judging take?

Four judges: three built in, and a rubric of our own (`heta_nb.judge(name, criteria, scale)`;
`include=` says what the judge reads, here the retrieved chunks too, since the rubric is about them).
`heta_nb.estimate` judges a few cases (`sample=3`) and scales the calls, tokens, cost and minutes to
the whole report, before you spend them. Its answers go into the judges' cache (`.judge_cache`, a
folder beside this notebook), so the run below does not pay for them twice. With a paid model, pass
`judge_prices=` for a cost; `max_cost=` stops a run at a budget."""),
    ("code", """judges = [
    heta_nb.llm_judges.Faithfulness(),
    heta_nb.llm_judges.AnswerRelevance(),
    heta_nb.llm_judges.ContextPrecision(),
    heta_nb.judge(
        "cites_evidence", "The answer only states what the retrieved chunks say.", include=["query", "answer", "chunks"]
    ),
]
settings = dict(benchmark=benchmark, judge_model=model, judge_cache=".judge_cache")
heta_nb.estimate(report=demo_report, evaluators=judges, sample=3, **settings)"""),
    ("md", """## Judge the report

`heta_nb.rescore` adds the judges' scores to the report without querying the knowledge base again:
the new report has the same responses, its own id, and is saved in the store next to its source.
`benchmark=` gives the judges the expected answers (`report.json` keeps no gold data).

The demo runs two modes: `extractive_answer` answers with the best-matching sentence of the top
chunks, `full_text_search` only retrieves. The answer judges (faithfulness, answer relevance, the
rubric) have nothing to judge there: each of their scores says "the response has no answer" and none
is averaged in. Context precision judges the chunks, so it scores both modes."""),
    ("code", """# the live widget counts calls and tokens as cases finish, then shows the judges' scores
judged = heta_nb.rescore(demo_report, judges, store=store, report_id="small-judged", progress=True, **settings)"""),
    ("md", """The judged report is the demo's report plus the judges' scores; its header adds up each judge's
model, calls, tokens and cost."""),
    ("code", "judged"),
    ("code", """judge_names = [j.name for j in judges]
judged.summary_frame().query("metric in @judge_names")[
    ["query_mode", "metric", "status", "mean", "n", "ci_low", "ci_high", "reason"]
]"""),
    ("md", """## One case's verdicts

Faithfulness splits the answer into claims and asks, claim by claim, whether a retrieved chunk
supports it; the score is the share supported. Each score keeps the verdicts in its metadata: the
claim, the verdict, the chunks that support it (their result ids) and the judge's reason. This answer
is faithful, every claim comes from a chunk, and yet it never says *who* designed the light: faithful
is not correct (`heta_nb.llm_judges.AnswerCorrectness` compares the answer with the expected one)."""),
    ("code", """import pandas as pd

pd.set_option("display.max_colwidth", None)  # whole claims, not cut at 50 characters
case = judged.case("q002", "extractive_answer")
faithfulness = case.score("faithfulness")
print(f"query:  {case.query}\\nanswer: {case.response.answer}")
print(f"faithfulness = {faithfulness.value}: {faithfulness.metadata['reason']}")
pd.DataFrame(
    [
        {
            "claim": claim["claim"],
            "verdict": claim["verdict"],
            "supported by": ", ".join(claim.get("result_ids") or ()),
            "reason": claim.get("reason"),
        }
        for claim in faithfulness.metadata["claims"]
    ]
)"""),
    ("md", """Every judge score also records its calls, the calls answered from the cache, the tokens and the
cost; `judge_totals` adds them up per judge (the report's header shows the same totals). The cached
calls are the estimate's sample, and context precision's second mode: both modes retrieve the same
chunks for the same question, so the second asks what the first already asked. A cached call costs
nothing; a cost is "unknown", never $0, when the model has no price."""),
    ("code", """from heta_nb.llm_judges.totals import judge_totals

pd.DataFrame(
    [
        {
            "judge": name,
            "model": total.model,
            "calls": total.calls,
            "cached": total.cached_calls,
            "tokens in": total.tokens_in,
            "tokens out": total.tokens_out,
            "cost": total.cost_text,
        }
        for name, total in judge_totals(judged).items()
    ]
).set_index("judge")"""),
    ("md", """## Compare the recipes under the same judge

Judge the other recipe's report with the same judges and model, and the judge metrics compare like
any other: paired by case, with confidence intervals and Holm-corrected tests. Had the two reports
been judged by different models (or judge versions), `compare` would not test those metrics: it says
"not comparable: judge differs"."""),
    ("code", """judged_large = heta_nb.rescore(
    result.reports["large-chunks"], judges, store=store, report_id="large-judged", progress=False, **settings
)
comparison = heta_nb.compare(judged, judged_large, names=["small chunks", "large chunks"], modes=["extractive_answer"])
print("\\n".join(comparison.headline()))
comparison"""),
    ("md", """## Explore the judged cases

The explorer has a column per judge; a case's panel shows each judge's verdicts: the claims and
their supporting chunks, the chunk verdicts, the reasons, and the calls and tokens."""),
    ("code", """explorer = judged.explore(benchmark=benchmark, mode="extractive_answer")
explorer.open(case_id="q002", mode="extractive_answer")
explorer"""),
    ("md", """## Replay in CI

The cache folder holds every answer the model gave, keyed by the model (its name, server and
sampling settings), the whole prompt and the answer's schema. Commit it (`.judge_cache/`) and judge
in CI with

```python
judge_cache=heta_nb.JudgeCache(".judge_cache", mode="replay")
```

and the same `judge_model` (the same `HETA_NB_JUDGE_MODEL` and `HETA_NB_JUDGE_API_BASE`: they are part
of the key). A replay never asks the model, so CI needs no API key, no server and no budget. A call the
cache does not hold (a new case, a changed answer, prompt or judge) is not asked either: its score is
an error (`CacheMissError`), so the change shows instead of a fresh verdict slipping in. Record again
with the model (`mode="use"`, the default) and commit the folder. Here, the same rescore replayed:"""),
    ("code", """replay = heta_nb.JudgeCache(".judge_cache", mode="replay")
replayed = heta_nb.rescore(
    demo_report, judges, benchmark=benchmark, judge_model=model, judge_cache=replay, progress=False
)
asked = sum(total.calls - total.cached_calls for total in judge_totals(replayed).values())
f"model calls: {asked}, same scores: {dict(replayed.score_summary) == dict(judged.score_summary)}\""""),
]


REVIEW = [
    ("md", """# Human review and calibration: how far to trust a judge

An LLM judge (notebook 05) gives every case a verdict, but is the verdict right? Before a CI gate
fails a build on a judge's score, people should check the judge. This notebook walks through
heta_nb's review loop on the demo report:

1. choose which case results to review (`review_sample`);
2. review them in the explorer, keyboard first (`report.review`), or import verdicts given
   elsewhere (`import_reviews`);
3. read the reviews back and check that the reviewers agree (`reviewer_agreement`);
4. measure each metric against people (`calibrate`);
5. estimate the rate people would give the whole report, from the judge and a few reviews (`ppi`);
6. gate only on the judges people calibrated (`check(..., calibration=)`,
   `heta-nb check --require-calibrated`);
7. review without Python, in an exported page.

Reviews live **beside** the report in its store (one append-only file per reviewer), never in it:
the report stays byte-identical and Heta still reads it. The notebook runs offline in seconds: the
judges ask an offline stand-in, and the reviewers are **simulated** (nobody presses keys in CI)."""),
    ("code", "%load_ext heta_nb"),
    ("code", """import tempfile
from pathlib import Path

import pandas as pd

import heta_nb
import heta_nb.reviews  # review_sample and review_log, below
from heta_nb import demo

pd.set_option("display.max_colwidth", None)  # whole reasons, not cut at 50 characters
workdir = Path(tempfile.mkdtemp(prefix="heta-review-"))
result = demo.run_demo(workdir / "output", workdir / "store", progress=False)
store = heta_nb.ReportStore(workdir / "store")
benchmark = demo.load_benchmark()"""),
    ("md", """## The judged reports

As in notebook 05: `heta_nb.rescore` judges both recipes' demo reports without querying the knowledge
bases again, and saves the judged reports in the store. The judges: faithfulness, answer relevance,
context precision, the rubric `cites_evidence`, and **context recall** (is each expected answer's
claim supported by a retrieved chunk?). They ask `heta_nb.llm_judges.standin_model()`: a
deterministic stand-in (word overlap), not a language model, so that this notebook runs offline and
repeatably. With a real model (notebook 05 shows how to choose one) the steps below are the same;
what they find is not."""),
    ("code", """model = heta_nb.llm_judges.standin_model()
print(
    f"judging with {model.name!r}: a deterministic stand-in (word overlap), NOT a language model; "
    "its verdicts are not a language model's."
)
judges = [
    heta_nb.llm_judges.Faithfulness(),
    heta_nb.llm_judges.AnswerRelevance(),
    heta_nb.llm_judges.ContextPrecision(),
    heta_nb.judge(
        "cites_evidence", "The answer only states what the retrieved chunks say.", include=["query", "answer", "chunks"]
    ),
    heta_nb.llm_judges.ContextRecall(),
]
settings = dict(benchmark=benchmark, judge_model=model, judge_cache=None, store=store, progress=False)
judged = heta_nb.rescore(result.reports["small-chunks"], judges, report_id="small-judged", **settings)
judged_large = heta_nb.rescore(result.reports["large-chunks"], judges, report_id="large-judged", **settings)
judge_names = [j.name for j in judges]
judged.summary_frame().query("metric in @judge_names")[["query_mode", "metric", "mean", "n"]]"""),
    ("md", """## 1. Which case results to review

Nobody reviews all 190 case results. `heta_nb.reviews.review_sample(report, n)` proposes `n`:

- **stratified by mode**: each mode gets its share of the sample, in proportion to its size (at
  least one each), so every mode is reviewed;
- **leaning towards disagreement**: within a mode, a case result is drawn with weight
  `1 + 3 × spread + 2 × instability`, where *spread* is how far its scores disagree (a judge passing
  an answer that string overlap scores 0 is a case people should see) and *instability* how far a
  judge's repeats disagreed;
- **stable**: a fixed seed, so the same report proposes the same sample (two reviewers get the same
  cases). Errored case results are left out; `benchmark=` and `label=` stratify by a case label too."""),
    ("code", """sample = heta_nb.reviews.review_sample(judged, 60)
modes = [mode for _, mode in sample]
print(f"{len(sample)} case results proposed, the first: {sample[:3]}")
pd.DataFrame(
    {
        "query_mode": judged.modes,
        "case results": [sum(r["query_mode"] == m for r in judged.raw["case_results"]) for m in judged.modes],
        "proposed": [modes.count(m) for m in judged.modes],
    }
).set_index("query_mode")"""),
    ("md", """## 2. Review them in the explorer

`report.review(reviewer=..., sample=..., store=...)` opens the explorer in **review mode**, on the
first case of that sample without your verdict. With a case open, press:

| key | verdict |
|-----|---------|
| `1` (or `c`) | correct |
| `2` (or `p`) | partly |
| `3` (or `w`) | wrong |
| `s` | skip (no value) |
| `n` | a note: type it, Enter keeps it with the verdict, Escape leaves it |

Each verdict is appended at once to the reviewer's own file beside the report
(`.../evaluations/small-judged/reviews/ana.jsonl`), and the next unreviewed case opens. A crashed
kernel loses at most the verdict in flight; a changed verdict appends a line (the last one stands).
**`blind=True`** hides every score, judge verdict, metric column and pass/fail mark while you review,
so that the judges cannot sway you: review blind when the verdicts are to calibrate the judges.
`benchmark=` shows each case's expected answers in the panel."""),
    ("code", """widget = judged.review(reviewer="ana", sample=60, store=store, blind=True, benchmark=benchmark)
print(f"{widget.review!r}; the same sample as above: {widget.review.sample == sample}")
widget"""),
    ("md", """### Nobody presses keys here: two simulated reviewers

This notebook is executed unattended (in CI, by nbclient), so nobody presses `1`, `2` or `3`. The
next cell **simulates** two reviewers, "ana" and "bo". They are not people, and their verdicts say
nothing about the judges that the benchmark does not already say: they are read off its expected
answers, a crude stand-in for a careful person:

- **correct** when the response contains one of the case's expected answers (ignoring case),
  **wrong** when not. In `extractive_answer` the response is the answer; `full_text_search` answers
  nothing, so there the simulated reviewer reads the top five retrieved chunks, as a person
  reviewing a retrieval-only mode would;
- **skip** when the benchmark has no expected answer for the case (nothing to check against);
- bo gives the other verdict on every eighth case of the sample (wrong for correct, partly for
  wrong), with a note: deliberate disagreements, so that the two do not agree perfectly.

`heta_nb.import_reviews` stores them as the widget would have: from a DataFrame (or a reviews file,
see the end) with `case_id`, `query_mode`, `reviewer`, `verdict` and optional `note` and `blind`.
Every row is checked before any is stored."""),
    ("code", """expected = {case.case_id: case.expected.answers for case in benchmark.cases}


def simulated_verdict(case_id, mode):
    \"\"\"NOT a person's verdict: read off the benchmark's expected answers.\"\"\"
    if not expected[case_id]:
        return "skip"  # nothing to check against
    response = judged.case(case_id, mode).response
    text = (response.answer or " ".join(chunk.text for chunk in response.results[:5])).lower()
    return "correct" if any(answer.lower() in text for answer in expected[case_id]) else "wrong"


rows = []
for index, (case_id, mode) in enumerate(sample):
    verdict = simulated_verdict(case_id, mode)
    disagree = index % 8 == 3 and verdict != "skip"
    rows.append({"case_id": case_id, "query_mode": mode, "reviewer": "ana", "verdict": verdict, "blind": True})
    rows.append(
        {
            "case_id": case_id,
            "query_mode": mode,
            "reviewer": "bo",
            "verdict": {"correct": "wrong", "wrong": "partly"}[verdict] if disagree else verdict,
            "note": "simulated disagreement" if disagree else None,
            "blind": True,
        }
    )
stored = heta_nb.import_reviews(pd.DataFrame(rows), report=judged, store=store)
print(
    f"SIMULATED reviewers, not people: {len(stored)} verdicts of 'ana' and 'bo' read off the benchmark's "
    "expected answers (bo disagrees on purpose), stored beside the report."
)"""),
    ("md", """## 3. The reviews, and do the reviewers agree?

`report.reviews(store=...)` reads them back: one row per reviewer and case result, the last verdict
standing (`history=True`: every line ever written). `value` is what a verdict is worth in the
estimates: correct 1, partly 0.5, wrong 0, skip NaN (left out)."""),
    ("code", """reviews = judged.reviews(store=store)
folder = heta_nb.reviews.review_log(judged, store=store).folder
print(f"{len(reviews)} reviews in {folder}: {sorted(p.name for p in folder.glob('*.jsonl'))}")
with pd.option_context("display.max_rows", None):
    display(reviews)"""),
    ("md", """If two people do not agree on a case, no judge can be expected to agree with "people" on it.
`heta_nb.reviewer_agreement` measures people against each other: Cohen's kappa for two reviewers
(Krippendorff's alpha for more) over the case results both rated (skips left out), with a bootstrap
interval, and the case results they disagree on, most first (`spread`: the largest minus the
smallest value). Kappa discounts the agreement chance alone would give: 1 is perfect agreement, 0 no
better than chance. Read the disagreements before calibrating anything: they are often an unclear
question, or a verdict the reviewers understood differently."""),
    ("code", """kappa, disagreements = heta_nb.reviewer_agreement(reviews)
print(f"ana vs bo: {kappa.text}")
disagreements.rename_axis(columns=None).query("spread > 0")"""),
    ("md", """## 4. Calibrate: each metric against people

`heta_nb.calibrate` compares every metric of the report with people's verdicts on the reviewed case
results. People's verdict on a case result is the mean of its reviewers' values (positive at 0.5 or
more); a metric's is its score's `passed`, or its value at 0.5 or more. For each metric: how many
reviewed case results it scored (`n`), the accuracy, the true-positive rate (`sensitivity`) and the
true-negative rate (`specificity`), and Cohen's kappa with its interval (in `reason`). A metric is
**calibrated** when its kappa is at least 0.6 on at least 50 reviewed case results (`floor=` and
`min_labels=` set both); a calibration holds for the judge version it was measured on."""),
    ("code", """calibration = heta_nb.calibrate(judged, store=store)
calibration"""),
    ("md", """Read the `reason` column:

- **context_recall** is calibrated, just: its kappa clears the floor, but its interval reaches well
  below it, and more reviews would tell whether it holds. Whether the retrieved chunks hold the
  expected answer is what the simulated reviewers check in `full_text_search`; in
  `extractive_answer` they judge the answer, which can miss what the chunks hold.
- **context_precision** scored every reviewed case result, but its kappa is **below the floor**:
  ranking relevant chunks first is not what the reviewers judged.
- **faithfulness**, **answer_relevance** and **cites_evidence** judge answers, and only
  `extractive_answer` has answers: half the sample, **too few labels** (under 50). Review more of that
  mode before trusting them. Here more labels would hardly help: their kappas on the labels they
  have are low (the stand-in finds every extractive answer faithful, right or wrong: its sentences
  come from the chunks).
- The plain metrics are measured too, though the gate only asks about LLM judges. `answer_contains`
  is what the simulated reviewers check on answers, yet its kappa is low: the calibration pools the
  modes, and `full_text_search`, which has no answer, records `answer_contains` False where the
  reviewers judged its chunks."""),
    ("md", """## 5. What would people say of the whole report?

The reviews say what people think of 60 case results; the judge scored all of them. A
**prediction-powered estimate** (PPI++) combines the two: the judge's mean over every case result,
corrected by the judge's error measured on the reviewed ones. It is unbiased whatever the judge's
bias, with a valid interval, and the interval of the reviews alone stands beside it; `chosen` says
which to report (PPI++ only when its interval is at least 5 % narrower)."""),
    ("code", """estimate = heta_nb.ppi(judged, "context_recall", store=store, mode="full_text_search")
print(estimate.text)
print("chosen: {}, reported: {:.3f} [{:.3f}, {:.3f}]".format(estimate.chosen, *estimate.interval))"""),
    ("md", """PPI++ does not help when the judge tracks people weakly: its weight `lam` falls towards 0, its
interval is no narrower than the reviews' alone, and `chosen` stays `classical` (a judge people
disagree with cannot stand in for reviews).
Each judge, in the mode where it is judged by the reviews (the chunk judges in `full_text_search`,
the answer judges in `extractive_answer`):"""),
    ("code", """estimates = []
for metric, mode in [
    ("context_recall", "full_text_search"),
    ("context_precision", "full_text_search"),
    ("answer_relevance", "extractive_answer"),
    ("cites_evidence", "extractive_answer"),
    ("faithfulness", "extractive_answer"),
]:
    found = heta_nb.ppi(judged, metric, store=store, mode=mode)
    estimates.append(
        {
            "metric": metric,
            "mode": mode,
            "PPI++": found.estimate,
            "ci_low": found.ci_low,
            "ci_high": found.ci_high,
            "reviews alone": found.classical_estimate,
            "alone ci_low": found.classical_ci_low,
            "alone ci_high": found.classical_ci_high,
            "lam": found.lam,
            "labeled": found.n_labeled,
            "judged only": found.n_unlabeled,
            "chosen": found.chosen,
        }
    )
pd.DataFrame(estimates).round(3)"""),
    ("md", """## 6. Gate only on what people calibrated

Say large chunks is the recipe in production and small chunks the candidate. `heta_nb.check(new,
baseline)` is the regression gate (`heta-nb check` in CI). With `calibration=`, an LLM judge takes
part only where people calibrated it; any other judge is a row of its own, "not comparable: not
calibrated: ...", neither tested nor counted in a Holm family. The plain metrics are gated as
always."""),
    ("code", """gate = heta_nb.check(judged, judged_large, calibration=calibration)
print(gate.headline)
rows = gate.frame()[["mode", "metric", "verdict", "diff", "p_adjusted", "reason"]]
rows.insert(2, "gated", ~rows["verdict"].isin(["n/a", "not comparable"]))
rows"""),
    ("md", """In CI the same gate is one command. `--require-calibrated` reads the reviews beside NEW's
`report.json` (`STORE:KB/REPORT_ID` finds them in a store), calibrates NEW against them, and refuses
to gate on an uncalibrated judge. The exit code is the most severe row's: 0 nothing regressed, 1 a
regression or an unverified drop, 2 not comparable (an uncalibrated judge on its own). The cell runs
`python -m heta_nb`, the same entry point as `heta-nb`, so it works in any kernel; in a terminal,
`heta-nb check NEW --baseline OLD --require-calibrated`."""),
    ("code", """import shlex
import subprocess
import sys

new_ref = f"{store.location}:{judged.knowledge_base_name}/{judged.report_id}"
old_ref = f"{store.location}:{judged_large.knowledge_base_name}/{judged_large.report_id}"
command = ["check", new_ref, "--baseline", old_ref, "--require-calibrated"]
print("$ heta-nb", shlex.join(command))
run = subprocess.run([sys.executable, "-m", "heta_nb", *command], capture_output=True, text=True, check=False)
print(run.stdout + run.stderr)
print(f"exit code: {run.returncode}")"""),
    ("md", """Both say the same: `context_recall`, the one judge people calibrated, is gated, and it says
the small chunks lose the expected answer far more often (a regression, exit code 1); the other
judges' rows say "not calibrated" and why; the retrieval metrics dropped too, by more than the
tolerated 0 but too few cases changed to tell the drop from noise (an unverified drop). Had nothing
regressed, the uncalibrated judges' rows would still make the exit code 2 (not comparable): the gate
does not pass what it cannot check."""),
    ("md", """## 7. Reviewing without Python

A reviewer needs neither Python nor this kernel. Export the report as one standalone HTML file, with
the benchmark for the expected answers:

```python
heta_nb.to_html(judged, "small-judged.html", benchmark=benchmark)
```

and send it. The reviewer opens it in a browser (offline: it fetches nothing), clicks **Review…**,
gives a name (and ticks *blind* to hide scores and judges), and reviews the sample the page proposes
(the same `review_sample`, 60 case results; `limits=heta_nb.export.ExportLimits(review_sample=...)`
changes it) with the same keys. The browser keeps the verdicts (a reload keeps them);
**Download reviews** saves them as `reviews-small-judged-<name>.json`. Back here,

```python
heta_nb.import_reviews("reviews-small-judged-cy.json", report=judged, store=store)
```

stores them beside the report with the others, and every step above (agreement, calibration,
estimates, the gate) reads them."""),
]


WHY = [
    ("md", """# Why it changed: what differs, where the answer was lost, which slices moved

A comparison says *whether* a recipe got worse. This notebook asks *why*, on the demo's two real
Heta recipes on the *Saltmarsh Isles* benchmark: `small-chunks` (160-character chunks, overlap 20)
and `large-chunks` (700, overlap 60).

1. what differs between the recipes (`recipe_changes`);
2. where the answer was lost: in retrieval or in generation (`stages`);
3. which slices of the benchmark moved (`slices`);
4. the statistics a reviewer asks for: clustered intervals, McNemar's test, the smallest difference
   the benchmark can detect, and why a verdict says "underpowered";
5. how many cases it would take (`plan`);
6. every case × system at once (the explorer's grid);
7. a knowledge base's reports over time (`history`);
8. the same reasons in the CI gate (`check`).

Everything runs offline, in seconds."""),
    ("code", "%load_ext heta_nb"),
    ("code", """import tempfile
from pathlib import Path

import pandas as pd

import heta_nb
from heta_nb import demo

pd.set_option("display.max_colwidth", None)  # whole verdicts, not cut at 50 characters
workdir = Path(tempfile.mkdtemp(prefix="heta-why-"))
result = demo.run_demo(workdir / "output", workdir / "store", progress=False)
store = heta_nb.ReportStore(workdir / "store")
small, large = result.reports["small-chunks"], result.reports["large-chunks"]
benchmark = demo.load_benchmark()"""),
    ("md", """## The comparison

`heta_nb.compare` tests `large-chunks` against `small-chunks` case by case, mode with mode. Given
the benchmark, it can also slice the cases by their labels. Under the verdicts, the view has a
**Why it changed** section: where the changed cases were lost or gained (one line per system, and
the counts), what differs between the recipes, and the slices that moved. The table of paired
differences has a **detects ≥** column: the smallest difference each test detects with 80 % power."""),
    ("code", """c = heta_nb.compare(small, large, benchmark=benchmark)
c"""),
    ("md", """## 1. What differs

Heta's recipe manifest names each step but not its settings: two recipes that differ only in
`chunk_size` have the same manifest. heta_nb's runner records each step's settings in the report
(`metadata.heta_nb.recipe_parameters`), so `recipe_changes()` can list what differs between two
reports: the recipe's steps and settings, how each knowledge base was built (how many chunks it
holds), and the benchmark. It lists only differences, never what differs between any two builds
(ids, times). Here: the chunk size and the overlap, and the large chunks make far fewer of them."""),
    ("code", """for changes in c.recipe_changes():
    print(*changes.lines(), sep="\\n")"""),
    ("md", """## 2. Where the answer was lost

A case *changed* when its outcome moved: the answer metric (`answer_f1`), or the evidence metric
(`evidence_recall@5`) in a mode that returns no answers. Its **stage** reads the evidence metric and
both systems' outputs:

- **retrieval**: the evidence found before is missing now (or, for a gain, found where the baseline
  missed it entirely);
- **generation**: retrieval as good, or moving the other way, and the answer worse (or better);
- **both**: some evidence lost and the answer worse (or more found and the answer better);
- **neither**: the output did not change (same answer, same top result, same number of results):
  the score moved by itself, as a judge's can;
- **unknown**: no evidence score on one side.

`c.stage_counts()` counts them per system and direction; `c.stages()` lists the cases."""),
    ("code", "c.stage_counts()"),
    ("md", """`full_text_search` returns no answers, so its outcome is the evidence metric itself and every
change is a retrieval change. In `extractive_answer` most regressed cases are **generation**:
retrieval found the evidence as well as before (or better), and the answer still got worse. The
first five:"""),
    ("code", """lost = c.stages().query("stage == 'generation' and direction == 'regressed'")
lost[["case_id", "query", "outcome_baseline", "outcome_value", "evidence_baseline", "evidence_value"]].head()"""),
    ("md", """## 3. Which slices moved

`c.slices("labels")` tests the paired difference in each slice of each benchmark label (here
`difficulty`, `hops` and `question_type`), per tested system and metric. The slices of one system
and metric are one family, adjusted together (Holm by default, named in `correction`); the slices
that moved come first; a slice of fewer than `min_cases` cases (10) is not tested. For
`answer_f1`:"""),
    ("code", """holm = c.slices("labels", metrics=["answer_f1"])
columns = ["slice_by", "slice", "n", "mean_diff", "ci_low", "ci_high", "p_adjusted", "correction", "verdict"]
holm[columns]"""),
    ("md", """`answer_f1` is worse on easy, single-hop and factoid questions; `hops = 3` has 4 cases, too few to
test. Holm controls the chance of *any* false finding among the slices. `correction="bh"`
(Benjamini-Hochberg) controls the expected share of false findings among those reported instead:
its adjusted p-values are never larger than Holm's. Here the same slices moved:"""),
    ("code", """bh = c.slices("labels", metrics=["answer_f1"], correction="bh")
bh[columns]"""),
    ("md", """A small slice has a wide interval, and a finding in it is easy to over-read. With `min_cases=40`,
slices of fewer than 40 cases are not tested: they say so, and each family holds only the slices
tested (`family_size`):"""),
    ("code", """c.slices("labels", metrics=["answer_f1"], min_cases=40)[
    ["slice_by", "slice", "n", "mean_diff", "p_adjusted", "family_size", "verdict"]
]"""),
    ("md", """## 4. The statistics a reviewer asks for

**Clustered intervals.** The benchmark's questions were written from its documents, and questions
about one document tend to move together: such cases hold less information than as many independent
ones. `cluster_by="document"` groups each case with the others whose expected evidence cites the same
first document, and every interval and p-value treats those groups as the units (CR1
cluster-robust standard errors, a t test on G − 1 degrees of freedom). The notes say so; `clusters`
and `design_effect` (the variance relative to the case-level one) are in the summary."""),
    ("code", """clustered = heta_nb.compare(small, large, benchmark=benchmark, cluster_by="document")
print(*clustered.notes, sep="\\n")
clustered.summary_frame()[
    ["system", "metric", "mean_diff", "ci_low", "ci_high", "p_value", "clusters", "design_effect", "verdict"]
]"""),
    ("md", """A design effect above 1 widens the interval (the retrieval metrics here); below 1 it narrows it
(`answer_contains`). `answer_f1` is still worse with the documents as units.

**McNemar.** For a pass/fail metric such as `answer_contains`, only the cases whose verdict flipped
carry information; McNemar's exact test on them stands beside the sign-flip test (`mcnemar_p`).

**The smallest detectable difference.** Each tested row has `min_detectable_difference` (the view's
*detects ≥*): the difference its test detects with 80 % power at the family's level, from the
observed spread of the paired differences."""),
    ("code", """print(c.sensitivity("large-chunks/extractive_answer", "answer_contains").mcnemar.text)
c.summary_frame().query("mode == 'extractive_answer'")[
    ["metric", "n", "mean_diff", "ci_low", "ci_high", "p_adjusted", "mcnemar_p", "min_detectable_difference", "verdict"]
]"""),
    ("md", """Why "underpowered" and not "no detectable difference"? `answer_contains` fell, but by less than
the difference its test detects with 80 % power: with these cases, a real change of that size could
easily go unnoticed. "No detectable difference" reads as evidence that nothing changed, which a test
that could not have seen the change does not give. So a test that finds nothing (its interval
includes 0) while its minimum detectable difference is larger than the change it saw says
**underpowered**, and names the size it can see. "No detectable difference" stays for a test that
could have seen the change (or when every case scored the same)."""),
    ("md", """## 5. How many cases would it take?

`heta_nb.plan` turns the question around: how many cases a benchmark needs to detect a change of a
given size. From a comparison it uses the observed spread of the paired differences (clustered when
the comparison clusters) at the family's level (alpha divided by the family's size: the six metrics
of `extractive_answer`):"""),
    ("code", """heta_nb.plan(c, "answer_f1", difference=0.02, system="large-chunks/extractive_answer")"""),
    ("md", """From one report there is no second recipe to pair with. `plan` then takes the spread of a
difference as √2 times the spread of the report's scores, as if two recipes' scores were unrelated
case by case, and says so. Recipes scored on the same cases usually move together, so this asks for
more cases than the paired figure above:"""),
    ("code", """heta_nb.plan(small, "answer_f1", 0.02)"""),
    ("md", """## 6. Every case, every system

The explorer's grid shows the cases × the compared systems at once (two recipes × two modes), each
cell a pass or fail for `answer_contains` (a coloured score for a numeric metric; `n/a` where a mode
returns no answers). Hover a cell for the system's answer; click a cell, then another in the same row,
for a word diff of the two answers; and keep only the cases where the systems disagree."""),
    ("code", """explorer = c.explore(view="grid", metric="answer_contains")
print(f"{explorer.grid!r}: the systems disagree on {explorer.grid.cells.disagreeing} of them")
explorer"""),
    ("md", """## 7. Over time

`heta_nb.history(store, kb=...)` lists a knowledge base's stored reports on one benchmark in time
order: each mode and metric with its mean and interval, and the paired change from the report
before (`compare(previous, current)`'s numbers). The demo stores both recipes under the knowledge
base `saltmarsh isles`, small chunks first, so this history is two reports long:"""),
    ("code", """over_time = heta_nb.history(store, kb="saltmarsh isles", benchmark="saltmarsh_isles")
over_time.frame().query("mode == 'extractive_answer' and metric == 'answer_f1'")[
    ["report_id", "n", "mean", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high", "verdict", "real"]
]"""),
    ("md", "The plot marks a real change (significant after Holm's correction) with ▲ or ▼:"),
    ("code", """over_time.plot("answer_f1", mode="extractive_answer")"""),
    ("md", """## 8. The gate says it too

`heta_nb.check(new, baseline)` (`heta-nb check` in CI) gates on the same paired tests. Its Markdown,
for a CI job summary, has the **detects ≥** column and a **Why it changed** section: the stage lines,
what differs between the recipes and, given the benchmark, the slices that moved."""),
    ("code", """gate = heta_nb.check(large, small, benchmark=benchmark)
print(gate.to_markdown())"""),
]


NOTEBOOKS = {
    "01-quickstart.ipynb": QUICKSTART,
    "02-explore-a-report.ipynb": EXPLORE,
    "03-your-own-kb.ipynb": OWN_KB,
    "04-scale-out.ipynb": SCALE_OUT,
    "05-judges.ipynb": JUDGES,
    "06-review-and-calibrate.ipynb": REVIEW,
    "07-why-it-changed.ipynb": WHY,
}


def main(folder: Path = HERE) -> None:
    for name, cells in NOTEBOOKS.items():
        build(name, cells, folder)


if __name__ == "__main__":
    main()
