"""A new user's walk through the README and docstrings: each common mistake gets one clear line.

Every test here failed before its fix (see the walkthrough report): the messages a
user sees for the mistakes a new user makes, the CLI's rough edges, and the
documentation of every ``evaluate`` parameter.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, heta_recipe, requires_heta
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.cli import main
from heta_nb.errors import StoreError
from heta_nb.runner import RunError

NORMAL = str(FIXTURES / "report-normal.json")


# -- evaluate(): kb= and recipe= ------------------------------------------------------------


def test_neither_kb_nor_recipe_says_what_is_missing() -> None:
    with pytest.raises(RunError, match=r"^no knowledge base to evaluate: pass exactly one of kb= .* or recipe="):
        heta_nb.evaluate(toy_benchmark(), progress=False, store=None)


def test_both_kb_and_recipe_says_not_both() -> None:
    with pytest.raises(RunError, match=r"^got both kb= and recipe=: pass exactly one of kb= .* or recipe="):
        heta_nb.evaluate(toy_benchmark(), kb=exact_kb, recipe=object(), progress=False, store=None)


# -- evaluator names: a near miss is named ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("ndgc@5", "'ndcg@5'"),
        ("recal@10", "'recall@10'"),
        ("evidence_recal@3", "'evidence_recall@3'"),
        ("answer_f", "'answer_f1'"),
        ("answer_exact", "'answer_exact_match'"),
        ("f1", "'answer_f1'"),
        ("evidence_recall", "'evidence_recall@10'"),
        ("beir_ndgc@3", "'beir_ndcg@3'"),
    ],
)
def test_misspelled_evaluator_suggests_the_right_one(name: str, suggestion: str) -> None:
    with pytest.raises(ValueError, match=f"did you mean {suggestion}") as info:
        heta_nb.evaluators.get(name)
    assert "\n" not in str(info.value) and "known: answer_contains" in str(info.value)


def test_unrelated_evaluator_name_has_no_suggestion() -> None:
    with pytest.raises(ValueError) as info:
        heta_nb.evaluators.get("frobnicate")
    assert "did you mean" not in str(info.value)


def test_misspelled_evaluator_in_evaluate_is_refused_before_any_query() -> None:
    calls: list[str] = []

    def kb(query: str, *, mode: str, top_k: int) -> Any:
        calls.append(query)
        return exact_kb(query, mode=mode, top_k=top_k)

    with pytest.raises(ValueError, match="did you mean 'ndcg@5'"):
        heta_nb.evaluate(toy_benchmark(), kb=kb, evaluators=["ndgc@5"], progress=False, store=None)
    assert calls == []


# -- store= a file ------------------------------------------------------------------------------


def test_store_that_is_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("not a store")
    calls: list[str] = []

    def kb(query: str, *, mode: str, top_k: int) -> Any:
        calls.append(query)
        return exact_kb(query, mode=mode, top_k=top_k)

    with pytest.raises(
        StoreError, match=r"not a folder \(a report store is a folder"
    ) as info:  # NotADirectoryError too
        heta_nb.start(toy_benchmark(), kb=kb, query_modes=["good"], store=str(target), progress=False)
    assert str(target) in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, NotADirectoryError)
    with pytest.raises(StoreError, match="part of the path is a file"):
        heta_nb.start(toy_benchmark(), kb=kb, query_modes=["good"], store=target / "sub", progress=False)
    assert calls == [] and target.read_text() == "not a store"


def test_store_folder_that_does_not_exist_yet_is_fine(tmp_path: Path) -> None:
    report = heta_nb.evaluate(
        toy_benchmark(), kb=exact_kb, query_modes=["good"], store=tmp_path / "new" / "store", progress=False
    )
    assert report.report_key is not None and (tmp_path / "new" / "store" / report.report_key).exists()


# -- query modes: a misspelling is refused with the right name -------------------------------------


class _Registry:
    modes = frozenset({"full_text_search", "vector_search"})


class _HetaLikeKb:
    """Duck-types a Heta KnowledgeBase: ``query_engines.modes`` and ``query(...)``."""

    name = "heta-like"
    query_engines = _Registry()

    def __init__(self) -> None:
        self.calls = 0

    def query(self, query: str, *, mode: str, top_k: int, options: Any, trace: bool) -> Any:
        self.calls += 1
        return exact_kb(query, mode="good", top_k=top_k)


def test_misspelled_mode_of_a_heta_kb_is_refused() -> None:
    kb = _HetaLikeKb()
    with pytest.raises(
        RunError, match=r"'full_text_serach' is not a registered query mode; did you mean 'full_text_search'"
    ):
        heta_nb.evaluate(toy_benchmark(), kb=kb, query_modes=["full_text_serach"], progress=False, store=None)
    assert kb.calls == 0


def test_unrelated_unregistered_mode_still_runs_and_records_errors_as_heta_does() -> None:
    kb = _HetaLikeKb()
    report = heta_nb.evaluate(toy_benchmark(), kb=kb, query_modes=["no_such_mode"], progress=False, store=None)
    assert kb.calls > 0 and report.query_modes == ("no_such_mode",)


@requires_heta
def test_misspelled_mode_with_a_recipe_is_refused_before_the_kb_is_built(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="did you mean 'full_text_search'"):
        heta_nb.evaluate(
            heta_nb.load_benchmark(
                FIXTURES, manifest={"name": "m", "version": "1", "split": "test", "task_type": "qa"}
            ),
            recipe=heta_recipe(tmp_path),
            knowledge_base_name="kb",
            query_modes=["full_text_serach"],
            evaluators=["evidence_recall@3"],
            progress=False,
        )
    assert not (tmp_path / "objects").exists() or not any((tmp_path / "objects").rglob("*.json"))


@requires_heta
def test_misspelled_mode_with_the_demo_query_engines_names_extractive_answer(tmp_path: Path) -> None:
    from heta_nb import demo

    with pytest.raises(RunError, match="did you mean 'extractive_answer'"):
        heta_nb.start(
            demo.load_benchmark(),
            recipe=demo.recipes(tmp_path)["small-chunks"],
            query_engines=demo.demo_query_engines(),
            query_modes=["extractive_answr"],
            knowledge_base_name="kb",
            progress=False,
        )


# -- the docstrings document every parameter ------------------------------------------------------


@pytest.mark.parametrize("function", [heta_nb.evaluate, heta_nb.start, heta_nb.evaluate_async])
def test_every_run_parameter_is_documented(function: Any) -> None:
    doc = inspect.getdoc(function) or ""
    args = doc.split("Args:", 1)[1]
    for name in inspect.signature(function).parameters:
        if name == "record_events":
            assert "record_events=True" in doc
            continue
        # a line "name:" or "a, name, b:" (indentation differs: Python 3.13 dedents docstrings itself)
        assert re.search(rf"^\s*(\w+, )*{name}[:,]", args, re.MULTILINE), name
    assert "Raises:" in doc and "Example" in (inspect.getdoc(heta_nb.evaluate) or "")


def test_evaluators_get_example_is_right() -> None:
    doc = inspect.getdoc(heta_nb.evaluators.get) or ""
    assert ">>> evaluators.get(\"ndcg@10\")\n    DocumentMetric('ndcg@10')" in doc
    assert repr(heta_nb.evaluators.get("ndcg@10")) == "DocumentMetric('ndcg@10')"


# -- the CLI ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["html", "notebook"])
@pytest.mark.parametrize("force", [False, True])
def test_output_that_is_a_folder_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, force: bool
) -> None:
    assert main([command, NORMAL, "-o", str(tmp_path), *(["--force"] if force else [])]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"heta-nb: error: {tmp_path}: is a folder; give the file to write")
    assert ".tmp" not in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


class _ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_is_not_an_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())  # `heta-nb show ... | head -1`
    assert main(["show", NORMAL]) == 1
    monkeypatch.undo()
    assert "Broken pipe" not in capsys.readouterr().err


def test_demo_without_heta_says_so_before_printing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "heta_framework", None)  # import heta_framework now fails
    assert main(["demo", "-o", str(tmp_path / "out"), "--store", str(tmp_path / "store"), "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "heta-nb: error: heta-nb demo needs the optional package 'heta_framework'; "
        "install it with: pip install 'heta-nb[heta]'\n"
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "store").exists()


def test_demo_help_names_the_extra_and_defaults(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # argparse wraps help at hyphens otherwise
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "pip install 'heta-nb[heta]'" in text
    assert "(default: demo-output)" in text and "(default: demo-store)" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "(needs the [heta] extra)" in capsys.readouterr().out


def test_to_html_into_a_folder_names_the_folder_not_a_temporary_file(tmp_path: Path) -> None:
    report = heta_nb.load_report(sorted(FIXTURES.glob("report-*.json"))[0])
    with pytest.raises(IsADirectoryError, match="is a folder") as info:
        heta_nb.to_html(report, tmp_path)
    assert str(tmp_path) in str(info.value) and ".tmp" not in str(info.value)
    assert list(tmp_path.iterdir()) == []
    nested = tmp_path / "new" / "folder" / "report.html"
    heta_nb.to_html(report, nested)
    assert nested.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
