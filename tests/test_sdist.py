"""The sdist holds the package and its data, and no part of the test suite (MANIFEST.in)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _version(name: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in metadata.version(name).split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return None


@pytest.fixture(scope="module")
def sdist_names(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    if _version("build") is None or (_version("setuptools") or (0,)) < (77, 0):
        pytest.skip("needs build and setuptools>=77 (the [test] extra) to build the sdist offline")
    out = tmp_path_factory.mktemp("sdist")
    # cwd: out, so a build/ folder in the clone does not shadow the `build` package
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--sdist",
            "--no-isolation",
            "--skip-dependency-check",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (archive,) = out.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        return [name.split("/", 1)[1] for name in tar.getnames() if "/" in name]


def test_the_sdist_ships_no_test_files(sdist_names: list[str]) -> None:
    shipped = [name for name in sdist_names if name == "tests" or name.startswith("tests/")]
    assert not shipped, f"the sdist holds part of the test suite: {shipped}"


def test_the_sdist_holds_the_package_and_its_data(sdist_names: list[str]) -> None:
    names = set(sdist_names)
    assert {"pyproject.toml", "README.md", "LICENSE", "heta_nb/__init__.py", "heta_nb/py.typed"} <= names
    package = {path.relative_to(ROOT).as_posix() for path in (ROOT / "heta_nb").rglob("*.py")}
    assert package <= names, sorted(package - names)[:10]
    for folder in ("heta_nb/render/templates/", "heta_nb/explorer/assets/", "heta_nb/demo/data/"):
        on_disk = {
            path.relative_to(ROOT).as_posix()
            for path in (ROOT / folder).iterdir()
            if path.is_file() and not path.name.startswith(".")
        }
        assert on_disk and on_disk <= names, (folder, sorted(on_disk - names)[:10])
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
