"""``python -m heta_nb`` runs the command-line interface."""

from __future__ import annotations

import sys

from heta_nb.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
