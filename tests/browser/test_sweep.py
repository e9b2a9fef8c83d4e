"""A sweep in a real JupyterLab 4: the live table of pairs moves, the final table stays, the leaderboard reads.

Three KBs (one deliberately worse) over two benchmarks run in threads with a small delay per
query, so the live table is seen while pairs run. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

SETUP = """
import time
import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkCase, BenchmarkEvidence, BenchmarkExpected

def bench(version, n):
    cases = [BenchmarkCase(case_id=f"c{i:03d}", query=f"question {i}",
                           expected=BenchmarkExpected(answers=(f"answer{i % 7}",),
                                                      evidence=(BenchmarkEvidence(reference_id=f"d{i % 7}"),)))
             for i in range(n)]
    return Benchmark({"name": "browser sweep", "version": version, "split": "test", "task_type": "qa"}, (), cases)

def kb(shift):
    def answer(query):
        time.sleep(0.02)
        i = int(query.split()[-1])
        return {"results": [{"id": f"r{i}", "text": "t", "source": {"document_id": f"d{(i + shift) % 7}"}}],
                "answer": f"answer{i % 7}"}
    return answer
"""

SWEEP = """board = heta_nb.sweep({"part-a": bench("a", 60), "part-b": bench("b", 40)},
                      kbs={"right": kb(0), "<b>wrong</b>": kb(1), "also right": kb(0)},
                      store=None, executor="threads", max_workers=2, query_modes="m",
                      evaluators=["recall@1", "answer_contains"], concurrency=2)
board"""


def test_the_sweep_table_moves_and_the_leaderboard_shows_what_is_real(
    page, jupyter_server, artifacts_dir: Path
) -> None:
    name = jupyter_server.add_notebook_from_sources(["%load_ext heta_nb", SETUP, SWEEP])
    open_notebook(page, jupyter_server, name)
    run_all_cells(page)
    live = page.locator(".heta-sweep-widget [data-testid='heta-sweep']").first
    expect(live).to_be_visible(timeout=60_000)
    expect(live.locator("tr[data-phase='running']").first).to_be_visible(timeout=30_000)
    expect(live.locator("tr[data-phase='queued']").first).to_be_visible()
    page.locator(".heta-sweep-widget").first.scroll_into_view_if_needed()  # its content is redrawn
    page.screenshot(path=str(artifacts_dir / "browser-sweep-midrun.png"))
    board = page.locator(".jp-OutputArea-output [data-testid='heta-leaderboard']").first
    expect(board).to_be_visible(timeout=90_000)
    wait_all_cells_executed(page)
    final = page.locator(".jp-OutputArea-output [data-testid='heta-sweep']").last
    expect(final.locator("tr[data-phase='done']")).to_have_count(6)
    expect(final).to_contain_text("6 / 6 finished")
    # the wrong KB is worse on recall@1 on both benchmarks: ▼, with its paired difference on hover
    wrong = board.locator("tbody tr", has_text="<b>wrong</b>")
    expect(wrong.locator("td.heta-worse")).to_have_count(2)
    assert "vs baseline -1.000" in (wrong.locator("td.heta-worse").first.get_attribute("title") or "")
    expect(board.locator("td.heta-lb-best").first).to_be_visible()
    expect(page.locator(".jp-OutputArea-output b", has_text="wrong")).to_have_count(0)  # a name is text
    board.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "browser-sweep-leaderboard.png"))
    assert page.js_errors == []
