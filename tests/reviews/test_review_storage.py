"""Reviews beside the report: the report stays byte-identical; a review killed mid-write loses at most
the verdict in flight; several reviewers at once; the last verdict stands and the history is kept;
imports from a file or a DataFrame are checked row by row; the sample is stable and leans towards
disagreement."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import heta_nb
from heta_nb.reviews import ReviewLog, import_reviews, review_log, review_sample
from heta_nb.testing import synthetic_report


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Any, Path]:
    """A synthetic report saved in a local store, and the store's folder."""
    store = tmp_path / "store"
    report = synthetic_report(40, seed=3)
    key = heta_nb.ReportStore(store).save(report)
    return heta_nb.ReportStore(store).load_key(key), store


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reviews_live_beside_the_report_which_stays_byte_identical(stored: tuple[Any, Path]) -> None:
    report, store = stored
    report_file = store / report.raw["report_key"]
    before = digest(report_file)
    first = report.raw["case_results"][0]
    log = review_log(report, store=store)
    log.add(first["case_id"], first["query_mode"], "ana", "wrong", note="misses the date")
    log.add(first["case_id"], first["query_mode"], "ana", "partly")  # changed her mind: the last stands
    log.add(first["case_id"], first["query_mode"], "bo", 0.8)
    assert log.folder == report_file.parent / "reviews"
    assert digest(report_file) == before
    frame = report.reviews()  # (placed in this process: found without being told again)
    assert sorted(zip(frame["reviewer"], frame["verdict"], frame["value"])) == [
        ("ana", "partly", 0.5),
        ("bo", 0.8, 0.8),
    ]
    history = report.reviews(history=True)
    assert list(history[history["reviewer"] == "ana"]["verdict"]) == ["wrong", "partly"]
    assert history.loc[0, "note"] == "misses the date"
    with pytest.raises(ValueError, match="is not a verdict"):
        log.add(first["case_id"], first["query_mode"], "ana", "great")
    with pytest.raises(heta_nb.errors.UnsafeNameError):
        log.add(first["case_id"], first["query_mode"], "../../escape", "correct")


WRITER = textwrap.dedent(
    """
    import sys
    from heta_nb.reviews import ReviewLog
    log = ReviewLog(sys.argv[1], "r")
    i = 0
    while True:
        log.add(f"case-{i:06d}", "m", sys.argv[2], "correct", note="x" * 2000)
        i += 1
    """
)


def test_a_review_killed_mid_write_loses_at_most_the_verdict_in_flight(tmp_path: Path) -> None:
    folder = tmp_path / "reviews"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), "ana"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        not (folder / "ana.jsonl").exists() or (folder / "ana.jsonl").stat().st_size < 200_000
    ):
        time.sleep(0.02)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    log = ReviewLog(folder)
    kept = log.history()
    assert len(kept) > 50 and log.damaged <= 1
    assert [r.case_id for r in kept] == [f"case-{i:06d}" for i in range(len(kept))]  # nothing lost in between
    log.add("after", "m", "ana", "wrong")  # resuming: the next verdict is whole, whatever was cut
    again = ReviewLog(folder)
    assert again.history()[-1].case_id == "after" and again.damaged <= 1


def test_two_reviewers_at_once_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "reviews"
    script = WRITER.replace("while True:", "for _ in range(300):")
    writers = [subprocess.Popen([sys.executable, "-c", script, str(folder), name]) for name in ("ana", "bo")]
    for writer in writers:
        assert writer.wait(60) == 0
    log = ReviewLog(folder)
    kept = log.history()
    assert log.damaged == 0 and len(kept) == 600
    assert {r.reviewer for r in kept} == {"ana", "bo"}


def test_import_checks_every_row_before_storing_any(stored: tuple[Any, Path], tmp_path: Path) -> None:
    report, store = stored
    results = report.raw["case_results"][:3]
    good = pd.DataFrame(
        [
            {"case_id": r["case_id"], "query_mode": r["query_mode"], "reviewer": "cy", "verdict": v}
            for r, v in zip(results, ["correct", "wrong", 0.25])
        ]
    )
    bad = pd.concat(
        [good, pd.DataFrame([{"case_id": "nope", "query_mode": "x", "reviewer": "cy", "verdict": "correct"}])]
    )
    with pytest.raises(ValueError, match=r"reviews DataFrame\[3\]: report .* has no case 'nope'"):
        import_reviews(bad, report=report, store=store)
    assert review_log(report, store=store).history() == []  # nothing stored
    stored_rows = import_reviews(good, report=report, store=store)
    assert list(stored_rows["value"]) == [1.0, 0.0, 0.25]
    page_file = tmp_path / "reviews-from-page.json"
    row = {"case_id": results[0]["case_id"], "query_mode": results[0]["query_mode"], "reviewer": "dee"}
    page_file.write_text(json.dumps({"reviews": [{**row, "verdict": "partly", "blind": True}]}), encoding="utf-8")
    import_reviews(page_file, report=report, store=store)
    frame = report.reviews(store=store)
    assert len(frame) == 4 and bool(frame[frame["reviewer"] == "dee"]["blind"].iloc[0]) is True
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"case_id": "a"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.jsonl:2: not a JSON line"):
        import_reviews(broken, report=report, store=store)
    with pytest.raises(OSError, match="is a directory"):
        import_reviews(tmp_path, report=report, store=store)


def test_the_sample_is_stable_stratified_and_leans_towards_disagreement() -> None:
    report = synthetic_report(300, seed=5)
    first = review_sample(report, 60, seed=1)
    assert first == review_sample(report, 60, seed=1) and len(first) == 60
    modes = pd.Series([m for _, m in first]).value_counts()
    assert set(modes.index) == set(report.modes)  # every mode is in it
    weights = {}
    for result in report.raw["case_results"]:
        values = [float(s["value"]) for s in result["scores"] if isinstance(s["value"], (int, float))]
        weights[(result["case_id"], result["query_mode"])] = (max(values) - min(values)) if len(values) > 1 else 0.0
    picked = [weights[item] for item in first if item in weights]
    assert sum(picked) / len(picked) > sum(weights.values()) / len(weights)


def test_the_reports_header_and_text_say_how_it_was_reviewed(stored: tuple[Any, Path]) -> None:
    report, store = stored
    first, second = report.raw["case_results"][:2]
    log = review_log(report, store=store)
    log.add(first["case_id"], first["query_mode"], "ana", "correct")
    log.add(first["case_id"], first["query_mode"], "ana", "wrong")
    log.add(second["case_id"], second["query_mode"], "<i>bo", "partly")
    html = report._repr_html_()
    assert 'data-testid="heta-reviews">reviews: 2 case results by &lt;i&gt;bo, ana (3 verdicts' in html
    assert "reviews: 2 case results by <i>bo, ana (3 verdicts" in report._repr_mimebundle_()["text/plain"]
