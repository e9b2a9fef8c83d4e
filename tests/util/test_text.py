"""Shortening and describing text (heta_nb._util.text): the one place that cuts text."""

from __future__ import annotations

import pytest

from heta_nb._util.text import (
    as_text,
    clip,
    clip_label,
    clip_tail,
    compact_duration,
    describe_error,
    listing,
    one_line,
    plural,
    shorten,
)


def test_as_text() -> None:
    assert (as_text(None), as_text("x"), as_text(3), as_text(1.5)) == ("", "x", "3", "1.5")


@pytest.mark.parametrize(
    ("value", "limit", "expected"),
    [
        ("abcdef", 6, "abcdef"),
        ("abcdef", 5, "abcd…"),
        ("abcdef", 1, "…"),
        ("abcdef", 0, "…"),
        (None, 3, ""),
        (12345, 4, "123…"),
    ],
)
def test_shorten_keeps_the_limit_and_marks_the_cut(value: object, limit: int, expected: str) -> None:
    assert shorten(value, limit) == expected
    assert len(shorten(value, limit)) <= max(limit, 1)


def test_shorten_with_another_ellipsis() -> None:
    assert shorten("abcdefgh", 6, ellipsis="...") == "abc..."
    assert shorten("abcdefgh", 6, ellipsis="") == "abcdef"


def test_clip_counts_what_it_left_out_for_templates() -> None:
    assert clip("abc", 3) == {"text": "abc", "more": ""}
    assert clip("x" * 2000, 10) == {"text": "x" * 10, "more": "1,990"}
    assert clip_tail("0123456789", 4) == {"text": "6789", "more": "6"}
    assert clip_label("y" * 25, 5) == "yyyyy… (+20 chars)"
    assert clip_label("short", 5) == "short"


def test_one_line_and_plural_and_listing() -> None:
    assert one_line(" a\n\tb  c ") == "a b c"
    assert (plural(1, "case"), plural(1234, "case"), plural(2, "query", "queries")) == (
        "1 case",
        "1,234 cases",
        "2 queries",
    )
    assert plural(1234, "error", grouping=False) == "1234 errors"
    assert listing(range(6), 3) == "0, 1, 2 and 3 more"
    assert listing(["a", "b"], 3, quote=True) == "'a', 'b'"
    assert listing(range(2000), 2) == "0, 1 and 1,998 more"
    assert listing("abcd", 2, counted=False) == "a, b, ..."


def test_describe_error_never_raises() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert describe_error(ValueError("bad\nvalue"), with_type=True) == "ValueError: bad\nvalue"
    assert describe_error(ValueError("bad\nvalue  here"), 8) == "bad val…"
    assert describe_error(KeyError(), with_type=True) == "KeyError"
    assert describe_error(Broken()) == "<Broken; its message could not be read>"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "?"), (0, "0s"), (59.4, "59s"), (59.6, "1m00s"), (3599.5, "1h00m"), (7384, "2h03m"), (-3, "0s")],
)
def test_compact_duration(seconds: float | None, text: str) -> None:
    assert compact_duration(seconds) == text
