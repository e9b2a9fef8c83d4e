"""Import optional dependencies with an error that says which extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from heta_nb.errors import MissingDependencyError

__all__ = ["require"]


def require(module: str, *, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the pip extra.

    Args:
        module: Dotted module name to import.
        extra: The heta-nb extra that provides it (``"heta"``, ``"s3"``...).
        purpose: What the caller wanted to do, for the message.

    Returns:
        The imported module.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} needs the optional package '{module.split('.')[0]}'; "
            f"install it with: pip install 'heta-nb[{extra}]'"
        ) from exc
