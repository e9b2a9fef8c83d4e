"""Text columns keep any text a report holds, with pandas' Arrow-backed strings too (pyarrow installed)."""

from __future__ import annotations

import pandas as pd
import pytest

import heta_nb
from heta_nb._util.frames import frame, text_array
from heta_nb.testing import synthetic_report_dict

LONE = "q\ud800x"


def _hostile_report() -> heta_nb.EvaluationReport:
    data = synthetic_report_dict(3)
    data["case_results"][0]["query"] = LONE
    data["case_results"][0]["case_id"] = "id\udfff"
    return heta_nb.load_report(data)


def test_arrow_strings_are_what_pandas_uses_here() -> None:
    """The premise: without the fallback these frames would fail (pyarrow is installed in the test venv)."""
    pytest.importorskip("pyarrow")
    if pd.Series(["x"]).dtype == object:  # pragma: no cover - pandas 2 stores str as object
        pytest.skip("pandas stores strings as Python objects here")
    with pytest.raises(UnicodeEncodeError):
        pd.DataFrame({"text": ["a", LONE]})


def test_frames_keep_lone_surrogates_exactly() -> None:
    report = _hostile_report()
    cases = report.cases_frame()
    assert LONE in set(cases["query"]) and "id\udfff" in set(cases["case_id"])
    assert "id\udfff" in set(report.scores_frame()["case_id"])
    comparison = heta_nb.compare(report, _hostile_report(), names=["a", "b"])
    assert len(comparison.cases_frame()) > 0 and len(comparison.summary_frame()) > 0  # built (Arrow would refuse)


def test_the_fallback_is_lossless_and_only_taken_when_needed() -> None:
    plain = frame({"text": ["a", "b"]})
    assert plain["text"].dtype == pd.Series(["x"]).dtype  # the common case: pandas' own choice
    hostile = frame({"text": ["a", LONE]})
    assert list(hostile["text"]) == ["a", LONE]
    assert list(text_array(["a", LONE], pd.Series(["x"]).dtype)) == ["a", LONE]
