"""A user's mistake found before a run shows as one line in a notebook, not a traceback."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from heta_nb.errors import HetaNbUserError


@pytest.fixture
def shell() -> Any:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "heta_nb")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "heta_nb")


def _shown(ip: Any, cell: str, capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    capsys.readouterr()
    result = ip.run_cell(cell)
    captured = capsys.readouterr()
    return result, captured.out + captured.err


def test_a_typo_in_an_evaluator_name_is_one_line_with_the_hint(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    result, shown = _shown(shell, "import heta_nb.evaluators\nheta_nb.evaluators.get('recal@5')", capsys)
    assert isinstance(result.error_in_exec, HetaNbUserError)
    lines = shown.strip().splitlines()
    assert len(lines) == 1, shown
    assert lines[0].startswith("HetaNbUserError: unknown evaluator 'recal@5'; did you mean 'recall@5'?")
    assert "Traceback" not in shown
    assert sys.last_value is result.error_in_exec  # %tb and %debug still find it


def test_evaluate_with_a_typo_in_an_evaluator_is_one_line(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    cell = (
        "import heta_nb\n"
        "from runner_support import exact_kb, toy_benchmark\n"
        "heta_nb.evaluate(toy_benchmark(), kb=exact_kb, query_modes=['good'], knowledge_base_name='toy kb',\n"
        "                 store=None, progress=False, evaluators=['recal@5'])"
    )
    result, shown = _shown(shell, cell, capsys)
    assert isinstance(result.error_in_exec, ValueError)  # still a ValueError for code that catches those
    lines = shown.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in shown, shown
    assert "unknown evaluator 'recal@5'; did you mean 'recall@5'?" in lines[0]


def test_other_errors_keep_a_traceback_and_unload_restores(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    _, shown = _shown(shell, "1 / 0", capsys)
    assert "ZeroDivisionError" in shown and "Traceback" in shown
    shell.run_line_magic("unload_ext", "heta_nb")
    try:
        assert HetaNbUserError not in shell.custom_exceptions
        _, shown = _shown(shell, "import heta_nb.evaluators\nheta_nb.evaluators.get('recal@5')", capsys)
        assert "Traceback" in shown
    finally:
        shell.run_line_magic("load_ext", "heta_nb")


def test_a_run_setting_error_is_one_line_too(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The runner's own checks before any query (RunError: a mode the KB lacks) read the same way."""
    cell = (
        "import heta_nb\n"
        "from runner_support import exact_kb, toy_benchmark\n"
        "heta_nb.evaluate(toy_benchmark(), kb=exact_kb, query_modes=['good'], knowledge_base_name='toy kb',\n"
        "                 store=None, progress=False, concurrency=0)"
    )
    result, shown = _shown(shell, cell, capsys)
    assert isinstance(result.error_in_exec, HetaNbUserError) and isinstance(result.error_in_exec, ValueError)
    lines = shown.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in shown and "concurrency" in lines[0], shown
