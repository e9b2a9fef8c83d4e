"""Import optional dependencies with an error that says which extra to install."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from heta_nb.errors import MissingDependencyError

__all__ = ["require"]

# Extras whose packages install only on some Pythons (pyproject's environment markers): on
# another Python `pip install 'heta-nb[extra]'` succeeds and installs nothing, so the error
# says which Pythons to use instead.
_EXTRA_PYTHONS: dict[str, tuple[tuple[int, int], ...]] = {
    # heta-framework needs 3.11+ (datetime.UTC); its pinned SQLAlchemy and deps stop at 3.12
    "heta": ((3, 11), (3, 12)),
}

# Modules of the core install (pyproject's dependencies): no extra brings them.
_CORE = frozenset({"fsspec"})


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
        raise MissingDependencyError(_message(module, extra=extra, purpose=purpose)) from exc


def _message(module: str, *, extra: str, purpose: str) -> str:
    package = module.split(".")[0]
    if package in _CORE:
        return f"{purpose} needs the package '{package}' (a dependency of heta-nb); reinstall it: pip install {package}"
    pythons = _EXTRA_PYTHONS.get(extra)
    running = sys.version_info[:2]
    if pythons is not None and tuple(running) not in pythons:
        wanted = " or ".join(f"{major}.{minor}" for major, minor in pythons)
        return (
            f"{purpose} needs the optional package '{package}', which runs on Python {wanted} only; "
            f"this is Python {running[0]}.{running[1]}, where pip install 'heta-nb[{extra}]' installs nothing. "
            f"Use a Python {wanted} environment and install it there with: pip install 'heta-nb[{extra}]'"
        )
    return f"{purpose} needs the optional package '{package}'; install it with: pip install 'heta-nb[{extra}]'"
