"""How long ``import heta_nb`` takes in a fresh interpreter (target < 0.3 s).

Each statement runs in a new process, interleaved with an empty baseline; the
figure is the median difference over the runs, so interpreter start-up is excluded.

    python benchmarks/import_time.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATEMENTS = {
    "import heta_nb": "import heta_nb",
    "import heta_nb.model": "import heta_nb.model",
    "load a report": "import heta_nb; heta_nb.load_report('tests/fixtures/heta-0.1.2/report-normal.json')",
    "import pandas (reference)": "import pandas",
}


def wall(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"{'statement':28} {'median extra':>12} {'min extra':>10}")
    for name, code in STATEMENTS.items():
        diffs = []
        for _ in range(args.runs):
            base = wall("pass")
            diffs.append(wall(code) - base)
        print(f"{name:28} {statistics.median(diffs) * 1000:>10.0f}ms {min(diffs) * 1000:>8.0f}ms")


if __name__ == "__main__":
    main()
