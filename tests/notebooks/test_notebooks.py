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
    "06-review-and-calibrate.ipynb": 60,
    "07-why-it-changed.ipynb": 60,
}

JUDGE_ENV = ("HETA_NB_JUDGE_MODEL", "HETA_NB_JUDGE_API_BASE", "HETA_NB_JUDGE_API_KEY")
"""What notebook 05 reads to choose its judge model (unset in the tests: the offline stand-in)."""

IN_MKDTEMP = ("05-judges.ipynb", "06-review-and-calibrate.ipynb", "07-why-it-changed.ipynb")
"""Notebooks whose report store is a ``tempfile.mkdtemp()`` folder: the test points TMPDIR where it looks."""

NETWORK = re.compile(
    r"https?://|HTTPSConnectionPool|ConnectionError|Max retries|urlopen|getaddrinfo|Name or service|download", re.I
)
"""Words of an output that mention reaching the network."""


def test_the_notebooks_are_the_listed_ones() -> None:
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
    if path.name in IN_MKDTEMP:  # its tempfile.mkdtemp() folder (the report store) lands where we look
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
    assert_no_warning(notebook)
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
        assert_results_so_far(notebook, 190)
    if path.name == "02-explore-a-report.ipynb":
        assert "written-by-heta" in html
        assert_results_so_far(notebook, 190)
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
        dashboard = stdout(code_cell(notebook, "LocalCluster("))
        assert dashboard.startswith("Dask dashboard: http://127.0.0.1:"), dashboard
        table = code_cell(notebook, "not is_baseline")
        verdicts = "".join(o.get("data", {}).get("text/html", "") for o in table.outputs)
        assert verdicts.count("<tr>") > 2 and "min_detectable_difference" in verdicts  # never an empty table
    if path.name == "05-judges.ipynb":
        check_judges_notebook(notebook, work, tmp_path / "tmp")
    if path.name == "06-review-and-calibrate.ipynb":
        check_review_notebook(notebook, tmp_path / "tmp")
    if path.name == "07-why-it-changed.ipynb":
        check_why_notebook(notebook, tmp_path / "tmp")


def assert_results_so_far(notebook: Any, total: int) -> None:
    """Under Run All, the "results so far" cell shows a real partial count (it waits for results first)."""
    cell = code_cell(notebook, "so_far = run.partial_report()")
    text = shown_text(cell)
    assert "mappingproxy" not in text, text
    found = re.search(r"results so far: (\d+) of (\d+)", stdout(cell))
    assert found is not None, text
    done, of = int(found[1]), int(found[2])
    assert 0 < done < total and of == total, text


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


WARNING = re.compile(r"\bWarning\b|Warning:|warnings\.warn|DeprecationWarning|HetaRunWarning", re.I)
"""Words of an output that say a warning was issued."""


def assert_no_warning(notebook: Any) -> None:
    """No cell shows a warning the reader did not cause (a tutorial's own lesson would be named here)."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        streamed = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr")
        warned = [line for line in streamed.splitlines() if WARNING.search(line)]
        assert not warned, (cell.source[:80], warned)


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


def assert_offline(notebook: Any) -> None:
    """No output mentions the network: the judge is the offline stand-in, and the demo's KB build says
    only what Heta's ParseDocuments counted instead of tiktoken's tokens, not tiktoken's download error."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        reached = [line for line in shown_text(cell).splitlines() if NETWORK.search(line)]
        assert not reached, (cell.source[:60], reached)


def check_judges_notebook(notebook: Any, work: Path, tmp: Path) -> None:
    """05-judges: what each cell shows, checked against the judged reports it saved."""
    import heta_nb
    from heta_nb.llm_judges import STANDIN_NAME
    from heta_nb.llm_judges.totals import judge_totals

    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert_offline(notebook)

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


def plain(value: Any) -> Any:
    """A table cell as text, for comparing a shown table with a recomputed one (NaN and None: None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def check_review_notebook(notebook: Any, tmp: Path) -> None:
    """06-review-and-calibrate: what each cell shows, checked against the reviews and reports it saved."""
    import heta_nb
    from heta_nb.llm_judges import STANDIN_NAME
    from heta_nb.reviews import REVIEW_COLUMNS, review_sample

    assert_offline(notebook)
    (store_root,) = tmp.glob("heta-review-*/store")
    store = heta_nb.ReportStore(store_root)
    judged = store.load("saltmarsh isles", "small-judged")
    judged_large = store.load("saltmarsh isles", "large-judged")
    assert judged.raw["metadata"]["heta_nb"]["rescored_from"]["report_id"] == "small-chunks"
    judge_names = {"faithfulness", "answer_relevance", "context_precision", "cites_evidence", "context_recall"}
    assert judge_names <= set(judged.raw["metadata"]["heta_nb"]["judges"])

    # the judges' model: the stand-in, named as one
    judging = stdout(code_cell(notebook, "standin_model()"))
    assert STANDIN_NAME in judging and "stand-in" in judging and "NOT a language model" in judging, judging

    # 1. the proposed sample, per mode: review_sample of the saved report
    sample = review_sample(judged, 60)
    counts = shown_table(code_cell(notebook, "review_sample(judged, 60)")).set_index("query_mode")
    modes = [mode for _, mode in sample]
    assert counts["proposed"].to_dict() == {mode: modes.count(mode) for mode in judged.modes}
    assert counts["case results"].to_dict() == {
        mode: sum(r["query_mode"] == mode for r in judged.raw["case_results"]) for mode in judged.modes
    }
    assert len(sample) == counts["proposed"].sum() == 60 and (counts["proposed"] > 0).all()

    # 2. the review widget: the same sample, blind, nobody reviewed yet
    widget = code_cell(notebook, "judged.review(")
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in widget.outputs)
    assert stdout(widget) == "<ReviewMode 'ana' blind: 0 of 60 reviewed>; the same sample as above: True\n"

    # the simulated reviewers, said to be simulated; ana's verdicts are the benchmark's, as the notebook says
    simulated = stdout(code_cell(notebook, "heta_nb.import_reviews("))
    assert "SIMULATED reviewers, not people" in simulated and f"{2 * len(sample)} verdicts" in simulated, simulated

    # 3. the reviews table: report.reviews() of the saved store
    reviews = judged.reviews(store=store)
    reviews_cell = code_cell(notebook, "display(reviews)")
    assert stdout(reviews_cell).startswith(f"{len(reviews)} reviews in ")
    assert "['ana.jsonl', 'bo.jsonl']" in stdout(reviews_cell)
    shown = shown_table(reviews_cell)
    shown = shown.drop(columns=[c for c in shown.columns if str(c).startswith("Unnamed")])
    assert list(shown.columns) == list(REVIEW_COLUMNS)
    assert [[plain(v) for v in row] for row in shown.itertuples(index=False)] == [
        [plain(v) for v in row] for row in reviews.itertuples(index=False)
    ]
    assert len(reviews) == 2 * len(sample) and set(reviews["reviewer"]) == {"ana", "bo"}
    assert set(zip(reviews["case_id"], reviews["query_mode"])) == set(sample)
    assert reviews["blind"].all()
    expected = {case.case_id: case.expected.answers for case in heta_nb.demo.load_benchmark().cases}
    for row in reviews[reviews["reviewer"] == "ana"].itertuples():
        response = judged.case(row.case_id, row.query_mode).response
        text = (response.answer or " ".join(chunk.text for chunk in response.results[:5])).lower()
        found = any(answer.lower() in text for answer in expected[row.case_id])
        assert row.verdict == ("skip" if not expected[row.case_id] else "correct" if found else "wrong"), row
    wide = reviews.pivot(index=["case_id", "query_mode"], columns="reviewer", values="verdict")
    differ = wide[wide["ana"] != wide["bo"]]
    noted = reviews[reviews["note"] == "simulated disagreement"]
    assert 0 < len(differ) == len(noted) < len(sample) / 4 and set(noted["reviewer"]) == {"bo"}

    # the reviewers' agreement: kappa with its interval, the disagreements
    kappa, disagreements = heta_nb.reviewer_agreement(reviews)
    assert kappa is not None and 0 < kappa.value < 1 and kappa.ci_low < kappa.value < kappa.ci_high
    agreement = code_cell(notebook, "heta_nb.reviewer_agreement(")
    assert stdout(agreement) == f"ana vs bo: {kappa.text}\n"
    shown = shown_table(agreement)
    truth = disagreements[disagreements["spread"] > 0]
    columns = ["case_id", "query_mode", "ana", "bo", "spread"]
    assert shown[columns].values.tolist() == truth[columns].values.tolist()
    assert len(shown) == len(differ)

    # 4. the calibration table: calibrate() of the saved report and reviews
    calibration = heta_nb.calibrate(judged, reviews)
    table = shown_table(code_cell(notebook, "heta_nb.calibrate("))
    assert [[r.metric, plain(r.calibrated), int(r.n), r.reason] for r in table.itertuples()] == [
        [m.metric, plain(m.calibrated), m.n, m.reason] for m in calibration.metrics.values()
    ]
    metrics = calibration.metrics
    # what the Markdown says of it
    assert {name for name in judge_names if calibration.is_calibrated(name)} == {"context_recall"}
    recall = metrics["context_recall"]
    assert recall.n >= calibration.min_labels and recall.agreement is not None
    assert recall.agreement.kappa.ci_low < calibration.floor <= recall.agreement.kappa.value  # "just"
    assert "below the floor" in metrics["context_precision"].reason and metrics["context_precision"].n >= 50
    for name in ("faithfulness", "answer_relevance", "cites_evidence"):
        assert metrics[name].n < calibration.min_labels, name
        assert f"of the {calibration.min_labels} needed" in metrics[name].reason, name
        agreement = metrics[name].agreement
        assert agreement is not None and agreement.kappa.value < calibration.floor, name  # "low"
    assert not calibration.is_calibrated("answer_contains")

    # 5. the prediction-powered estimates: ppi() of the saved report and reviews
    estimate = heta_nb.ppi(judged, "context_recall", reviews, mode="full_text_search")
    chosen = "chosen: {}, reported: {:.3f} [{:.3f}, {:.3f}]".format(estimate.chosen, *estimate.interval)
    assert stdout(code_cell(notebook, 'heta_nb.ppi(judged, "context_recall"')) == f"{estimate.text}\n{chosen}\n"
    estimates = shown_table(code_cell(notebook, "estimates = []"))
    fields = {
        "PPI++": "estimate",
        "ci_low": "ci_low",
        "ci_high": "ci_high",
        "reviews alone": "classical_estimate",
        "alone ci_low": "classical_ci_low",
        "alone ci_high": "classical_ci_high",
        "lam": "lam",
    }
    found = {}
    for row in estimates.to_dict("records"):
        found[row["metric"]] = truth_ppi = heta_nb.ppi(judged, row["metric"], reviews, mode=row["mode"])
        for column, field in fields.items():
            assert row[column] == pytest.approx(round(getattr(truth_ppi, field), 3), abs=1e-9), (row, column)
        assert (row["labeled"], row["judged only"], row["chosen"]) == (
            truth_ppi.n_labeled,
            truth_ppi.n_unlabeled,
            truth_ppi.chosen,
        )
    assert set(found) == judge_names
    assert found["context_recall"].chosen == "ppi" and found["context_recall"].record() == estimate.record()
    assert found["faithfulness"].chosen == "classical" and found["faithfulness"].lam == 0  # tracks people not at all

    # 6. the gate: check() of the saved reports with that calibration
    gate = heta_nb.check(judged, judged_large, calibration=calibration)
    gate_cell = code_cell(notebook, "heta_nb.check(judged, judged_large")
    assert stdout(gate_cell) == f"{gate.headline}\n"
    rows = shown_table(gate_cell)
    shown_rows = [
        [r["mode"], r["metric"], plain(r["gated"]), r["verdict"], r["reason"]] for r in rows.to_dict("records")
    ]
    assert shown_rows == [
        [r.mode, r.metric, plain(r.verdict not in ("n/a", "not comparable")), r.verdict, r.reason] for r in gate.rows
    ]
    for row, want in zip(rows.to_dict("records"), gate.rows):
        for column, value in (("diff", want.diff), ("p_adjusted", want.p_adjusted)):
            assert (math.isnan(value) and math.isnan(row[column])) or row[column] == pytest.approx(value, abs=1e-6)
    verdicts = {(r.mode, r.metric): r for r in gate.rows}
    for mode in judged.modes:  # what the Markdown says of it
        assert verdicts[(mode, "context_recall")].verdict == "regression"
        assert verdicts[(mode, "recall@5")].verdict == "unverified drop"
        for name in judge_names - {"context_recall"}:
            row = verdicts[(mode, name)]
            assert row.verdict == "not comparable" and row.reason.startswith("not calibrated: "), row
    assert gate.exit_code == 1 and gate.verdict == "regression"

    # the CLI: the same gate from the reviews beside NEW, its output and exit code shown
    cli = stdout(code_cell(notebook, "subprocess.run("))
    first = cli.splitlines()[0]
    assert first.startswith("$ heta-nb check ") and first.endswith(" --require-calibrated"), first
    assert f"heta-nb check: {gate.headline}" in cli
    assert cli.count("? not comparable: not calibrated: ") == sum(
        r.reason.startswith("not calibrated: ") for r in gate.rows
    )
    assert cli.rstrip().endswith(f"exit code: {gate.exit_code}")


SHOWN = 5.01e-7
"""How far a number pandas shows (6 decimals) may be from the number it shows: half its last digit."""


def case_scores(report: Any, mode: str, metric: str) -> dict[str, float]:
    """``{case_id: score}`` of one mode and metric, read from the report's case results, as compare
    aligns them: errored cases, skipped scores and text values left out."""
    out = {}
    for result in report.raw["case_results"]:
        if result["query_mode"] != mode or result.get("error"):
            continue
        for score in result["scores"]:
            value, skipped = score["value"], (score.get("metadata") or {}).get("skipped") is True
            if score["name"] == metric and not skipped and isinstance(value, (bool, int, float)):
                out[result["case_id"]] = float(value)
    return out


def paired_scores(baseline: Any, candidate: Any, mode: str, metric: str) -> tuple[list[str], Any, Any]:
    """The cases both reports scored, and each one's baseline and candidate score."""
    import numpy as np

    before, after = case_scores(baseline, mode, metric), case_scores(candidate, mode, metric)
    ids = [case_id for case_id in before if case_id in after]
    return ids, np.array([before[i] for i in ids]), np.array([after[i] for i in ids])


def assert_same_table(shown: pd.DataFrame, truth: pd.DataFrame, columns: list[str]) -> None:
    """The shown table's rows are ``truth``'s, column by column (numbers to the 6 decimals shown: :data:`SHOWN`)."""
    assert len(shown) == len(truth), (len(shown), len(truth))
    for got, want in zip(shown[columns].to_dict("records"), truth[columns].to_dict("records")):
        for column in columns:
            a, b = got[column], want[column]
            if isinstance(b, float):
                assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=0, abs=SHOWN), (column, got, want)
            else:
                assert plain(a) == plain(b), (column, got, want)


def check_why_notebook(notebook: Any, tmp: Path) -> None:
    """07-why-it-changed: what each cell shows, recomputed from the reports it saved."""
    import html as html_text
    from statistics import NormalDist

    import numpy as np
    from scipy import stats

    import heta_nb
    from heta_nb.comparison.stages import STAGES
    from heta_nb.stats.power import cases_needed

    assert_offline(notebook)
    (store_root,) = tmp.glob("heta-why-*/store")
    store = heta_nb.ReportStore(store_root)
    small = store.load("saltmarsh isles", "small-chunks")
    large = store.load("saltmarsh isles", "large-chunks")
    benchmark = heta_nb.demo.load_benchmark()
    labels = {case.case_id: case.labels or {} for case in benchmark.cases}
    comparison = heta_nb.compare(small, large, benchmark=benchmark)
    system = "large-chunks/extractive_answer"
    ids, f1_before, f1_after = paired_scores(small, large, "extractive_answer", "answer_f1")
    assert len(ids) == 89  # the 95 cases but the 6 without gold data

    # the comparison's view: why it changed, under the verdicts, above the table with "detects ≥"
    (view,) = [o for o in code_cell(notebook, "c = heta_nb.compare(").outputs if "text/html" in o.get("data", {})]
    assert view["data"]["text/plain"] == comparison._repr_mimebundle_(include=("text/plain",))["text/plain"]
    page = html_text.unescape(view["data"]["text/html"])
    assert 'data-testid="heta-comparison"' in page
    why = page.index("Why it changed")
    assert page.index('data-testid="heta-comparison-verdict"') < why < page.index('data-testid="heta-comparison-table"')
    assert "detects ≥" in page[page.index('data-testid="heta-comparison-table"') :]
    reasons = comparison.why()
    shown_lines = [*reasons["stages"]["lines"], *reasons["slices"]["lines"]]
    shown_lines += [line for pair in reasons["recipes"] for line in pair["lines"]]
    assert len(reasons["stages"]["lines"]) == 2 and reasons["slices"]["lines"]
    for line in shown_lines:
        assert line in page[why:], line

    # 1. what differs: the recorded settings and the chunk counts of the saved reports, nothing else
    def setting(report: Any, name: str) -> Any:
        (step,) = [s for s in report.raw["metadata"]["heta_nb"]["recipe_parameters"] if s["name"] == "split_documents"]
        return step["parameters"][name]

    def chunks(report: Any) -> int:
        (manifest,) = report.knowledge_base_manifests
        return len(manifest["run_record"]["artifacts"]["chunk_keys"])

    assert (setting(small, "chunk_size"), setting(large, "chunk_size")) == (160, 700)
    assert (setting(small, "overlap"), setting(large, "overlap")) == (20, 60)
    assert chunks(large) < chunks(small) / 2  # "far fewer"
    assert stdout(code_cell(notebook, "c.recipe_changes()")) == (
        "recipe: split_documents.chunk_size 160 → 700\n"
        "recipe: split_documents.overlap 20 → 60\n"
        f"knowledge base: chunk_keys {chunks(small)} → {chunks(large)} items\n"
    )

    # 2. the stages: stage_counts() of the saved reports, and the same counts from their case results
    counts = shown_table(code_cell(notebook, "c.stage_counts()"))
    truth = comparison.stage_counts()
    assert_same_table(counts, truth, ["system", "mode", "direction", *STAGES, "total"])
    found: dict[tuple[str, str], dict[str, int]] = {}
    for mode, outcome in (("full_text_search", "evidence_recall@5"), ("extractive_answer", "answer_f1")):
        responses = [
            {r["case_id"]: r["response"] for r in report.raw["case_results"] if r["query_mode"] == mode}
            for report in (small, large)
        ]
        evidence = [case_scores(report, mode, "evidence_recall@5") for report in (small, large)]
        case_ids, before, after = paired_scores(small, large, mode, outcome)
        for case_id, y_a, y_b in zip(case_ids, before.tolist(), after.tolist()):
            if abs(y_b - y_a) <= comparison.tie_tolerance:
                continue
            a, b = (r[case_id] for r in responses)
            output = [
                (r["answer"], r["results"][0]["text"] if r["results"] else None, len(r["results"])) for r in (a, b)
            ]
            e_a, e_b = (e.get(case_id, math.nan) for e in evidence)
            sign = 1.0 if y_b > y_a else -1.0
            if output[0] == output[1]:
                stage = "neither"
            elif outcome == "evidence_recall@5":
                stage = "retrieval"
            elif math.isnan(e_a) or math.isnan(e_b):
                stage = "unknown"
            elif sign * (e_b - e_a) <= comparison.tie_tolerance:
                stage = "generation"
            elif (e_b if sign < 0 else e_a) <= comparison.tie_tolerance:
                stage = "retrieval"
            else:
                stage = "both"
            row = found.setdefault((f"large-chunks/{mode}", "improved" if sign > 0 else "regressed"), {})
            row[stage] = row.get(stage, 0) + 1
    assert {
        (r["system"], r["direction"]): {s: r[s] for s in STAGES if r[s]} for r in counts.to_dict("records")
    } == found
    # what the Markdown says of them
    for direction in ("improved", "regressed"):
        assert set(found[("large-chunks/full_text_search", direction)]) == {"retrieval"}
    regressed = found[(system, "regressed")]
    assert regressed["generation"] > sum(regressed.values()) / 2
    lost = shown_table(code_cell(notebook, "stage == 'generation' and direction == 'regressed'"))
    columns = ["case_id", "query", "outcome_baseline", "outcome_value", "evidence_baseline", "evidence_value"]
    stages_truth = comparison.stages().query("stage == 'generation' and direction == 'regressed'")
    assert_same_table(lost, stages_truth.head(), columns)
    assert len(lost) == 5  # "the first five"
    assert set(stages_truth["system"]) == {system}
    assert (lost["evidence_value"] >= lost["evidence_baseline"]).all()
    assert (lost["outcome_value"] < lost["outcome_baseline"]).all()

    # 3. the slices: slices() of the saved reports; their sizes and differences from the case results
    columns = ["slice_by", "slice", "n", "mean_diff", "ci_low", "ci_high", "p_adjusted", "correction", "verdict"]
    holm = comparison.slices("labels", metrics=["answer_f1"])
    shown = shown_table(code_cell(notebook, 'holm = c.slices("labels"'))
    assert_same_table(shown, holm, columns)
    assert set(holm["slice_by"]) == {"labels.difficulty", "labels.hops", "labels.question_type"}
    for row in holm.to_dict("records"):
        key = row["slice_by"].removeprefix("labels.")
        inside = [i for i, case_id in enumerate(ids) if str(labels[case_id].get(key)) == row["slice"]]
        assert row["n"] == len(inside), row
        if row["family_size"]:
            assert row["mean_diff"] == pytest.approx(float(np.mean(f1_after[inside] - f1_before[inside])), abs=1e-12)
    moved = {(r["slice_by"], r["slice"]) for r in holm.to_dict("records") if r["significant"]}
    assert moved == {("labels.difficulty", "easy"), ("labels.hops", "1"), ("labels.question_type", "factoid")}
    assert all(holm.loc[holm["significant"], "verdict"].str.startswith("worse"))
    (hops3,) = holm[(holm["slice_by"] == "labels.hops") & (holm["slice"] == "3")].to_dict("records")
    assert hops3["n"] == 4 and hops3["verdict"] == "too small to test (4 cases < 10)"
    bh = comparison.slices("labels", metrics=["answer_f1"], correction="bh")
    assert_same_table(shown_table(code_cell(notebook, 'correction="bh"')), bh, columns)
    assert {(r["slice_by"], r["slice"]) for r in bh.to_dict("records") if r["significant"]} == moved
    pairs = holm.merge(bh, on=["slice_by", "slice"], suffixes=("_holm", "_bh"))
    tested = pairs[pairs["family_size_holm"] > 0]
    assert len(tested) == 8 and (tested["p_adjusted_bh"] <= tested["p_adjusted_holm"] + 1e-12).all()
    assert tested["correction_bh"].str.startswith("Benjamini-Hochberg over ").all()
    few = comparison.slices("labels", metrics=["answer_f1"], min_cases=40)
    columns = ["slice_by", "slice", "n", "mean_diff", "p_adjusted", "family_size", "verdict"]
    shown = shown_table(code_cell(notebook, "min_cases=40"))
    assert_same_table(shown, few, columns)
    tested_per_label = shown[shown["n"] >= 40]["slice_by"].value_counts()
    for row in shown.to_dict("records"):
        if row["n"] < 40:
            assert row["verdict"] == f"too small to test ({row['n']} cases < 40)" and row["family_size"] == 0, row
        else:  # the family: the slices of its label that are tested
            assert row["family_size"] == tested_per_label[row["slice_by"]], row
    assert (shown["n"] < 40).sum() >= 4 and tested_per_label["labels.difficulty"] == 1

    # 4. clustered by document: compare(cluster_by=) of the saved reports, and CR1 recomputed for answer_f1
    clustered = heta_nb.compare(small, large, benchmark=benchmark, cluster_by="document")
    cell = code_cell(notebook, 'cluster_by="document"')
    assert stdout(cell) == "\n".join(clustered.notes) + "\n"
    documents = {
        case.case_id: str(case.expected.evidence[0].reference_id or case.expected.evidence[0].document_id)
        for case in benchmark.cases
        if case.expected.evidence
    }
    groups = [documents[case_id] for case_id in ids]
    clusters = len(set(groups))
    assert any(
        n.startswith(f"intervals and p-values clustered by document ({clusters} documents; CR1")
        for n in clustered.notes
    )
    columns = ["system", "metric", "mean_diff", "ci_low", "ci_high", "p_value", "clusters", "design_effect", "verdict"]
    table = shown_table(cell)
    assert_same_table(table, clustered.summary_frame(), columns)
    d = f1_after - f1_before
    residuals = pd.Series(d - d.mean()).groupby(groups).sum().to_numpy()
    se = math.sqrt(clusters / (clusters - 1) * float(residuals @ residuals)) / len(d)
    half = stats.t.ppf(0.975, clusters - 1) * se
    (f1,) = table[(table["system"] == system) & (table["metric"] == "answer_f1")].to_dict("records")
    assert f1["clusters"] == clusters
    assert f1["ci_low"] == pytest.approx(d.mean() - half, rel=0, abs=SHOWN)
    assert f1["ci_high"] == pytest.approx(d.mean() + half, rel=0, abs=SHOWN)
    assert f1["p_value"] == pytest.approx(2 * stats.t.sf(abs(d.mean()) / se, clusters - 1), rel=0, abs=SHOWN)
    naive = float(np.std(d, ddof=1)) / math.sqrt(len(d))
    assert f1["design_effect"] == pytest.approx((se / naive) ** 2, rel=0, abs=SHOWN)
    # what the Markdown says of it
    by_metric = {(r["system"], r["metric"]): r for r in table.to_dict("records")}
    for metric in ("evidence_recall@5", "recall@5", "ndcg@5", "mrr@5"):
        for mode in ("full_text_search", "extractive_answer"):
            assert by_metric[(f"large-chunks/{mode}", metric)]["design_effect"] > 1, (mode, metric)
    assert by_metric[(system, "answer_contains")]["design_effect"] < 1
    assert f1["verdict"].startswith("worse")

    # McNemar and the minimum detectable difference: recomputed from the case results
    cell = code_cell(notebook, ".mcnemar.text")
    _, passed_before, passed_after = paired_scores(small, large, "extractive_answer", "answer_contains")
    lost_cases = int(np.sum((passed_before == 1) & (passed_after == 0)))
    gained = int(np.sum((passed_before == 0) & (passed_after == 1)))
    flips = lost_cases + gained
    mcnemar = min(1.0, 2 * sum(math.comb(flips, k) for k in range(min(lost_cases, gained) + 1)) / 2**flips)
    assert stdout(cell) == (
        f"McNemar exact p={mcnemar:.2f} ({flips} discordant: {gained} gained, {lost_cases} lost)\n"
    ), stdout(cell)
    table = shown_table(cell)
    columns = ["metric", "n", "mean_diff", "ci_low", "ci_high", "p_adjusted", "mcnemar_p"]
    assert_same_table(table, comparison.summary_frame().query("mode == 'extractive_answer'"), columns + ["verdict"])
    rows = {r["metric"]: r for r in table.to_dict("records")}
    assert rows["answer_contains"]["mcnemar_p"] == pytest.approx(mcnemar, rel=0, abs=SHOWN)
    assert [m for m, r in rows.items() if not math.isnan(r["mcnemar_p"])] == ["answer_contains"]
    z = NormalDist().inv_cdf(1 - 0.05 / (2 * len(rows))) + NormalDist().inv_cdf(0.8)
    for metric, row in rows.items():
        _, before, after = paired_scores(small, large, "extractive_answer", metric)
        mdd = z * float(np.std(after - before, ddof=1)) / math.sqrt(len(after))
        assert row["min_detectable_difference"] == pytest.approx(mdd, rel=0, abs=SHOWN), metric
        significant = row["p_adjusted"] < 0.05
        excludes_zero = row["ci_low"] > 0 or row["ci_high"] < 0
        underpowered = not significant and not excludes_zero and mdd > abs(row["mean_diff"])
        assert row["verdict"].startswith("underpowered") == underpowered, row
        if underpowered:
            assert f"differences under {mdd:.3g} cannot be told apart with {row['n']} cases" in row["verdict"]
    assert rows["answer_contains"]["verdict"].startswith("underpowered")  # what the Markdown says
    assert rows["answer_contains"]["mean_diff"] < 0

    # 5. plan: the cases needed from the paired spread, and from one report's (an assumption, said)
    plan = heta_nb.plan(comparison, "answer_f1", difference=0.02, system=system)
    (shown,) = [o["data"]["text/plain"] for o in code_cell(notebook, "heta_nb.plan(c,").outputs if "data" in o]
    assert shown == repr(plan)
    assert plan.tests == 6 and "over 6 tests" in shown
    assert plan.cases == cases_needed(float(np.std(d, ddof=1)), 0.02, alpha=0.05, power=0.8, tests=6)
    assert f"takes {plan.cases:,} cases; the benchmark has {len(ids)} " in shown
    one = heta_nb.plan(small, "answer_f1", 0.02)
    (shown,) = [o["data"]["text/plain"] for o in code_cell(notebook, "heta_nb.plan(small,").outputs if "data" in o]
    assert shown == repr(one) and "as if two recipes' scores were uncorrelated" in shown
    scores = np.array(list(case_scores(small, "extractive_answer", "answer_f1").values()))
    assert one.cases == cases_needed(float(np.std(scores, ddof=1)) * math.sqrt(2), 0.02, alpha=0.05, power=0.8)
    assert one.cases > plan.cases  # "asks for more cases than the paired figure"

    # 6. the grid: a widget (the static comparison its fallback); its disagreements from the case results
    cell = code_cell(notebook, 'view="grid"')
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell.outputs)
    fallbacks = [o["data"].get("text/html", "") for o in cell.outputs if "text/html" in o.get("data", {})]
    assert fallbacks and all('data-testid="heta-comparison"' in h for h in fallbacks)
    before, after = (case_scores(r, "extractive_answer", "answer_contains") for r in (small, large))
    disagree = sum(1 for case_id in before if case_id in after and before[case_id] != after[case_id])
    assert disagree == flips
    assert stdout(cell) == (
        f"<GridView {len(comparison.systems)} systems × {len(benchmark.cases)} cases on answer_contains (shown)>: "
        f"the systems disagree on {disagree} of them\n"
    )

    # 7. history: the saved reports in time order, their means and the paired change
    history = heta_nb.history(store, kb="saltmarsh isles", benchmark="saltmarsh_isles")
    assert history.reports == ("small-chunks", "large-chunks")  # "small chunks first"
    table = shown_table(code_cell(notebook, "over_time.frame()"))
    columns = ["report_id", "n", "mean", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high", "verdict"]
    truth = history.frame().query("mode == 'extractive_answer' and metric == 'answer_f1'")
    assert_same_table(table, truth, columns + ["real"])
    means = [float(np.mean(list(case_scores(r, "extractive_answer", "answer_f1").values()))) for r in (small, large)]
    assert table["mean"].tolist() == pytest.approx(means, rel=0, abs=SHOWN)
    assert table["change"].iloc[1] == pytest.approx(float(d.mean()), rel=0, abs=SHOWN)
    assert table["verdict"].iloc[1].startswith("worse") and plain(table["real"].iloc[1]) == "True"
    plot = code_cell(notebook, "over_time.plot(")
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)

    # 8. the gate: check() of the saved reports, its Markdown with "detects ≥" and "Why it changed"
    gate = heta_nb.check(large, small, benchmark=benchmark)
    markdown = stdout(code_cell(notebook, "gate.to_markdown()"))
    assert markdown == gate.to_markdown() + "\n"
    assert "| detects ≥ |" in markdown and "**Why it changed**" in markdown
    assert "recipe: split\\_documents.chunk\\_size 160 → 700" in markdown and "- slices:" in markdown


def test_the_scale_out_notebook_says_what_to_install_without_dask(tmp_path: Path) -> None:
    """04's cluster cell, run where ``dask.distributed`` cannot be imported: it says what to install
    and leaves ``client`` None (the sweep then runs in local processes) instead of raising."""
    import json
    import subprocess
    import sys

    notebook = nbformat.read(ROOT / "notebooks" / "04-scale-out.ipynb", as_version=4)
    (cell,) = [c for c in notebook.cells if c.cell_type == "code" and "LocalCluster(" in c.source]
    script = "import sys\nsys.modules['dask'] = None\nsys.modules['dask.distributed'] = None\n" + cell.source
    script += "\nimport json\nprint(json.dumps(client is None))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("Dask is not installed: pip install 'heta-nb[notebooks]'") and json.loads(lines[-1])
