"""The judges' on-disk cache: the model's raw answers, keyed by everything that changes them.

A cache is a folder of append-only JSON-lines files. Each process that writes opens one
file of its own (``answers-<host>-<pid>-<random>.jsonl``) and appends one whole line per
answer with a single ``write`` call, flushed to disk, so two processes judging into one
folder never write the same file: no entry is torn by the other, and none is lost. A line
cut short by a killed process has no closing newline and is skipped when the cache is read
(:attr:`JudgeCache.damaged` counts them). On a miss the cache first reads what other
processes appended since, so a run in parallel does not ask twice.

A key (:func:`cache_key`) is the SHA-256 of the model's identity (name, server, sampling
settings), the whole prompt (instructions and material), the answer's schema and the
repeat index. The cache keeps malformed answers too (a replay reproduces their error
without asking), never failed calls (timeouts, 429, 500). Of two entries with one key
(``"refresh"`` asked again, or two processes asked at once) the newest is used. Lines are
written, not fsynced: a killed process loses nothing it wrote; an operating-system crash may
lose its last answers, asked again next time.

Modes: ``"use"`` (read, then ask and write on a miss), ``"replay"`` (a miss is an error:
CI replays a recorded run without a key), ``"refresh"`` (always ask, write the new answer).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
import time
from pathlib import Path
from typing import Any

import orjson

from heta_nb._util.fs import NotARegularFileError, open_regular

__all__ = ["CACHE_MODES", "CacheMissError", "JudgeCache", "cache_key", "default_cache_folder", "key_prefix"]

CACHE_MODES = ("use", "replay", "refresh")
_FORMAT = 1


class CacheMissError(LookupError):
    """A replayed judge call that the cache does not hold."""


def cache_key(identity: dict[str, Any], system: str, prompt: str, schema: str, repeat: int) -> str:
    """The key of one call: a SHA-256 of everything that changes the model's answer."""
    return key_prefix(identity, system, schema)(prompt, repeat)


def key_prefix(identity: dict[str, Any], system: str, schema: str) -> Any:
    """:func:`cache_key` with the model, instructions and schema hashed once: ``f(prompt, repeat)``."""
    head = hashlib.sha256(
        orjson.dumps(
            {"format": _FORMAT, "model": identity, "system": system, "schema": schema}, option=orjson.OPT_SORT_KEYS
        )
    )

    def key(prompt: str, repeat: int) -> str:
        digest = head.copy()
        digest.update(f"\0{repeat}\0".encode())
        digest.update(prompt.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    return key


def default_cache_folder(store_root: str | os.PathLike[str] | None) -> Path:
    """Beside the report store (``<store>/_heta_nb/judge_cache``) or, without a local store,
    ``$XDG_CACHE_HOME/heta_nb/judge_cache`` (``~/.cache`` by default)."""
    if store_root is not None:
        return Path(store_root) / "_heta_nb" / "judge_cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "heta_nb" / "judge_cache"


class JudgeCache:
    """A folder of judge answers (see the module docstring).

    Args:
        folder: where the answers live (created on the first write).
        mode: ``"use"`` (default), ``"replay"`` or ``"refresh"``.
    """

    def __init__(self, folder: str | os.PathLike[str], mode: str = "use") -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"judge cache mode must be one of {CACHE_MODES}, got {mode!r}")
        self.folder = Path(folder)
        self.mode = mode
        self.damaged = 0
        """Lines that were cut short or unreadable (skipped)."""
        self._entries: dict[str, dict[str, Any]] = {}
        self._offsets: dict[str, int] = {}
        self._own: Path | None = None
        self._fd: int | None = None
        self._loaded = False
        if self.folder.exists() and not self.folder.is_dir():
            raise NotADirectoryError(f"judge cache {str(self.folder)!r} is not a folder")

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.folder)!r}, mode={self.mode!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"folder": self.folder, "mode": self.mode}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["folder"], state["mode"])  # type: ignore[misc]

    def __len__(self) -> int:
        self._read_new()
        return len(self._entries)

    def _read_new(self) -> None:
        """Read the lines appended to every file since the last read (other processes' too)."""
        self._loaded = True
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return
        for name in names:
            if not name.endswith(".jsonl"):
                continue
            path = self.folder / name
            offset = self._offsets.get(name, 0)
            try:
                # a FIFO or a device is refused, never waited on; no size bound (a big cache is still the cache)
                with open(open_regular(path), "rb") as handle:
                    handle.seek(offset)
                    data = handle.read()
            except (FileNotFoundError, IsADirectoryError, PermissionError, NotARegularFileError):
                continue
            end = data.rfind(b"\n")
            if end < 0:
                continue  # nothing whole yet (or a line being written)
            for line in data[: end + 1].splitlines():
                if not line.strip():
                    continue
                try:
                    entry = orjson.loads(line)
                    key = entry["key"]
                    if not isinstance(key, str) or not isinstance(entry.get("text"), str):
                        raise ValueError
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                    self.damaged += 1
                    continue
                known = self._entries.get(key)
                if known is None or _newer(entry, known):
                    self._entries[key] = entry
            self._offsets[name] = offset + end + 1

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached answer of ``key`` (``text``, ``tokens_in``, ``tokens_out``, ``model``), or None.

        ``"refresh"`` always misses. Raises :class:`CacheMissError` in ``"replay"`` mode.
        """
        if self.mode == "refresh":
            return None
        if not self._loaded:
            self._read_new()
        entry = self._entries.get(key)
        if entry is None:
            self._read_new()  # another process may have just written it
            entry = self._entries.get(key)
        if entry is None and self.mode == "replay":
            raise CacheMissError(
                f"judge cache {str(self.folder)!r} (replay) has no answer for this call (key {key[:12]}); "
                "record it first with judge_cache=<folder> and a model"
            )
        return entry

    def put(self, key: str, text: str, *, model: str, tokens_in: int | None, tokens_out: int | None) -> None:
        """Append an answer (one line, one ``write``)."""
        entry = {
            "key": key,
            "model": model,
            "text": text,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "created": round(time.time(), 3),
        }
        line = orjson.dumps(entry) + b"\n"
        fd = self._own_file()
        view = memoryview(line)
        while view:  # (one write for any line a pipe or file system takes whole)
            written = os.write(fd, view)
            view = view[written:]
        self._entries[key] = entry

    def _own_file(self) -> int:
        if self._fd is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            host = "".join(c for c in socket.gethostname() if c.isalnum() or c in "-_")[:40] or "host"
            name = f"answers-{host}-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
            self._own = self.folder / name
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
            self._fd = os.open(self._own, flags, 0o666)
            self._offsets.setdefault(name, 0)
        return self._fd

    def close(self) -> None:
        """Close this process's file (the cache still reads and writes after; a new file is opened)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001,S110 - interpreter shutdown
            pass


def _newer(entry: dict[str, Any], known: dict[str, Any]) -> bool:
    """Whether ``entry`` was written after ``known`` (their ``created`` times; unknown counts as oldest)."""
    mine, theirs = entry.get("created"), known.get("created")
    if not isinstance(mine, (int, float)):
        return False
    return not isinstance(theirs, (int, float)) or mine >= theirs
