"""``%heta_explore``: a report or comparison variable, a path, a store (``--store``), a benchmark."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.explorer import Explorer
from heta_nb.testing import synthetic_report


@pytest.fixture
def shell() -> Any:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "heta_nb")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "heta_nb")


def test_explore_a_variable_a_path_and_a_store(shell: Any, tmp_path: Path) -> None:
    report = synthetic_report(12, seed=1, report_id="r1", knowledge_base_name="kb")
    shell.user_ns["report"] = report
    explorer = shell.run_line_magic("heta_explore", "report")
    assert isinstance(explorer, Explorer) and explorer.total == report.case_count
    store = heta_nb.ReportStore(tmp_path / "store")
    store.save(report)
    by_name = shell.run_line_magic("heta_explore", f"{store.location}:kb/r1")
    assert by_name.table.report.report_id == "r1"
    picker = shell.run_line_magic("heta_explore", f"--store '{store.location}'")
    assert picker.table is None and len(picker.options()["reports"]) == 1


def test_explore_a_comparison_with_a_benchmark_variable(shell: Any) -> None:
    a, b = synthetic_report(20, seed=1, report_id="a"), synthetic_report(20, seed=2, report_id="b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shell.user_ns["comparison"] = heta_nb.compare(a, b, modes="full_text_search")
    cases = [BenchmarkCase(case_id=f"q{i:05d}", query="q", labels={"hops": i % 2}) for i in range(20)]
    shell.user_ns["bench"] = Benchmark({"name": "s", "version": "1", "split": "t", "task_type": "qa"}, (), cases)
    explorer = shell.run_line_magic("heta_explore", "comparison --benchmark bench")
    assert explorer.table.kind == "comparison"
    labels = explorer.options()["labels"]  # the benchmark's, then where each changed case was lost or won
    assert labels[:2] == ["hops = 0", "hops = 1"] and all(x.startswith("stage = ") for x in labels[2:]) and labels[2:]


def test_bad_sources_are_one_line_usage_errors(shell: Any, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="report.json"):
        shell.run_line_magic("heta_explore", str(tmp_path / "missing" / "report.json"))
    shell.user_ns["number"] = 42
    with pytest.raises(UsageError, match="cannot explore a int"):
        shell.run_line_magic("heta_explore", "number")
    with pytest.raises(UsageError, match="No closing quotation"):
        shell.run_line_magic("heta_explore", "'unclosed")


def test_help_and_unload(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("heta_explore", "--help")
    assert "Explore a report's, comparison's or store's cases" in capsys.readouterr().out
    shell.run_line_magic("unload_ext", "heta_nb")
    assert "heta_explore" not in shell.magics_manager.magics["line"]
    shell.run_line_magic("load_ext", "heta_nb")
