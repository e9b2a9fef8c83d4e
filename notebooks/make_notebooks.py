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
    ("code", """so_far = run.partial_report()
so_far.metadata["heta_nb"]["status"], so_far.metadata["heta_nb"].get("partial"), len(so_far.case_results)"""),
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
    ("code", """so_far = run.partial_report()
so_far.metadata["heta_nb"].get("partial"), so_far.summary_frame().shape"""),
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
    ("code", """from dask.distributed import Client, LocalCluster

cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
client = Client(cluster)
client.dashboard_link"""),
    ("md", """## The sweep

The table shows each pair as it goes: queued, building (the recipe step), running n/N, done or
failed, with an overall ETA. When it ends it stays in the notebook as an ordinary output."""),
    ("code", """board = heta_nb.sweep(benchmarks, recipes, store=store, executor=client, **settings)
board"""),
    ("md", """## Reading the leaderboard

★ marks the best mean of each column; ▲ and ▼ mark differences from the baseline (the first recipe)
that survive Holm's correction over every test on the board; hover a cell for its paired difference.
`frame()` has every number: means and CIs, ranks, paired differences with their CIs, raw and
adjusted p-values, wins / ties / losses."""),
    ("code", "board.frame(wide=True)"),
    ("code", """board.frame().query("significant")[["benchmark", "system", "metric", "mean_diff", "diff_ci_low", "diff_ci_high", "p_adjusted"]]"""),
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
    ("code", """client.close()
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


NOTEBOOKS = {
    "01-quickstart.ipynb": QUICKSTART,
    "02-explore-a-report.ipynb": EXPLORE,
    "03-your-own-kb.ipynb": OWN_KB,
    "04-scale-out.ipynb": SCALE_OUT,
    "05-judges.ipynb": JUDGES,
}


def main(folder: Path = HERE) -> None:
    for name, cells in NOTEBOOKS.items():
        build(name, cells, folder)


if __name__ == "__main__":
    main()
