"""Naming a report as STORE:KB/ID."""

from __future__ import annotations

from pathlib import Path

from helpers import FIXTURES

from heta_nb.store.locate import split_store_reference

NORMAL = str(FIXTURES / "report-normal.json")


def test_store_reference_parsing(tmp_path: Path) -> None:
    assert split_store_reference("demo-store:saltmarsh isles/small-chunks") == (
        "demo-store",
        "saltmarsh isles",
        "small-chunks",
    )
    assert split_store_reference("memory://bucket:kb/r1") == ("memory://bucket", "kb", "r1")
    assert split_store_reference("s3://bucket/path/report.json") is None
    # a port is not a store reference's colon (it used to read as store https://host, KB 8443)
    assert split_store_reference("https://host:8443/path/report.json") is None
    assert split_store_reference("HTTP://host:80/store:kb/r1") == ("HTTP://host:80/store", "kb", "r1")
    assert split_store_reference("store:kb") == ("store", "kb", None)
    assert split_store_reference(NORMAL) is None
