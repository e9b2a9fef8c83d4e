"""Every view and export works on extreme values (NaN, infinities, huge integers, TeX)."""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.comparison import HetaComparisonWarning

BASE = json.loads((FIXTURES / "report-normal.json").read_text(encoding="utf-8"))


ERROR_NOTE = "could not render this view"


MODE = "full_text_search"


METRIC = "evidence_recall@3"


def _report(change: Callable[[dict[str, Any]], None]) -> heta_nb.EvaluationReport:
    data = copy.deepcopy(BASE)
    change(data)
    return heta_nb.load_report(json.dumps(data))


def _cases(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data["case_results"] if c["query_mode"] == MODE]


def _score(case: dict[str, Any], name: str = METRIC) -> dict[str, Any]:
    return next(s for s in case["scores"] if s["name"] == name)


def _huge_span(data: dict[str, Any]) -> None:
    first, second = _cases(data)[:2]
    _score(first)["value"] = -1e308
    _score(second)["value"] = 1e308


def _tiny_span(data: dict[str, Any]) -> None:
    for case in _cases(data):
        _score(case)["value"] = 0.0
    _score(_cases(data)[0])["value"] = -5e-324


def _huge_integer(data: dict[str, Any]) -> None:
    _score(_cases(data)[0])["value"] = 10**400


def _huge_latencies(data: dict[str, Any]) -> None:
    for case in _cases(data)[:2]:
        case["latency_ms"] = 1e308


def _tex_names(data: dict[str, Any]) -> None:
    for case in data["case_results"]:
        if case["query_mode"] == MODE:
            case["query_mode"] = r"mode $\foo$"
        for score in case["scores"]:
            if score["name"] == METRIC:
                score["name"] = r"recall $\alpha_$"
    data["query_modes"] = [r"mode $\foo$" if m == MODE else m for m in data["query_modes"]]
    data["score_summary"] = {}


def _infinite_scores(data: dict[str, Any]) -> None:
    for case in _cases(data):
        _score(case)["value"] = float("inf")


def _lone_surrogates(data: dict[str, Any]) -> None:
    data["report_id"] = "fixture\ud800"
    data["knowledge_base_name"] = "kb\udc80"
    _cases(data)[0]["query"] = "where\udfff?"


CHANGES = {
    "scores from -1e308 to 1e308": _huge_span,
    "scores in a subnormal span": _tiny_span,
    "an integer score of 400 digits": _huge_integer,
    "latencies whose sum overflows": _huge_latencies,
    "metric and mode names holding TeX": _tex_names,
    "infinite scores": _infinite_scores,
    "lone surrogates in ids and texts": _lone_surrogates,
}


def _odd_names(data: dict[str, Any]) -> None:
    for case in data["case_results"]:
        for score in case["scores"]:
            if score["name"] == METRIC:
                score["name"] = "\u53ec\u56de\x07\x85"  # CJK (not in DejaVu Sans) and control characters
    data["score_summary"] = {}


@pytest.mark.hostile
@pytest.mark.parametrize("change", list(CHANGES.values()), ids=list(CHANGES))
def test_every_view_and_export_works(change: Callable[[dict[str, Any]], None], tmp_path: Path) -> None:
    report = _report(change)
    bundle = report._repr_mimebundle_()
    assert ERROR_NOTE not in bundle["text/html"]
    for text in bundle.values():
        text.encode("utf-8")  # what Jupyter sends
    case_html = report.case_results[0]._repr_html_()
    assert ERROR_NOTE not in case_html

    page = tmp_path / "report.html"
    heta_nb.to_html(report, page)
    html = page.read_text(encoding="utf-8")
    assert "heta-report" in html and ERROR_NOTE not in html

    notebook = tmp_path / "report.ipynb"
    heta_nb.to_notebook(report, notebook)
    nbformat.validate(nbformat.read(notebook, as_version=4))

    assert heta_nb.sections(report)
    frame = report.summary_frame()
    assert len(frame) > 0

    comparison = heta_nb.compare(report, report, names=["a", "b"])
    assert ERROR_NOTE not in comparison._repr_html_()
    heta_nb.to_html(comparison, tmp_path / "comparison.html")


@pytest.mark.hostile
def test_tex_in_names_is_shown_literally() -> None:
    from heta_nb.plots import plot_metric_summary, plot_scores
    from heta_nb.render.figures import figure_to_svg

    report = _report(_tex_names)
    ax = plot_scores(report, r"recall $\alpha_$")
    assert r"recall $\alpha_$" in ax.get_xlabel()
    svg = figure_to_svg(ax.figure)
    assert r"$\alpha_$" in svg  # the text itself, not a math layout (which would fail here)
    summary = plot_metric_summary(report)
    assert r"recall $\alpha_$" in [label.get_text() for label in summary.get_yticklabels()]
    figure_to_svg(summary.figure)


@pytest.mark.hostile
def test_names_matplotlib_has_no_glyph_for_give_no_warnings_in_a_page() -> None:
    """The page's SVG keeps text as text (the browser draws it): matplotlib's glyph warnings do not apply."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        html = heta_nb.to_html(_report(_odd_names))
    assert not [w for w in caught if "missing from" in str(w.message)], [str(w.message) for w in caught]
    assert "\u53ec\u56de" in html


@pytest.mark.hostile
def test_a_figure_matplotlib_cannot_draw_is_named_in_the_page_not_fatal() -> None:
    report = _report(_huge_span)
    # a report's figures are heta_nb's own SVG: a span wider than a float is drawn too
    html = heta_nb.to_html(report)
    assert "not drawn (" not in html and html.count('src="data:image/svg+xml;base64,') == 3
    # a comparison's figures are matplotlib's, which cannot place ticks on such a span: the page says so
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        comparison = heta_nb.compare(report, modes=[MODE, "extractive_answer"])
    assert "not drawn (" in heta_nb.to_html(comparison)
