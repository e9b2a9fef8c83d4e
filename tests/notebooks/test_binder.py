"""Binder: repo2docker files, and the quickstart in a fresh environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_binder_files_follow_repo2docker_conventions() -> None:
    requirements = (ROOT / "binder" / "requirements.txt").read_text()
    assert "heta-framework" in requirements and "jupyterlab" in requirements
    post_build = ROOT / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK) and "pip install" in post_build.read_text()
    assert (ROOT / "binder" / "runtime.txt").read_text().strip().startswith("python-3.1")
    readme = (ROOT / "README.md").read_text()
    assert "mybinder.org/v2/gh/" in readme and "urlpath=lab/tree/notebooks/01-quickstart.ipynb" in readme


@pytest.mark.slow
def test_quickstart_runs_in_a_fresh_binder_environment(tmp_path: Path) -> None:
    if sys.version_info < (3, 11):
        pytest.skip("heta-framework needs Python 3.11+")
    venv = tmp_path / "venv"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", "PIP_QUIET": "1"}
    env.pop("PYTHONPATH", None)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-r", str(ROOT / "binder" / "requirements.txt")], check=True, env=env
    )
    # repo2docker runs postBuild from the repository root, with the environment's python first on PATH
    source = tmp_path / "repo"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".venv*", ".git", "*.egg-info", "build", "demo-*", "test-artifacts", "__pycache__"
        ),
    )
    subprocess.run(["bash", str(source / "binder" / "postBuild")], check=True, cwd=source, env=env)
    installed = time.monotonic() - started
    runner = (
        "import sys, nbformat; from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=600, kernel_name='python3',"
        " resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
        "errors = [o for c in nb.cells if c.cell_type == 'code' for o in c.outputs if o.output_type == 'error']\n"
        "assert not errors, errors\n"
        "print('ok', len(nb.cells))\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    notebook = source / "notebooks" / "01-quickstart.ipynb"
    out = subprocess.run(
        [str(python), "-c", runner, str(notebook), str(work)],
        capture_output=True,
        text=True,
        env={**env, "JUPYTER_PLATFORM_DIRS": "1"},
        cwd=work,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().startswith("ok")
    print(
        f"binder venv installed in {installed:.0f} s; quickstart ran in {time.monotonic() - started - installed:.0f} s"
    )
