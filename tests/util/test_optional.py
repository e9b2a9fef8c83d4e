"""The error of a missing optional package: which extra, and on which Pythons it installs anything."""

from __future__ import annotations

import sys

import pytest

from heta_nb._util import optional
from heta_nb._util.optional import require
from heta_nb.errors import MissingDependencyError

_MISSING = "heta_nb_no_such_module_xyz"


def test_an_importable_module_is_returned() -> None:
    assert require("json", extra="heta", purpose="x").__name__ == "json"


@pytest.mark.parametrize("version", [(3, 11, 7), (3, 12, 1)])
def test_on_a_heta_python_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch, version: tuple[int, ...]) -> None:
    monkeypatch.setattr(optional.sys, "version_info", version)
    with pytest.raises(MissingDependencyError) as info:
        require(_MISSING, extra="heta", purpose="building a KB")
    message = str(info.value)
    assert "pip install 'heta-nb[heta]'" in message
    assert "3.11 or 3.12" not in message


@pytest.mark.parametrize("version", [(3, 10, 13), (3, 13, 0)])
def test_on_another_python_the_error_says_heta_needs_3_11_or_3_12(
    monkeypatch: pytest.MonkeyPatch, version: tuple[int, ...]
) -> None:
    monkeypatch.setattr(optional.sys, "version_info", version)
    with pytest.raises(MissingDependencyError) as info:
        require(_MISSING, extra="heta", purpose="heta-nb demo")
    message = str(info.value)
    assert "Python 3.11 or 3.12" in message
    assert f"this is Python {version[0]}.{version[1]}" in message
    assert "installs nothing" in message


def test_other_extras_are_not_version_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(optional.sys, "version_info", (3, 13, 0))
    with pytest.raises(MissingDependencyError, match=r"pip install 'heta-nb\[parquet\]'$"):
        require(_MISSING, extra="parquet", purpose="report.to_parquet()")


def test_a_core_dependency_names_no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # fsspec is a core dependency: there is no [fsspec] extra to install
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(MissingDependencyError) as info:
        require("fsspec", extra="fsspec", purpose="reading s3://b/k")
    assert "heta-nb[" not in str(info.value)
    assert "pip install fsspec" in str(info.value)


def test_the_pythons_match_pyproject_markers() -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    marker = re.search(r"heta-framework[^\"]*; python_version >= '3\.(\d+)' and python_version < '3\.(\d+)'", text)
    assert marker is not None
    low, high = int(marker.group(1)), int(marker.group(2))
    assert optional._EXTRA_PYTHONS["heta"] == tuple((3, minor) for minor in range(low, high))
