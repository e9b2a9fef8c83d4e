"""Lone surrogates x every untrusted field x every writer: each output is text UTF-8 can encode.

A JSON string may hold ``"\\ud800"`` (a UTF-16 half with no partner); ``load_report`` accepts
it. Every way heta_nb writes a report, a comparison, a leaderboard or a check (HTML pages and
reprs, notebook sections and files, the gate's markdown, JUnit, text and JSON, the text
reprs) must cope: the surrogate reads as U+FFFD in what people see, or as a ``\\udXXX``
escape in JSON. The matrix (``FIELDS`` x ``WRITERS``) is shared with
``tests/audit/families_writers.py``.
"""

from __future__ import annotations

import copy
import functools
import json
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb

NORMAL = json.loads((FIXTURES / "report-normal.json").read_text(encoding="utf-8"))
ERRORS = json.loads((FIXTURES / "report-errors.json").read_text(encoding="utf-8"))
MODE = "full_text_search"
STRINGS = {"high": "\ud800", "low": "\udfff", "mixed": "ok \udfff\ud800 é 😀 \ud83d|"}
"""A lone high half, a lone low half, and both (reversed, so no pair) around valid text."""


def _first(data: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in data["case_results"] if c["query_mode"] == MODE and c["response"])


def _failed(data: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in data["case_results"] if c["error"])


def _rename_mode(data: dict[str, Any], text: str) -> None:
    data["query_modes"] = [m + text if m == MODE else m for m in data["query_modes"]]
    for case in data["case_results"]:
        if case["query_mode"] == MODE:
            case["query_mode"] += text
            if case["response"]:
                case["response"]["mode"] = case["query_mode"]


def _rename_metric(data: dict[str, Any], text: str) -> None:
    for case in data["case_results"]:
        for score in case["scores"]:
            if score["name"] == "beir_mrr@3":
                score["name"] += text


# field -> (the fixture it changes, how)
FIELDS: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any], str], None]]] = {
    "report_id": (NORMAL, lambda d, t: d.__setitem__("report_id", "r" + t)),
    "knowledge_base_name": (NORMAL, lambda d, t: d.__setitem__("knowledge_base_name", "kb" + t)),
    "benchmark.name": (NORMAL, lambda d, t: d["benchmark"].__setitem__("name", "bm" + t)),
    "benchmark.version": (NORMAL, lambda d, t: d["benchmark"].__setitem__("version", "v" + t)),
    "case_id": (NORMAL, lambda d, t: _first(d).__setitem__("case_id", "c" + t)),
    "query": (NORMAL, lambda d, t: _first(d).__setitem__("query", "q" + t)),
    "query_mode": (NORMAL, _rename_mode),
    "score.name": (NORMAL, _rename_metric),
    "score.metadata": (NORMAL, lambda d, t: _first(d)["scores"][0]["metadata"].__setitem__("k" + t, "v" + t)),
    "answer": (NORMAL, lambda d, t: _first(d)["response"].__setitem__("answer", "a" + t)),
    "result.id": (NORMAL, lambda d, t: _first(d)["response"]["results"][0].__setitem__("id", "i" + t)),
    "result.text": (NORMAL, lambda d, t: _first(d)["response"]["results"][0].__setitem__("text", "t" + t)),
    "result.source": (
        NORMAL,
        lambda d, t: _first(d)["response"]["results"][0]["source"].__setitem__("object_key", "k" + t),
    ),
    "case.metadata": (NORMAL, lambda d, t: _first(d)["metadata"].__setitem__("m" + t, "v" + t)),
    "report.metadata": (NORMAL, lambda d, t: d["metadata"].__setitem__("m" + t, "v" + t)),
    "recipe.step": (NORMAL, lambda d, t: d["recipe_manifest"]["steps"][0].__setitem__("name", "s" + t)),
    "error.message": (ERRORS, lambda d, t: _failed(d)["error"].__setitem__("message", "e" + t)),
    "error.type": (ERRORS, lambda d, t: _failed(d)["error"].__setitem__("error_type", "T" + t)),
}


@functools.cache
def hostile_report(field: str, string: str) -> heta_nb.EvaluationReport:
    """The fixture with ``string`` in ``field`` (a JSON round trip: what a file would hold)."""
    base, change = FIELDS[field]
    data = copy.deepcopy(base)
    change(data, string)
    return heta_nb.load_report(json.dumps(data))


@functools.cache
def _clean(kind: str) -> heta_nb.EvaluationReport:
    return heta_nb.load_report(json.dumps(NORMAL if kind == "normal" else ERRORS))


def _partner(report: heta_nb.EvaluationReport) -> heta_nb.EvaluationReport:
    """The same fixture without the surrogate: the other side of a comparison or a check."""
    return _clean("errors" if report.knowledge_base_name.startswith("lighthouse-errors") else "normal")


def _texts(bundle: dict[str, Any]) -> str:
    return "".join(value for value in bundle.values() if isinstance(value, str))


def _notebook(obj: Any) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "n.ipynb"
        heta_nb.to_notebook(obj, path)
        return path.read_bytes().decode("utf-8")  # (strict: the file is UTF-8)


def _board(report: heta_nb.EvaluationReport) -> Any:
    from heta_nb.sweeps import Leaderboard

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Leaderboard.from_reports([_partner(report), report], resamples=40)


def _compare(report: heta_nb.EvaluationReport) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.compare(_partner(report), report, resamples=40)


def _check(report: heta_nb.EvaluationReport) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.check(report, _partner(report))


def _sections(sections: list[Any]) -> str:
    import nbformat

    return nbformat.writes(nbformat.v4.new_notebook(cells=sections))


WRITERS: dict[str, Callable[[heta_nb.EvaluationReport], str]] = {
    "to_html": lambda r: heta_nb.to_html(r),
    "report_repr": lambda r: _texts(r._repr_mimebundle_()),
    "case_reprs": lambda r: "".join(_texts(c._repr_mimebundle_()) for c in r.case_results),
    "report_text": lambda r: repr(r) + str(r),
    "sections": lambda r: _sections(heta_nb.sections(r)),
    "to_notebook": _notebook,
    "comparison_html": lambda r: heta_nb.to_html(_compare(r)),
    "comparison_repr": lambda r: _texts(_compare(r)._repr_mimebundle_()),
    "comparison_text": lambda r: repr(_compare(r)),
    "comparison_notebook": lambda r: _notebook(_compare(r)),
    "leaderboard_html": lambda r: _board(r).to_html(),
    "leaderboard_repr": lambda r: _texts(_board(r)._repr_mimebundle_()),
    "leaderboard_text": lambda r: repr(_board(r)),
    "leaderboard_sections": lambda r: _sections(_board(r).sections(source=["a.json", "b.json"])),
    "gate_markdown": lambda r: _check(r).to_markdown(),
    "gate_junit": lambda r: _check(r).to_junit(),
    "gate_text": lambda r: _check(r).to_text() + repr(_check(r)),
    "gate_json": lambda r: _check(r).to_json(),
    "gate_repr": lambda r: _texts(_check(r)._repr_mimebundle_()),
}

ELSEWHERE: dict[tuple[str, str], str] = {}
"""(field, writer) pairs that still crash in modules this change does not own, and where."""


def write(field: str, writer: str, string: str) -> str:
    """What ``writer`` makes of the report with ``string`` in ``field``; raises when it crashes
    or when its text is not UTF-8 (``UnicodeEncodeError``)."""
    text = WRITERS[writer](hostile_report(field, string))
    text.encode("utf-8")
    return text


def _param(field: str, writer: str) -> Any:
    where = ELSEWHERE.get((field, writer))
    marks = [pytest.mark.xfail(reason=f"owned elsewhere: {where}", strict=True)] if where else []
    return pytest.param(field, writer, marks=marks, id=f"{field}-{writer}")


@pytest.mark.hostile
@pytest.mark.parametrize(("field", "writer"), [_param(f, w) for f in FIELDS for w in WRITERS])
def test_every_writer_copes_with_a_lone_surrogate_in_every_field(field: str, writer: str) -> None:
    text = write(field, writer, STRINGS["mixed"])
    if writer in ("to_html", "report_repr") and field in (
        "report_id",
        "knowledge_base_name",
        "query_mode",
    ):
        assert "\ufffd" in text  # shown, as the replacement character


@pytest.mark.hostile
@pytest.mark.parametrize("string", ["high", "low"])
@pytest.mark.parametrize("writer", ["to_html", "sections", "comparison_html", "leaderboard_html", "gate_markdown"])
def test_a_lone_high_or_low_half_alone_in_a_case_id_metric_and_mode(writer: str, string: str) -> None:
    for field in ("case_id", "report_id", "benchmark.name"):
        write(field, writer, STRINGS[string])
    if writer != "sections":  # (a mode and a metric reach the tables' frames there)
        write("score.name", writer, STRINGS[string])
        write("query_mode", writer, STRINGS[string])


@pytest.mark.hostile
def test_figures_draw_a_surrogate_as_a_replacement_character() -> None:
    """matplotlib's font code refuses a lone surrogate; the figure is drawn, not left out."""
    page = write("report_id", "comparison_html", STRINGS["mixed"])
    assert "not drawn" not in page
    page = write("score.name", "to_html", STRINGS["mixed"])
    assert "not drawn" not in page
