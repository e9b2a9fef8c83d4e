"""Live views of a running evaluation: the notebook widget and the terminal line.

Both are event subscribers that fold the runner's events into a ``RunState``:
``console.ConsoleProgress`` writes one status line to a terminal or log,
``widget.RunWidget`` is the ipywidgets view with a Cancel button (ipywidgets is
imported when one is built).
"""

from __future__ import annotations

from heta_nb.progress.console import ConsoleProgress
from heta_nb.progress.widget import RunWidget

__all__ = ["ConsoleProgress", "RunWidget"]
