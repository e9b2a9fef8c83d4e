"""Review mode in the kernel, driven as the browser drives it (custom messages): each verdict is
appended to the report's review log at once and the progress comes back; the next unreviewed
case of the sample opens; the last verdict stands; a bad message becomes an error in the widget,
never an exception; the name is checked before any file is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import heta_nb
from heta_nb.explorer import Explorer, explore
from heta_nb.reviews import review_log, review_sample
from heta_nb.testing import synthetic_report


@pytest.fixture
def small():
    """40 cases × 3 modes: a sample of 60 proposed (some errored results are left out of it)."""
    return synthetic_report(40, seed=3, report_id="review-kernel")


def _send(widget: Any, **content: Any) -> None:
    widget._handle_custom_msg(content, [])


def _open(widget: Any) -> tuple[str, str]:
    return widget.case["id"], widget.case["mode"]


def _lines(folder: Path, reviewer: str) -> list[dict[str, Any]]:
    path = folder / f"{reviewer}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_a_verdict_is_stored_at_once_and_the_next_unreviewed_case_opens(small, tmp_path: Path) -> None:
    explorer = small.review("ana", path=tmp_path)
    widget = explorer.widget
    sample = review_sample(small, 60)
    review = widget.review
    assert review["on"] and review["reviewer"] == "ana" and not review["blind"]
    assert review["progress_text"] == f"0 of {len(sample)} reviewed" and review["total"] == len(sample)
    assert review["sample"] == [explorer.review.rows()[item] for item in sample]
    assert _open(widget) == sample[0]  # the sample's first case is open
    assert review["mine"] is None and review["reviews"] == [] and review["download"] is False
    assert review["where"] == f"saved to {tmp_path / 'ana.jsonl'}"
    first = _open(widget)
    _send(widget, action="review_verdict", case_id=first[0], mode=first[1], verdict="partly", note="  misses the date ")
    stored = _lines(tmp_path, "ana")  # on disk before anything else happens
    assert [(r["case_id"], r["query_mode"], r["verdict"], r["note"], r["blind"]) for r in stored] == [
        (*first, "partly", "misses the date", False)
    ]
    assert widget.review["progress_text"] == f"1 of {len(sample)} reviewed" and widget.review["error"] == ""
    assert _open(widget) == sample[1] and widget.review["mine"] is None
    assert widget.review["reviewed"] == [explorer.review.rows()[first]]
    for verdict in ("correct", "wrong", "skip"):
        case_id, mode = _open(widget)
        _send(widget, action="review_verdict", case_id=case_id, mode=mode, verdict=verdict, note="")
    assert widget.review["done"] == 4 and _open(widget) == sample[4]
    # back to the first case: its verdict is pre-selected; a change stands, the history is kept
    _send(widget, action="open", row=explorer.review.rows()[first])
    assert widget.review["mine"] == {"verdict": "partly", "note": "misses the date"}
    assert widget.review["reviews"] == [["ana", "partly", "misses the date"]]
    _send(widget, action="review_verdict", case_id=first[0], mode=first[1], verdict="correct", advance=False)
    assert _open(widget) == first and widget.review["mine"] == {"verdict": "correct", "note": ""}
    assert widget.review["done"] == 4
    frame = small.reviews(path=tmp_path)
    assert len(frame) == 4 and frame.set_index("case_id").loc[first[0], "verdict"] == "correct"
    assert len(small.reviews(path=tmp_path, history=True)) == 5


def test_any_case_can_be_reviewed_and_the_last_sample_case_ends_the_round(small, tmp_path: Path) -> None:
    explorer = small.review("bo", path=tmp_path, sample=4, seed=2)
    widget = explorer.widget
    sample = review_sample(small, 4, seed=2)
    outside = next((r.case_id, r.query_mode) for r in small.case_results if (r.case_id, r.query_mode) not in sample)
    _send(widget, action="review_verdict", case_id=outside[0], mode=outside[1], verdict="wrong")
    assert widget.review["done"] == 0 and _open(widget) == sample[0]  # not in the sample: not counted
    assert explorer.review.rows()[outside] in widget.review["reviewed"]
    explorer.filter(search="no such words at all")  # a filter that hides the next case is cleared
    assert explorer.matched == 0
    _send(widget, action="review_next")  # (the one after the open case; the round wraps)
    assert _open(widget) == sample[1] and explorer.matched == explorer.total
    for _ in sample:
        case_id, mode = _open(widget)
        explorer.review.verdict(case_id, mode, "correct")  # the Python side does what the keys do
    assert (
        widget.review["complete"] is True
        and widget.review["progress_text"] == f"{len(sample)} of {len(sample)} reviewed"
    )
    assert explorer.review.next() is False
    assert repr(explorer.review) == f"<ReviewMode 'bo': {len(sample)} of {len(sample)} reviewed>"


@pytest.mark.parametrize(
    "content, error",
    [
        ({"case_id": "nope", "verdict": "correct"}, "review: report 'review-kernel' has no case 'nope' in mode"),
        (
            {"verdict": "great"},
            "verdict: 'great' is not a verdict (correct, partly, wrong, skip, or a number in [0, 1])",
        ),
        ({"verdict": None}, "verdict: None is not a verdict"),
        ({"verdict": True}, "verdict: True is not a verdict"),
        ({"verdict": 1.5}, "verdict: 1.5 is not a verdict"),
        ({"verdict": "wrong", "note": 12}, "note: expected text"),
        ({"verdict": "wrong", "note": "x" * 4001}, "note: at most 4,000 characters (this one has 4,001)"),
        ({"case_id": ["a"], "verdict": "correct"}, "review: report 'review-kernel' has no case ['a']"),
    ],
)
def test_a_bad_message_is_an_error_in_the_widget_and_nothing_is_stored(
    small, tmp_path: Path, content: dict[str, Any], error: str
) -> None:
    explorer = small.review("ana", path=tmp_path)
    widget = explorer.widget
    case_id, mode = _open(widget)
    _send(widget, action="review_verdict", **{"case_id": case_id, "mode": mode, **content})
    assert widget.review["error"].startswith(error), widget.review["error"]
    assert _lines(tmp_path, "ana") == [] and _open(widget) == (case_id, mode)
    _send(widget, action="review_verdict", case_id=case_id, mode=mode, verdict=0.25)  # the widget goes on
    assert widget.review["error"] == "" and _lines(tmp_path, "ana")[0]["verdict"] == 0.25


def test_odd_messages_never_raise(small, tmp_path: Path) -> None:
    explorer = small.review("ana", path=tmp_path)
    widget = explorer.widget
    for content in (
        {"action": "review_bogus"},
        {"action": "review_verdict"},
        {"action": "review_start", "reviewer": 7},
    ):
        _send(widget, **content)
        assert widget.review["error"], content
    _send(widget, action="review_stop")
    assert widget.review["on"] is False and widget.review["available"] is True
    _send(widget, action="review_verdict", case_id="q00000", mode="full_text_search", verdict="correct")
    assert widget.review["error"].startswith("review: start review mode first")
    assert _lines(tmp_path, "ana") == []


@pytest.mark.parametrize("name", ["../escape", "a/b", "", "   ", ".", "bad\x00name", "x" * 200])
def test_the_reviewer_name_is_checked_before_any_file_is_written(small, tmp_path: Path, name: str) -> None:
    folder = tmp_path / "reviews"
    review_log(small, path=folder)  # (placed: the Review button finds it)
    explorer = explore(small)
    widget = explorer.widget
    assert widget.review == {"available": True, "on": False, "error": "", "reviews": []}
    _send(widget, action="review_start", reviewer=name, blind=False)
    assert widget.review["on"] is False and widget.review["error"]
    assert not folder.exists() or list(folder.iterdir()) == []
    with pytest.raises(ValueError):
        explorer.review.start(name)


def test_the_review_button_starts_where_the_reviews_were_placed(small, tmp_path: Path) -> None:
    explorer = explore(synthetic_report(20, seed=9, report_id="never-placed"))
    widget = explorer.widget
    _send(widget, action="review_start", reviewer="cy", blind=False)
    assert widget.review["on"] is False and "pass store=" in widget.review["error"]
    review_log(small, path=tmp_path)
    explorer = explore(small)
    widget = explorer.widget
    _send(widget, action="review_start", reviewer="cy", blind=False)
    assert widget.review["on"] is True and widget.review["error"] == "" and widget.case is not None
    case_id, mode = _open(widget)
    _send(widget, action="review_verdict", case_id=case_id, mode=mode, verdict="correct")
    assert _lines(tmp_path, "cy")[0]["case_id"] == case_id


def test_a_stored_report_reviews_go_under_its_folder(tmp_path: Path) -> None:
    store = heta_nb.ReportStore(tmp_path / "store")
    report = store.load_key(store.save(synthetic_report(20, seed=4, report_id="stored-one")))
    explorer = explore(store)
    widget = explorer.widget
    assert widget.review["available"] is False  # no report chosen yet
    explorer.choose(next(key for key, _ in explorer.source.choices()))
    _send(widget, action="review_start", reviewer="dee", blind=False)
    assert widget.review["on"] is True, widget.review
    case_id, mode = _open(widget)
    _send(widget, action="review_verdict", case_id=case_id, mode=mode, verdict="wrong")
    assert list(report.reviews(store=tmp_path / "store")["verdict"]) == ["wrong"]


def test_other_reviewers_verdicts_show_in_the_panel(small, tmp_path: Path) -> None:
    log = review_log(small, path=tmp_path)
    first = review_sample(small, 60)[0]
    log.add(*first, "zoe", "wrong", note="<b>no</b>")
    log.add(*first, "ana", "partly")
    explorer = small.review("ana", path=tmp_path)
    widget = explorer.widget
    assert _open(widget) == review_sample(small, 60)[1]  # the first is reviewed already
    _send(widget, action="open", row=explorer.review.rows()[first])
    assert widget.review["mine"] == {"verdict": "partly", "note": ""}
    assert widget.review["reviews"] == [["ana", "partly", ""], ["zoe", "wrong", "<b>no</b>"]]
    assert widget.review["done"] == 1


def test_placed_reviews_show_in_a_plain_explorer(small, tmp_path: Path) -> None:
    """Outside review mode the panel still says what reviewers said (read once, where they were placed)."""
    first = (small.case_results[0].case_id, small.case_results[0].query_mode)
    log = review_log(small, path=tmp_path)
    log.add(*first, "zoe", 0.8, note="close enough")
    log.add(*first, "ana", "wrong")
    explorer = explore(small)
    widget = explorer.widget
    assert widget.review == {"available": True, "on": False, "error": "", "reviews": []}  # no case open
    explorer.open(case_id=first[0], mode=first[1])
    assert widget.review["reviews"] == [["ana", "wrong", ""], ["zoe", "0.8", "close enough"]]
    assert widget.review["on"] is False and "s" in widget.case["data"]


def test_a_comparison_has_no_review_mode(comparison) -> None:
    explorer = Explorer(comparison)
    widget = explorer.widget
    assert widget.review == {"available": False, "on": False, "error": "", "reviews": []}
    _send(widget, action="review_start", reviewer="ana")
    assert widget.review["error"].startswith("review: only a report's case results can be reviewed")


def test_report_review_goes_through_the_seam(small, tmp_path: Path) -> None:
    explorer = small.review("ana", path=tmp_path, sample=5, blind=True)
    assert isinstance(explorer, Explorer) and explorer.review.on and explorer.review.blind
    assert explorer.review.sample == review_sample(small, 5)
    assert explorer.review.progress_text == f"0 of {len(explorer.review.sample)} reviewed"
    explorer.review.stop()
    assert repr(explorer.review) == "<ReviewMode off>" and explorer.widget.review["on"] is False
