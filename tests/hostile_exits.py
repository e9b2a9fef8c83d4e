"""Look-alikes of the ``BaseException`` subclasses other libraries raise, and a KB whose attribute
raises one, shared by ``tests/runner/test_hostile_user_code.py`` and ``tests/audit/families_runner.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runner_support import exact_kb

__all__ = ["RAISED", "Exit", "GeventTimeout", "HostileAttributeKB", "TrioCancelled"]


class GeventTimeout(BaseException):
    """Like ``gevent.Timeout``: a ``BaseException`` so that ``except Exception`` cannot swallow it."""


class TrioCancelled(BaseException):
    """Like ``trio.Cancelled``."""


class Exit(BaseException):  # noqa: N818 - pytest's name
    """Like ``_pytest.outcomes.Exit`` (``pytest.exit()``), which must not be raised for real here."""

    def __init__(self, msg: str = "unknown reason", returncode: int | None = None) -> None:
        self.msg = msg
        self.returncode = returncode
        super().__init__(msg)


RAISED: dict[str, Callable[[], BaseException]] = {
    "GeventTimeout": lambda: GeventTimeout("0.5 seconds"),
    "TrioCancelled": lambda: TrioCancelled("cancelled by the nursery"),
    "Exit": lambda: Exit("pytest.exit() in a plugin", returncode=3),
}
"""The look-alikes, each made with a message as its library would."""


class HostileAttributeKB:
    """A KB object one of whose attributes raises ``raised()`` (``exact_kb``'s answers otherwise)."""

    name = "hostile kb"

    def __init__(self, attribute: str, raised: Callable[[], BaseException]) -> None:
        self.attribute = attribute
        self.raised = raised

    def __getattribute__(self, name: str) -> Any:
        if name == object.__getattribute__(self, "attribute"):
            raise object.__getattribute__(self, "raised")()
        return object.__getattribute__(self, name)

    def query(self, query: str, *, mode: str, top_k: int) -> Any:
        return exact_kb(query, mode=mode, top_k=top_k)

    def manifest(self) -> dict[str, Any]:
        return {"name": "hostile"}
