"""Shared constants and markers for the tests (imported as ``helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "heta-0.1.2"
REPORT_FILES = sorted(FIXTURES.glob("report-*.json"))


def heta_available() -> bool:
    """Whether the [heta] extra (heta-framework) is installed."""
    try:
        import heta_framework  # noqa: F401
    except ImportError:
        return False
    return True


requires_heta = pytest.mark.skipif(not heta_available(), reason="needs the [heta] extra (heta-framework)")


def heta_recipe(root: Path, *, chunk_size: int = 120, encoding: str = "unicode"):  # noqa: ANN201 - a Heta recipe
    """A real Heta full-text recipe (parse, split, BM25) with its objects under ``root / "objects"``."""
    from heta_nb.demo.heta_recipes import demo_recipe

    return demo_recipe(root, chunk_size, 10, encoding=encoding)


def heta_jsonl_benchmark(*evaluators: object):  # noqa: ANN201 - a Heta JsonlBenchmark
    """Heta's own JsonlBenchmark over the lighthouse_mini fixture files."""
    from heta_framework.evaluation import BenchmarkManifest, EvidenceRecallAtK, JsonlBenchmark

    return JsonlBenchmark(
        manifest=BenchmarkManifest(name="lighthouse_mini", version="1", split="test", task_type="multihop_qa"),
        documents_jsonl=FIXTURES / "documents.jsonl",
        cases_jsonl=FIXTURES / "cases.jsonl",
        evaluator_list=evaluators or (EvidenceRecallAtK(k=3),),
    )
