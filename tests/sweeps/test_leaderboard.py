"""The leaderboard's numbers against ``heta_nb.compare`` run pair by pair, and its views."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from typing import Any

import nbformat
import pytest

import heta_nb
from heta_nb.comparison import compare
from heta_nb.stats.paired import holm
from heta_nb.sweeps import Leaderboard, SweepError


def test_every_paired_test_is_compare_on_the_two_reports(toy_board_reports: Any) -> None:
    """The same pair reads the same: every test on the board is compare() of the two reports, mode with
    mode, Holm over the pair's metrics in that mode (the family compare and check use), p_adjusted too."""
    _, board = toy_board_reports
    checked = 0
    for benchmark in board.benchmarks:
        base = board.report("first", benchmark)
        for recipe in ("second", "random"):
            reference = compare(base, board.report(recipe, benchmark), names=["first", recipe])
            gate = heta_nb.check(board.report(recipe, benchmark), base)
            for mode in board.modes:
                system = f"{recipe}/{mode}"
                for metric in reference.metrics:
                    cell = board.cell(recipe, benchmark, metric, mode)
                    if reference.verdict(system, metric).startswith("n/a"):
                        assert cell.test is None and not cell.significant
                        continue
                    expected = reference.test(system, metric)
                    assert cell.test is not None and cell.family == reference.family(system).text
                    for field in (
                        "n", "mean_diff", "ci_low", "ci_high", "p_value", "p_value_adjusted", "wins", "ties", "losses"
                    ):  # fmt: skip
                        assert getattr(cell.test, field) == getattr(expected, field), (benchmark, recipe, metric, field)
                    row = next(r for r in gate.rows if (r.mode, r.metric) == (mode, metric))
                    assert (row.p_value, row.p_adjusted, row.diff) == (
                        expected.p_value,
                        expected.p_value_adjusted,
                        expected.mean_diff,
                    )
                    checked += 1
    assert checked >= 2 * 2 * 2 * 2


def test_holm_runs_over_each_pair_s_metrics(toy_board_reports: Any) -> None:
    _, board = toy_board_reports
    rows = [r for r in board.rows() if not math.isnan(r["p_value"])]
    families: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        families.setdefault((row["benchmark"], row["recipe"], row["mode"]), []).append(row)
    assert board.family_size == max(len(f) for f in families.values()) == 3
    for family in families.values():
        assert [r["p_adjusted"] for r in family] == holm([r["p_value"] for r in family])
        assert len({r["family"] for r in family}) == 1 and family[0]["family"].startswith("Holm over the ")
    for row in rows:
        assert row["significant"] == (row["p_adjusted"] < 0.05)
    # the second KB is worse than the first on recall@1 everywhere: a real difference
    cell = board.cell("second", "toy-a", "recall@1", "good")
    assert cell.significant and cell.direction == -1 and cell.test.mean_diff == -1.0


def test_cells_are_the_reports_own_means_and_ranks_follow_them(toy_board_reports: Any) -> None:
    _, board = toy_board_reports
    statuses = set()
    for benchmark in board.benchmarks:
        for metric in board.metrics:
            column = []
            for recipe in board.recipes:
                summaries = {(s.mode, s.metric): s for s in board.report(recipe, benchmark).metric_summaries()}
                for mode in board.modes:
                    cell = board.cell(recipe, benchmark, metric, mode)
                    s = summaries[(mode, metric)]
                    statuses.add(s.status)
                    assert (cell.status, cell.reason) == (s.status, s.reason)
                    if not s.scored:  # n/a: no number, not ranked (never 0.000 ranked last)
                        assert math.isnan(cell.mean) and cell.n == 0 and cell.rank is None and not cell.best
                        continue
                    assert (cell.mean, (cell.ci_low, cell.ci_high), cell.n) == (s.shown, s.shown_ci, s.shown_n)
                    column.append(cell)
            best = max(c.mean for c in column)
            for cell in column:
                assert cell.rank == 1 + sum(1 for other in column if other.mean > cell.mean + 1e-12)
                assert cell.best == (cell.mean == best)
    assert "n/a" in statuses  # the poor mode returns no answers


def test_frames(toy_board_reports: Any) -> None:
    _, board = toy_board_reports
    frame = board.frame()
    assert len(frame) == 2 * 3 * 2 * 3  # benchmarks x recipes x modes x metrics
    assert frame["best"].dtype == bool and frame.attrs["family_size"] == 3
    assert frame.attrs["family"].startswith("Holm over the 3 metrics of each recipe vs the baseline")
    for name in ("n", "errors", "evaluator_errors", "n_paired", "wins", "ties", "losses"):
        assert frame[name].dtype == "int64"  # counts print as 89, never 89.000
    na = frame[frame["status"] == "n/a"]
    assert len(na) and na["mean"].isna().all() and na["rank"].isna().all() and (na["reason"] != "").all()
    base = frame[frame["is_baseline"]]
    assert set(base["recipe"]) == {"first"} and base["p_value"].isna().all()
    wide = board.frame(wide=True)
    assert list(wide.index) == [f"{r} · {m}" for r in ("first", "second", "random") for m in ("good", "poor")]
    assert wide.loc["first · good", ("toy-a", "recall@1")] == 1.0
    assert ("", "mean rank") in wide.columns


def test_text_table_marks_the_best_and_the_real_differences(toy_board_reports: Any) -> None:
    _, board = toy_board_reports
    text = repr(board)
    assert text.startswith("Leaderboard: 3 recipe(s) × 2 benchmark(s) × 3 metric(s), 2 modes; baseline first")
    line = next(line for line in text.splitlines() if line.startswith("second · good"))
    assert "0.000 ▼" in line  # recall@1 of the second KB: 0, significantly worse
    first = next(line for line in text.splitlines() if line.startswith("first · good"))
    assert "1.000* ·" in first
    assert "second · good on toy-a recall@1: -1.000" in text


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self.cells.append({k: v or "" for k, v in attrs})

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def test_html_view_marks_the_best_per_column_and_real_differences(toy_board_reports: Any) -> None:
    _, board = toy_board_reports
    html = board._repr_mimebundle_()["text/html"]
    parser = _Cells()
    parser.feed(html)
    cells = [c for c in parser.cells if "heta-lb-cell" in c.get("class", "")]
    empty = [c for c in parser.cells if "heta-lb-empty" in c.get("class", "")]
    assert len(cells) + len(empty) == 6 * 6  # systems x (benchmarks x metrics)
    assert empty and all(c["title"].startswith("answer_contains on") and ": n/a: " in c["title"] for c in empty)
    best = [c for c in cells if "heta-lb-best" in c["class"]]
    assert len(best) >= 6  # one or more per column (ties share it)
    worse = [c for c in cells if "heta-worse" in c["class"]]
    assert worse and all("worse (p" in c["title"] for c in worse)
    assert "<script" not in html and "Holm over the 3 metrics of each recipe vs the baseline" in html


def test_plots_take_an_axes(toy_board_reports: Any) -> None:
    from matplotlib.figure import Figure

    _, board = toy_board_reports
    ax = Figure().subplots()
    assert board.plot("recall@1", ax=ax) is ax
    assert ax.heta_nb_info["kind"] == "heatmap" and ax.heta_nb_info["real"] > 0
    dots = board.plot("ndcg@3", kind="dots")
    assert dots.heta_nb_info["systems"] == list(board.systems)
    with pytest.raises(ValueError, match="not on the leaderboard"):
        board.plot("nope")


def test_standalone_page_is_offline_and_complete(toy_board_reports: Any, tmp_path: Any) -> None:
    _, board = toy_board_reports
    path = tmp_path / "board.html"
    assert heta_nb.to_html(board, path) == path == board.to_html(path)
    html = path.read_text(encoding="utf-8")
    undated = {
        re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", text) for text in (html, board.to_html(), heta_nb.to_html(board))
    }
    assert len(undated) == 1  # the same page as text (two exports may fall in different minutes)
    assert "Content-Security-Policy" in html and 'data-testid="heta-leaderboard"' in html
    assert not re.search(r"""(src|href)=["']https?://""", html)
    assert html.count("data:image/svg+xml;base64,") == 3  # one heatmap per metric


def test_sections_are_valid_cells_that_reload_from_the_store(toy_board_reports: Any) -> None:
    store, board = toy_board_reports
    cells = heta_nb.sections(board)
    notebook = nbformat.v4.new_notebook(cells=cells)
    nbformat.validate(notebook)
    code = [c for c in cells if c.cell_type == "code"]
    assert f"heta_nb.Leaderboard.from_store({str(store)!r}, sweep='sweep')" in code[0].source
    assert "text/html" in code[0].outputs[0]["data"]
    assert "image/svg+xml" in code[-1].outputs[0]["data"]
    assert "second · good is worse than first on toy\\-a recall@1: -1.000" in cells[0].source
    assert "Baseline **first** on every benchmark" in cells[0].source


def test_from_store_rebuilds_the_same_board_in_sweep_order(toy_board_reports: Any) -> None:
    store, board = toy_board_reports
    again = Leaderboard.from_store(store, sweep="sweep")
    assert again.recipes == board.recipes == ("first", "second", "random")
    assert again.benchmarks == ("toy-a", "toy-b")
    assert again.rows() == board.rows()
    other = Leaderboard.from_store(store, baseline="random")
    assert other.cell("first", "toy-a", "recall@1", "good").test is not None
    with pytest.raises(SweepError, match="no report of sweep 'other'"):
        Leaderboard.from_store(store, sweep="other")


def test_bad_options_are_refused_with_what_exists(toy_board_reports: Any) -> None:
    _, board = toy_board_reports
    with pytest.raises(SweepError, match="baseline 'nope' is not a recipe of the board"):
        Leaderboard.from_reports(board.reports, baseline="nope")
    with pytest.raises(SweepError, match=r"metrics \['ndgc@3'\] not in the reports"):
        Leaderboard.from_reports(board.reports, metrics=["ndgc@3"])
    with pytest.raises(ValueError, match="pass mode="):
        board.cell("first", "toy-a", "recall@1")
    with pytest.raises(SweepError, match="at least one report"):
        Leaderboard.from_reports([])


def test_one_mode_boards_name_systems_by_recipe_and_newer_duplicates_win(toy_board_reports: Any) -> None:
    _, board = toy_board_reports
    small = Leaderboard.from_reports(board.reports, modes="good", metrics=["recall@1"], baseline="second")
    assert small.systems == ("first", "second", "random")
    assert small.family_size == 1  # one metric per pair: nothing to correct
    assert small.cell("first", "toy-b", "recall@1").direction == 1
    twice = Leaderboard.from_reports([*board.reports, board.report("first", "toy-a")], modes="good")
    assert twice.family_size == board.family_size and len(twice.reports) == len(board.reports)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend((f"{tag}.{k}", v or "") for k, v in attrs)


@pytest.mark.hostile
def test_hostile_recipe_and_benchmark_names_are_text_everywhere(kit: Any) -> None:
    recipe = '<img src=x onerror="alert(1)">'
    benchmark = "</style><script>alert(2)</script>{{ 7*7 }}"
    board = heta_nb.sweep(
        {benchmark: kit.toy_pair()["toy-a"]},
        kbs={recipe: kit.first_kb, "plain": kit.KBS["second"]},
        store=None, executor="serial", progress=False, query_modes="good", evaluators=["recall@1"],
    )  # fmt: skip
    for html in (board._repr_mimebundle_()["text/html"], board.to_html()):
        parser = _Tags()
        parser.feed(html)
        assert not [name for name, _ in parser.attrs if name.endswith(".onerror")]
        assert all(v.startswith("data:image/svg+xml;base64,") for name, v in parser.attrs if name == "img.src")
        assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html
        assert "&lt;/style&gt;&lt;script&gt;alert(2)&lt;/script&gt;{{ 7*7 }}" in html
    parser = _Tags()
    parser.feed(board.to_html())
    assert parser.tags.count("script") == 2  # the page's own: the explorer's data and its code
    markdown = heta_nb.sections(board, source=["a.json"])[0].source
    assert "<img" not in markdown and "&lt;img" in markdown


def test_explore_opens_the_pairs_comparison_with_its_benchmark(toy_board_reports: Any, kit: Any) -> None:
    _, board = toy_board_reports
    explorer = board.explore("toy-a", "second", mode="good")
    assert type(explorer).__name__ == "Explorer"
    with pytest.raises(KeyError, match="'first' is not compared on 'toy-a'"):
        board.comparison("toy-a", "first", mode="good")
