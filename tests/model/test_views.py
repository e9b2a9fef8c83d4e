"""The model's one way up (``heta_nb.model.views``): each convenience of a report reaches its
view by name, on first use, and still behaves as a direct call of that view."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

from heta_nb.model import load_report
from heta_nb.model import views as seam

ROOT = Path(__file__).resolve().parents[2]
NORMAL = FIXTURES / "report-normal.json"

CALLS: list[tuple[str, str, Any, tuple[Any, ...], dict[str, Any]]] = [
    ("cases_frame", "heta_nb.tables.cases_frame", lambda r: r.cases_frame(), (), {}),
    ("scores_frame", "heta_nb.tables.scores_frame", lambda r: r.scores_frame(), (), {}),
    ("summary_frame", "heta_nb.tables.summary_frame", lambda r: r.summary_frame(), (), {}),
    ("explore", "heta_nb.explorer.explore", lambda r: r.explore(mode="m"), (), {"benchmark": None, "mode": "m"}),
    ("to_arrow", "heta_nb.tables.arrow.to_arrow", lambda r: r.to_arrow("scores"), ("scores",), {}),
    (
        "to_parquet",
        "heta_nb.tables.arrow.to_parquet",
        lambda r: r.to_parquet("out", table="summary"),
        ("out",),
        {"table": "summary", "overwrite": False},
    ),
]


@pytest.mark.parametrize("name, target, call, args, kwargs", CALLS, ids=[c[0] for c in CALLS])
def test_each_convenience_calls_its_view_as_it_is_now(
    monkeypatch: pytest.MonkeyPatch, name: str, target: str, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    report = load_report(NORMAL)
    seen: list[tuple[Any, ...]] = []

    def fake(*a: Any, **k: Any) -> str:
        seen.append((a, k))
        return f"{name} result"

    assert seam.VIEWS[name] == target.rpartition(".")[0] + ":" + target.rpartition(".")[2]
    monkeypatch.setattr(target, fake)  # patched after the seam imported the module: still the one called
    assert call(report) == f"{name} result"
    assert seen == [((report, *args), kwargs)]


def test_the_conveniences_give_what_the_views_give() -> None:
    import pandas as pd

    from heta_nb import render, tables

    report = load_report(NORMAL)
    pd.testing.assert_frame_equal(report.cases_frame(), tables.cases_frame(report))
    pd.testing.assert_frame_equal(report.summary_frame(), tables.summary_frame(report))
    bundle = render.repr_mimebundle(report)
    assert report._repr_mimebundle_() == bundle
    assert report._repr_html_() == bundle["text/html"]
    case = report.case_results[0]
    assert case._repr_mimebundle_() == render.repr_mimebundle(case)


def test_an_unknown_view_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="cases_frame"):
        seam.view("no_such_view")


def test_a_missing_view_is_an_import_error_and_a_repr_still_has_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        seam,
        "VIEWS",
        {
            **seam.VIEWS,
            "cases_frame": "heta_nb.no_such_module:cases_frame",
            "repr_mimebundle": "heta_nb.render:nothing",
        },
    )
    report = load_report(NORMAL)
    with pytest.raises(ModuleNotFoundError):
        report.cases_frame()
    with pytest.raises(ImportError, match="nothing"):
        seam.view("repr_mimebundle")
    assert set(report._repr_mimebundle_()) == {"text/plain"}
    assert report._repr_html_() is None
    assert set(report.case_results[0]._repr_mimebundle_()) == {"text/plain"}


def test_a_report_imports_its_views_only_when_a_convenience_is_called() -> None:
    code = (
        "import sys, heta_nb.model\n"
        "def above():\n"
        "    low = ('_util', 'errors', '_version', 'stats', 'model')\n"
        "    return sorted(m for m in sys.modules if m.startswith('heta_nb.') and m.split('.')[1] not in low)\n"
        f"r = heta_nb.model.load_report({str(NORMAL)!r})\n"
        "r.metric_summaries(); r.mode_counts(); r.case_results[0]; repr(r)\n"
        "assert above() == [], above()\n"
        "r._repr_html_(); assert 'heta_nb.render' in sys.modules and 'heta_nb.tables' not in sys.modules, above()\n"
        "r.cases_frame(); assert 'heta_nb.tables' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_report_view_is_kept_until_the_renderer_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    import heta_nb.render

    report = load_report(NORMAL)
    first = report._repr_mimebundle_()
    assert report._repr_mimebundle_() is not first and report._repr_mimebundle_() == first  # a kept copy
    monkeypatch.setattr(heta_nb.render, "build_report_context", _boom)
    assert "heta-render-error" in report._repr_mimebundle_()["text/html"]


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("boom")
