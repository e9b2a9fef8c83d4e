"""Plots in a real kernel (nbclient): each plot cell's output is an image, then nbconvert's HTML shows it.

With and without ``%load_ext heta_nb``, without ``%matplotlib inline``, and with pyplot's
inline backend and a dark style active.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest
from helpers import FIXTURES
from nbformat.v4 import new_code_cell, new_notebook

SETUP = f"""
import heta_nb
from heta_nb import plots
report = heta_nb.load_report({str(FIXTURES / "report-normal.json")!r})
"""

PLOT_CELLS = {
    "figure, no extension": 'plots.plot_scores(report, "answer_contains").figure',
    "axes, no extension": "plots.plot_latency(report)",
    "comparison plot": 'heta_nb.compare(report, metrics=["beir_ndcg@3"]).plot_deltas("beir_ndcg@3")',
    "figure, extension": "%load_ext heta_nb\nplots.plot_metric_summary(report).figure",
    "pyplot inline, dark": (
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.style.use('dark_background')\n"
        'plots.plot_scores(report, "beir_ndcg@3", kind="ecdf").figure'
    ),
}


@pytest.mark.slow
def test_plot_cells_show_images_in_a_kernel_and_in_nbconvert(tmp_path: Path) -> None:
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    notebook = new_notebook(
        cells=[new_code_cell(SETUP), *(new_code_cell(source) for source in PLOT_CELLS.values())],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    for (name, _), cell in zip(PLOT_CELLS.items(), notebook.cells[1:]):
        assert not [o for o in cell.outputs if o.output_type == "error"], name
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(images) == 1, f"{name}: {[list(o.get('data', {})) for o in cell.outputs]}"  # one image, no duplicate
        png = base64.b64decode(images[0].data["image/png"])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") > 300, name
    dark = base64.b64decode(
        next(o for o in notebook.cells[-1].outputs if "image/png" in o.get("data", {})).data["image/png"]
    )
    assert _mostly_dark(dark)  # the style set with pyplot reached heta_nb's figure
    nbformat.validate(notebook)

    html, _ = HTMLExporter().from_notebook_node(notebook)
    shown = re.findall(r'<img(?![^>]*\bhidden\b)[^>]+src="data:image/png;base64,', html)  # the dark twin is hidden
    assert len(shown) == len(PLOT_CELLS)
    assert "&lt;Figure size" not in html and "<Figure size" not in html


def _mostly_dark(png: bytes) -> bool:
    import io

    import numpy as np
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png))[..., :3].mean(axis=2)
    return bool(np.median(pixels) < 0.1)
