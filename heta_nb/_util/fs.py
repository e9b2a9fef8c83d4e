"""fsspec access for URLs, imported only when a URL is actually used."""

from __future__ import annotations

from typing import Any

from heta_nb._util.optional import require
from heta_nb.errors import ReportNotFoundError, StoreError

__all__ = ["filesystem", "read_url"]


def filesystem(url: str) -> tuple[Any, str]:
    """``(fs, path)`` for an fsspec URL, with a clear error for unknown protocols."""
    fsspec = require("fsspec", extra="fsspec", purpose=f"reading {url}")
    try:
        return fsspec.core.url_to_fs(url)  # type: ignore[no-any-return]
    except (ImportError, ValueError) as exc:
        raise StoreError(f"{url}: cannot open this URL ({exc})") from None


def read_url(url: str) -> bytes:
    """Read the bytes at ``url``; a directory URL reads its ``report.json``."""
    fs, path = filesystem(url)
    try:
        if fs.isdir(path):
            path = path.rstrip("/") + "/report.json"
        return fs.cat_file(path)  # type: ignore[no-any-return]
    except FileNotFoundError:
        raise ReportNotFoundError(f"{url}: no such file") from None
    except OSError as exc:
        raise StoreError(f"{url}: cannot read ({exc})") from None
