"""The sweep's state (updates folded in order, ETA) and its views: the widget, the console lines, the HTML."""

from __future__ import annotations

import io
from html.parser import HTMLParser

import pytest

from heta_nb.sweeps import PairStatus, SweepConsole, SweepState, SweepWidget
from heta_nb.sweeps.progress import render_sweep_html
from heta_nb.sweeps.status import apply_update


def _state(*names: tuple[str, str], workers: int = 2) -> SweepState:
    pairs = tuple(PairStatus(i, r, b) for i, (r, b) in enumerate(names))
    return SweepState(pairs=pairs, executor="2 processes", workers=workers)


def test_updates_fold_in_order_and_a_finished_pair_stays_finished() -> None:
    state = _state(("a", "x"))
    state = apply_update(state, {"pair": 0, "seq": 1, "phase": "building", "step": "SplitDocuments"}, 1.0)
    state = apply_update(state, {"pair": 0, "seq": 3, "phase": "running", "done": 5, "total": 10}, 3.0)
    late = apply_update(state, {"pair": 0, "seq": 2, "phase": "building"}, 4.0)  # arrived out of order
    assert late.pairs[0].phase == "running" and late.pairs[0].done == 5 and late.now == 4.0
    done = apply_update(late, {"pair": 0, "phase": "done", "done": 10, "total": 10}, 6.0)
    after = apply_update(done, {"pair": 0, "seq": 9, "phase": "running", "done": 7}, 7.0)
    assert after.pairs[0].phase == "done" and after.pairs[0].done == 10
    assert after.pairs[0].started == 1.0 and after.pairs[0].running_since == 3.0 and after.pairs[0].finished == 6.0


def test_eta_counts_running_pairs_at_their_rate_and_queued_ones_as_typical_pairs() -> None:
    state = _state(("a", "x"), ("b", "x"), ("c", "x"), workers=2)
    state = apply_update(state, {"pair": 0, "seq": 1, "phase": "running", "done": 0, "total": 100}, 0.0)
    assert state.eta_s is None  # no rate yet, nothing finished
    state = apply_update(state, {"pair": 0, "seq": 2, "phase": "running", "done": 50, "total": 100}, 10.0)
    # pair 0: 50 left at 5/s = 10 s, projected 20 s; pair 2 queued: 20 s more, over 2 workers
    assert state.eta_s == pytest.approx(max(10.0, (10.0 + 20.0 + 20.0) / 2))
    state = apply_update(state, {"pair": 0, "phase": "done"}, 20.0)
    state = apply_update(state, {"pair": 1, "phase": "reused"}, 20.0)
    state = apply_update(state, {"pair": 2, "phase": "failed", "message": "boom"}, 20.0)
    assert state.finished and state.eta_s == 0.0 and state.count("failed") == 1


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "tr" and dict(attrs).get("data-phase"):
            self.rows.append({k: v or "" for k, v in attrs})


@pytest.mark.hostile
def test_the_html_escapes_every_name_and_links_only_to_http_dashboards() -> None:
    hostile = '<img src=x onerror="alert(1)">'
    state = _state((hostile, "</style><script>alert(2)</script>"), ("b", "{{ 7*7 }}"))
    state = apply_update(state, {"pair": 0, "phase": "failed", "message": hostile}, 1.0)
    html = render_sweep_html(SweepState(state.pairs, state.executor, 2, "javascript:alert(3)", 0.0, 1.0))
    parser = _Rows()
    parser.feed(html)
    assert "img" not in parser.tags and "script" not in parser.tags
    assert [r["data-phase"] for r in parser.rows] == ["failed", "queued"]
    assert "javascript:" not in html and "{{ 7*7 }}" in html
    linked = render_sweep_html(SweepState(state.pairs, "Dask", 2, "http://127.0.0.1:8787/status", 0.0, 1.0))
    assert 'href="http://127.0.0.1:8787/status"' in linked


def test_the_widget_redraws_throttled_and_always_shows_the_final_state() -> None:
    now = [0.0]
    widget = SweepWidget(min_interval=0.1, clock=lambda: now[0])
    state = _state(("a", "x"))
    widget(apply_update(state, {"pair": 0, "seq": 1, "phase": "running", "done": 1, "total": 4}, 0.0))
    first = widget.flushes
    for done in (2, 3):  # within the interval: no redraw now (a trailing one is scheduled)
        widget(apply_update(state, {"pair": 0, "seq": done, "phase": "running", "done": done, "total": 4}, 0.0))
    assert widget.flushes == first == 1
    final = apply_update(state, {"pair": 0, "phase": "done", "done": 4, "total": 4}, 0.05)
    widget(final)  # a finished sweep is drawn at once
    assert widget.flushes == 2 and 'data-phase="done"' in widget.html.value and "finished" in widget.html.value


def test_console_prints_phase_changes_and_a_summary() -> None:
    stream = io.StringIO()
    now = [0.0]
    console = SweepConsole(stream, every=5.0, clock=lambda: now[0])
    state = _state(("a", "x"), ("b", "x"))
    state = apply_update(state, {"pair": 0, "seq": 1, "phase": "building", "step": "Split"}, 0.0)
    console(state)
    console(state)  # no change, no line
    now[0] = 6.0
    state = apply_update(state, {"pair": 0, "seq": 2, "phase": "running", "done": 3, "total": 6}, 6.0)
    console(state)
    state = apply_update(state, {"pair": 0, "phase": "done", "done": 6, "total": 6}, 8.0)
    state = apply_update(state, {"pair": 1, "phase": "failed", "message": "no such index"}, 8.0)
    console(state)
    assert stream.getvalue().splitlines() == [
        "[1/2] a × x: building",
        "[1/2] a × x: running",
        "sweep: 0/2 finished (1 running, 1 queued) · 2 processes · elapsed 6s · ETA ?",  # no rate yet
        "[1/2] a × x: done in 8s (6/6 results, 0 errors)",
        "[2/2] b × x: failed in 0s: no such index",
        "sweep: 2/2 finished (1 failed) · 2 processes · elapsed 8s",
    ]


def test_without_widgets_the_output_reads_as_the_sweep_s_summary() -> None:
    """ipywidgets' text/plain is ``HTML(value='', ...)``: ours is the console's summary line, in text and HTML."""
    widget = SweepWidget(min_interval=0.1, clock=lambda: 0.0)
    data, _ = widget._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.html.model_id
    assert data["text/plain"].startswith("sweep: starting")
    state = _state(("a", "x"), ("b", "x"))
    widget(apply_update(state, {"pair": 0, "phase": "running", "done": 1, "total": 4}, 0.0))
    assert widget._repr_mimebundle_()[0]["text/plain"].startswith("sweep: 0/2 finished (1 running, 1 queued)")
    done = apply_update(
        apply_update(state, {"pair": 0, "phase": "done", "done": 4, "total": 4}, 0.1),
        {"pair": 1, "phase": "done", "done": 4, "total": 4},
        0.2,
    )
    widget(done)
    data, _ = widget._repr_mimebundle_()
    assert data["text/plain"].startswith("sweep: 2/2 finished") and data["text/plain"].endswith("the table is below")
    assert "HTML(value=" not in data["text/plain"] and "2/2 finished" in data["text/html"]
