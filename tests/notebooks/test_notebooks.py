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
}

JUDGE_ENV = ("HETA_NB_JUDGE_MODEL", "HETA_NB_JUDGE_API_BASE", "HETA_NB_JUDGE_API_KEY")
"""What notebook 05 reads to choose its judge model (unset in the tests: the offline stand-in)."""

IN_MKDTEMP = ("05-judges.ipynb", "06-review-and-calibrate.ipynb")
"""Notebooks whose report store is a ``tempfile.mkdtemp()`` folder: the test points TMPDIR where it looks."""

NETWORK = re.compile(
    r"https?://|HTTPSConnectionPool|ConnectionError|Max retries|urlopen|getaddrinfo|Name or service|download", re.I
)
"""Words of an output that mention reaching the network."""


def test_there_are_six_notebooks() -> None:
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
    if path.name == "06-review-and-calibrate.ipynb":
        check_review_notebook(notebook, tmp_path / "tmp")


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


def assert_offline(notebook: Any) -> None:
    """No output mentions the network: the judge is the offline stand-in (the demo's KB build only
    says that Heta's ParseDocuments could not download tiktoken's encoding)."""
    build = code_cell(notebook, "demo.run_demo(")
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        reached = [line for line in shown_text(cell).splitlines() if NETWORK.search(line)]
        if cell is build:
            reached = [line for line in reached if "HetaRunWarning: tiktoken could not load" not in line]
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
