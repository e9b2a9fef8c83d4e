"""Integrations with the tools teams already use, each behind its own extra: :mod:`~heta_nb.integrations.mlflow`.

Import the integration's module itself (``from heta_nb.integrations import mlflow``); nothing
here imports the tool until a function is called.
"""

from __future__ import annotations

__all__: list[str] = []
