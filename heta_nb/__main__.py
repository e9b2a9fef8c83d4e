"""``python -m heta_nb`` runs the command-line interface."""

from __future__ import annotations

import sys

from heta_nb.cli import main

if __name__ == "__main__":
    sys.exit(main())
