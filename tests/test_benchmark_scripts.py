"""Every benchmark script still runs: at a tiny size, so API drift fails here, not in ``make bench``.

The benchmarks reach into heta_nb's internals to time one part alone (a permutation
test's tasks, the runner's floor); a change there once broke ``benchmarks/paired_stats.py``
unnoticed. These runs check that each script completes and prints its table, not its
figures (tiny sizes are all fixed cost).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SMALL = {
    "compare.py": ["--cases", "300", "--reports", "2", "--metrics", "2", "--resamples", "200", "--repeat", "1"],
    "export.py": ["--repeat", "1", "--results", "300", "600"],
    "import_time.py": ["--runs", "1"],
    "judges.py": ["--cases", "32", "--cached", "500", "--repeat", "1"],
    "model_io.py": ["--sizes", "300", "--repeat", "1"],
    "paired_stats.py": ["--cases", "300", "--resamples", "300", "--repeat", "1"],
    "render.py": ["--repeat", "1", "--results", "300", "900"],
    "store_listing.py": ["--reports", "5", "--cases", "3", "--repeat", "1"],
    "tables.py": ["--results", "300", "--repeat", "1"],
}
"""Arguments for a run of a second or two; the other scripts need [heta] and Dask (below)."""

WITH_HETA = {
    "runner.py": ["--cases", "200", "--large", "300", "--repeat", "1", "--small"],
}


IN_CHROMIUM = {"page_explorer.py": ["--cases", "200", "--repeat", "1"]}
"""Scripts that time the page in headless Chromium (run with the browser tests)."""


def _run(script: str, args: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def test_every_script_is_covered() -> None:
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_")}
    slow = {"dask_evaluate.py", "explorer.py", "sweep.py"}  # minutes each: real KBs or a cluster
    assert scripts == set(SMALL) | set(WITH_HETA) | set(IN_CHROMIUM) | slow


@pytest.mark.browser
@pytest.mark.parametrize("script", sorted(IN_CHROMIUM))
def test_browser_script_runs(script: str) -> None:
    out = _run(script, IN_CHROMIUM[script])
    assert "PASS" in out or "FAIL" in out, out


@pytest.mark.parametrize("script", sorted(SMALL))
def test_script_runs(script: str) -> None:
    out = _run(script, SMALL[script])
    if script not in ("import_time.py", "paired_stats.py"):
        assert "PASS" in out or "FAIL" in out, out  # its targets were checked


@pytest.mark.parametrize("script", sorted(WITH_HETA))
def test_script_with_heta_runs(script: str) -> None:
    pytest.importorskip("heta_framework")
    out = _run(script, WITH_HETA[script])
    assert "PASS" in out or "FAIL" in out, out
