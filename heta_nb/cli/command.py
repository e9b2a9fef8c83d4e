"""The one function each command module gets to add its subcommand: ``command(name, **kwargs)``."""

from __future__ import annotations

import argparse
from typing import Any, Protocol

__all__ = ["Command"]


class Command(Protocol):
    """Adds a subcommand (it also takes ``--debug``) and returns its parser."""

    def __call__(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...
