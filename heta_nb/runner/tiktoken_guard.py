"""One tiktoken download attempt per build, not one per document.

Heta 0.1.2's ``ParseDocuments`` counts each document's tokens with
``tiktoken.get_encoding("cl100k_base")`` and, when that raises, falls back to
counting words (``len(text.split())``). tiktoken downloads an encoding it has not
cached and remembers only successes, so on a machine without network access every
document costs a failed download (about 0.2 s here, far more where DNS times out
rather than failing): 80 documents kept a build waiting 15 s for 0.3 s of work.

While a recipe builds, :func:`fail_fast_encodings` makes an encoding that failed
once fail again at once, for the rest of that build. Heta then takes its own
fallback for every document, as it would have after each slow failure, so the KB
holds the same artifacts. Encodings that load are untouched (tiktoken caches them).
The wrapper is installed on ``tiktoken.get_encoding`` only while at least one build
runs in the process, and removed after the last one.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from heta_nb._util.text import describe_error, shorten

__all__ = ["EncodingUnavailableError", "fail_fast_encodings", "tiktoken_message"]


def tiktoken_message(encoding: str) -> str:
    """The build's one short note for an encoding that could not be loaded (the reason goes to the debug log)."""
    name = shorten(encoding, 40)
    return f"document tokens counted as words, Heta's fallback: tiktoken's {name!r} is not available offline"


class EncodingUnavailableError(RuntimeError):
    """A tiktoken encoding failed to load earlier in this build, so it is not tried again."""


_lock = threading.Lock()
_builds = 0
_original: Callable[[str], Any] | None = None
"""tiktoken's own ``get_encoding``, kept once it was wrapped (the wrapper may outlive a build)."""
_failed: dict[str, str] = {}
"""Encoding name -> why it could not be loaded, while any build runs."""
_listeners: list[Callable[[str, str], object]] = []


def _get_encoding(encoding_name: str) -> Any:
    """``tiktoken.get_encoding``, failing at once for an encoding that failed in this build."""
    reason = _failed.get(encoding_name)
    if reason is not None:
        raise EncodingUnavailableError(f"tiktoken encoding {encoding_name!r} is unavailable ({reason})")
    assert _original is not None  # set before this function is installed, never unset
    try:
        return _original(encoding_name)
    except Exception as exc:
        if not _builds:  # outside a build (someone kept this function): plain tiktoken
            raise
        reason = describe_error(exc, 90, with_type=True)
        with _lock:
            first = encoding_name not in _failed
            _failed.setdefault(encoding_name, reason)
            listeners = list(_listeners)
        if first:
            for listener in listeners:
                listener(encoding_name, reason)
        raise


@contextlib.contextmanager
def fail_fast_encodings(on_failure: Callable[[str, str], object] | None = None) -> Iterator[None]:
    """Within this block, a tiktoken encoding that fails to load fails at once afterwards.

    Args:
        on_failure: called with the encoding's name and the reason the first time an
            encoding fails to load while this block runs, from the thread that asked
            for it (Heta's build: the event loop's thread).

    Without tiktoken installed this does nothing.
    """
    global _builds, _original
    try:
        tiktoken: Any = importlib.import_module("tiktoken")
    except ImportError:
        yield
        return
    with _lock:
        if _builds == 0 and tiktoken.get_encoding is not _get_encoding:
            _original = tiktoken.get_encoding
            tiktoken.get_encoding = _get_encoding
        _builds += 1
        if on_failure is not None:
            _listeners.append(on_failure)
    try:
        yield
    finally:
        with _lock:
            if on_failure is not None:
                _listeners.remove(on_failure)
            _builds -= 1
            if _builds == 0:
                if tiktoken.get_encoding is _get_encoding:  # (unless someone replaced it after us)
                    tiktoken.get_encoding = _original
                _failed.clear()
