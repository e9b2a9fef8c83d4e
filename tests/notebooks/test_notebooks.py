"""The shipped notebooks: stored clean, generated, executed."""

from __future__ import annotations

import importlib.util
import io
import math
import re
import shutil
import time
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


# Time budget per notebook on this 2-core machine (KB builds dominate: Heta's ParseDocuments
# tries to download a tokenizer for every document offline, about 0.13 s each).
BUDGET_S = {
    "01-quickstart.ipynb": 150,
    "02-explore-a-report.ipynb": 180,
    "03-your-own-kb.ipynb": 120,
    "04-scale-out.ipynb": 180,
    "05-judges.ipynb": 60,
}

JUDGE_ENV = ("HETA_NB_JUDGE_MODEL", "HETA_NB_JUDGE_API_BASE", "HETA_NB_JUDGE_API_KEY")
"""What notebook 05 reads to choose its judge model (unset in the tests: the offline stand-in)."""

NETWORK = re.compile(
    r"https?://|HTTPSConnectionPool|ConnectionError|Max retries|urlopen|getaddrinfo|Name or service|download", re.I
)
"""Words of an output that mention reaching the network."""


def test_there_are_five_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == list(BUDGET_S)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_without_outputs(path: Path) -> None:
    """The nbstripout rule: no outputs, no execution counts, no widget state."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        assert cell.get("id"), "every cell has a stable id"
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    assert "widgets" not in notebook.metadata


def test_generator_and_files_agree(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_notebooks", ROOT / "notebooks" / "make_notebooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for path in NOTEBOOKS:
        assert (tmp_path / path.name).read_text() == path.read_text(), f"run notebooks/make_notebooks.py ({path.name})"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("heta_framework")
    from nbclient import NotebookClient

    work = tmp_path / "run"
    work.mkdir()
    for name in JUDGE_ENV:  # the kernel inherits this environment
        monkeypatch.delenv(name, raising=False)
    if path.name == "05-judges.ipynb":  # its tempfile.mkdtemp() folder (the report store) lands where we look
        (tmp_path / "tmp").mkdir()
        monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    shutil.copy(path, work / path.name)
    notebook = nbformat.read(work / path.name, as_version=4)
    started = time.monotonic()
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    elapsed = time.monotonic() - started
    print(f"{path.name}: executed in {elapsed:.1f} s (budget {BUDGET_S[path.name]} s)")
    assert elapsed < BUDGET_S[path.name]
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html = "\n".join(o.get("data", {}).get("text/html", "") for o in outputs)
    if path.name == "01-quickstart.ipynb":
        assert 'data-testid="heta-report"' in html and 'data-testid="heta-comparison"' in html
        assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
        # the explorers: a widget each, with the static report / comparison as the text/html fallback
        fallbacks = [
            o["data"].get("text/html", "")
            for o in outputs
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {}) and "text/html" in o["data"]
        ]
        assert any('data-testid="heta-report"' in h for h in fallbacks)
        assert any('data-testid="heta-comparison"' in h for h in fallbacks)
    if path.name == "02-explore-a-report.ipynb":
        assert "written-by-heta" in html
        (listing,) = [c for c in notebook.cells if c.cell_type == "code" and c.source.startswith("%heta_runs {recipe")]
        shown = "\n".join(str(v) for o in listing.outputs for v in o.get("data", {}).values())
        assert "written-by-heta" in shown  # the store Heta wrote to lists its report
        plot_cells = [c for c in notebook.cells if c.cell_type == "code" and "heta_nb.plots.plot_" in c.source]
        assert len(plot_cells) >= 3
        for cell in plot_cells:  # an image, not "<Figure size 800x370 with 1 Axes>"
            shown_types = [set(o.get("data", {})) for o in cell.outputs]
            assert any({"image/png", "image/svg+xml"} & types for types in shown_types), (cell.source, shown_types)
    if path.name == "03-your-own-kb.ipynb":
        texts = "\n".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
        assert "True)" in texts and "'complete'" in texts
        # "A custom evaluator": real means (a function KB's list of dicts reaches it as a QueryResponse)
        (custom,) = [c for c in notebook.cells if c.cell_type == "code" and "def distinct_documents" in c.source]
        table = "\n".join(o.get("data", {}).get("text/html", "") for o in custom.outputs)
        for metric in ("distinct_documents", "top_overlap"):
            row = re.search(rf"<td>{metric}</td>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>", table)
            assert row is not None, (metric, table)
            mean, n = float(row[1]), int(row[2])
            assert math.isfinite(mean) and mean >= 1 and n > 0, (metric, row[0])
    if path.name == "04-scale-out.ipynb":
        assert 'data-testid="heta-sweep"' in html and 'data-testid="heta-leaderboard"' in html
        assert html.count('data-phase="done"') == 6 and html.count('data-phase="reused"') == 6
        texts = "\n".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", "")) for o in outputs)
        assert "same board: True" in texts and "Leaderboard: 3 recipe(s)" in texts
    if path.name == "05-judges.ipynb":
        check_judges_notebook(notebook, work, tmp_path / "tmp")


def code_cell(notebook: Any, marker: str) -> Any:
    """The one code cell whose source contains ``marker``."""
    (cell,) = [c for c in notebook.cells if c.cell_type == "code" and marker in c.source]
    return cell


def shown_text(cell: Any) -> str:
    """Everything a cell shows as text: streams, text/plain and text/html (not widget state)."""
    parts = []
    for output in cell.outputs:
        parts.append(str(output.get("text", "")))
        parts.extend(str(v) for k, v in output.get("data", {}).items() if k in ("text/plain", "text/html"))
        if output.get("output_type") == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return "\n".join(parts)


def stdout(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


def shown_table(cell: Any) -> pd.DataFrame:
    """The pandas table a cell shows (read back from its HTML), with flat column names."""
    (html,) = [
        o["data"]["text/html"] for o in cell.outputs if 'class="dataframe"' in o.get("data", {}).get("text/html", "")
    ]
    (frame,) = pd.read_html(io.StringIO(html), keep_default_na=False, na_values=["NaN"])
    if isinstance(frame.columns, pd.MultiIndex):  # a named index: its name is on a header row of its own
        frame.columns = [b if a.startswith("Unnamed") else a for a, b in frame.columns]
    return frame


def check_judges_notebook(notebook: Any, work: Path, tmp: Path) -> None:
    """05-judges: what each cell shows, checked against the judged reports it saved."""
    import heta_nb
    from heta_nb.llm_judges import STANDIN_NAME
    from heta_nb.llm_judges.totals import judge_totals

    code = [c for c in notebook.cells if c.cell_type == "code"]
    # nothing reaches the network: the judge is the offline stand-in (the demo's KB build
    # only says that Heta's ParseDocuments could not download tiktoken's encoding)
    build = code_cell(notebook, "demo.run_demo(")
    for cell in code:
        reached = [line for line in shown_text(cell).splitlines() if NETWORK.search(line)]
        if cell is build:
            reached = [line for line in reached if "HetaRunWarning: tiktoken could not load" not in line]
        assert not reached, (cell.source[:60], reached)

    # the judged reports the notebook saved in its store
    (store_root,) = tmp.glob("heta-judges-*/store")
    store = heta_nb.ReportStore(store_root)
    judged = store.load("saltmarsh isles", "small-judged")
    judged_large = store.load("saltmarsh isles", "large-judged")
    assert judged.raw["metadata"]["heta_nb"]["rescored_from"]["report_id"] == "small-chunks"
    assert any((work / ".judge_cache").glob("*.jsonl"))  # the cache is beside the notebook

    # 1. no HETA_NB_JUDGE_MODEL: the stand-in, named as one
    chosen = stdout(code_cell(notebook, 'os.environ.get("HETA_NB_JUDGE_MODEL")'))
    assert STANDIN_NAME in chosen and "stand-in" in chosen and "NOT a language model" in chosen, chosen
    assert "judge model:" not in chosen

    # 2. the estimate: calls and tokens, as estimate() measures them on the same sample
    source = store.load("saltmarsh isles", "small-chunks")
    judges = [
        heta_nb.llm_judges.Faithfulness(),
        heta_nb.llm_judges.AnswerRelevance(),
        heta_nb.llm_judges.ContextPrecision(),
        heta_nb.judge(
            "cites_evidence",
            "The answer only states what the retrieved chunks say.",
            include=["query", "answer", "chunks"],
        ),
    ]
    expected = heta_nb.estimate(
        report=source,
        evaluators=judges,
        sample=3,
        benchmark=heta_nb.demo.load_benchmark(),
        judge_model=heta_nb.llm_judges.standin_model(),
        judge_cache=None,
    )
    estimate = shown_text(code_cell(notebook, "heta_nb.estimate("))
    shown = re.search(r"([\d,]+) calls, ([\d,]+) tokens in, ([\d,]+) tokens out", estimate)
    assert shown is not None, estimate
    assert [int(n.replace(",", "")) for n in shown.groups()] == [
        expected.calls,
        expected.tokens_in,
        expected.tokens_out,
    ]
    assert expected.calls > 0 and expected.tokens_in > 0 and f"judging {expected.total} case results" in estimate

    # 3. the judged report, and its summary of the judge metrics: the saved report's numbers
    (report_cell,) = [c for c in code if c.source == "judged"]
    report_view = shown_text(report_cell)
    assert 'data-testid="heta-report"' in report_view and STANDIN_NAME in report_view
    summary = shown_table(code_cell(notebook, "judged.summary_frame()"))
    truth = judged.summary_frame().set_index(["query_mode", "metric"])
    rows = summary.set_index(["query_mode", "metric"])
    assert set(rows.index.get_level_values("metric")) == {j.name for j in judges}
    for mode, metric in rows.index:
        for column in ("mean", "ci_low", "ci_high"):
            want = truth.loc[(mode, metric), column]
            got = rows.loc[(mode, metric), column]
            assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, abs=1e-6), (mode, metric)
        assert rows.loc[(mode, metric), "n"] == truth.loc[(mode, metric), "n"]
    for metric in ("faithfulness", "answer_relevance"):
        answered = rows.loc[("extractive_answer", metric)]
        assert answered["status"] == "scored" and answered["n"] == 95 and 0 <= answered["mean"] <= 1
        assert rows.loc[("full_text_search", metric), "n"] == 0  # that mode gives no answer to judge
    assert rows.loc[("full_text_search", "context_precision"), "n"] == 95

    # 4. one case's claims, with their verdicts; the judge totals of the saved report
    claims_cell = code_cell(notebook, 'judged.case("q002"')
    faithfulness = judged.case("q002", "extractive_answer").score("faithfulness")
    assert f"faithfulness = {faithfulness.value}: {faithfulness.metadata['reason']}" in stdout(claims_cell)
    claims = shown_table(claims_cell)
    assert claims[["claim", "verdict", "supported by"]].to_dict("records") == [
        {"claim": c["claim"], "verdict": c["verdict"], "supported by": ", ".join(c["result_ids"])}
        for c in faithfulness.metadata["claims"]
    ]
    assert len(claims) >= 1 and set(claims["verdict"]) <= {"supported", "not_found", "contradicted"}
    assert "supported" in set(claims["verdict"])
    totals = shown_table(code_cell(notebook, "judge_totals(judged)")).set_index("judge")
    expected_totals = judge_totals(judged)
    assert list(totals.index) == list(expected_totals)
    for name, total in expected_totals.items():
        row = totals.loc[name]
        assert row["model"] == total.model == STANDIN_NAME
        assert (row["calls"], row["cached"], row["tokens in"], row["tokens out"], row["cost"]) == (
            total.calls,
            total.cached_calls,
            total.tokens_in,
            total.tokens_out,
            total.cost_text,
        )
        assert total.calls > 0 and total.tokens_in > 0

    # 5. the comparison's headline: the same comparison of the saved reports
    compared = code_cell(notebook, "heta_nb.compare(judged, judged_large")
    comparison = heta_nb.compare(
        judged, judged_large, names=["small chunks", "large chunks"], modes=["extractive_answer"]
    )
    headline = comparison.headline()
    assert stdout(compared) == "\n".join(headline) + "\n" and headline[0].startswith("large chunks vs small chunks")
    assert 'data-testid="heta-comparison"' in shown_text(compared)
    assert "not comparable" not in shown_text(compared)  # one judge for both

    # 6. the explorer, a widget, on the case whose claims are shown
    explorer = code_cell(notebook, "judged.explore(")
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in explorer.outputs)
    assert "case q002 · extractive_answer open" in shown_text(explorer)

    # 7. the replay asked the model nothing and gave the same scores
    assert "'model calls: 0, same scores: True'" in shown_text(code_cell(notebook, 'mode="replay"'))
