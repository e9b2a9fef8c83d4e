"""Large synthetic reports for the benchmarks, built fast: a base report from
:func:`heta_nb.testing.synthetic_report_dict`, its case results copied under new case ids.

Copies are written as JSON text (no parsed tree of the whole report is ever built), so a
100,000-result report (1.25 GB) takes seconds and little more memory than its bytes.
"""

from __future__ import annotations

import json
import math
from typing import Any

from heta_nb.benchmark import BenchmarkDocument
from heta_nb.model.report import EvaluationCaseResult
from heta_nb.model.summary import heta_score_summary
from heta_nb.testing import synthetic_report_dict

MODES = ("full_text_search", "extractive_answer", "sql_text_search")


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def report_bytes(results: int, *, results_per_case: int = 10, seed: int = 0, report_id: str = "synthetic") -> bytes:
    """A report of ``results`` case results (cases x 3 modes) in Heta's encoding.

    Args:
        results: case results in all (rounded up to a whole number of cases).
        results_per_case: ranked results in each response (10 in the issue's measurements).
        seed: the base report's seed (another seed, other scores).
        report_id: the report's id.

    Returns:
        The report's bytes, as Heta writes them.
    """
    cases = math.ceil(results / len(MODES))
    base_cases = min(cases, 1000)
    data = synthetic_report_dict(
        base_cases, modes=MODES, results_per_case=results_per_case, seed=seed, report_id=report_id
    )
    base = data["case_results"]
    copies = math.ceil(cases / base_cases)
    blobs: list[bytes] = []
    for copy in range(copies):
        for result in base:
            if len(blobs) >= cases * len(MODES):
                break
            blob = _dumps(result)
            if copy:
                prefix = _dumps({"case_id": result["case_id"]})[:-1]
                blob = blob.replace(prefix, prefix[:-1] + f'-{copy}"'.encode(), 1)
            blobs.append(blob)
    count = len(blobs)
    every = [base[i % len(base)] for i in range(count)]
    data["score_summary"] = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in every)
    data["case_results"] = []
    head = _dumps(data)
    marker = b'"case_results":[]'
    at = head.index(marker)
    return head[:at] + b'"case_results":[' + b",".join(blobs) + b"]" + head[at + len(marker) :]


def demo_documents(copies: int) -> list[BenchmarkDocument]:
    """The demo benchmark's documents and ``copies`` edited copies of each (more text to index and score)."""
    from heta_nb import demo

    whole = demo.load_benchmark()
    documents = list(whole.documents)
    for copy in range(1, copies + 1):
        for doc in whole.documents:
            documents.append(
                BenchmarkDocument(
                    document_id=f"{doc.document_id}-copy{copy}",
                    name=doc.name,
                    media_type=doc.media_type,
                    data=doc.read_bytes() + f"\n(Archive copy {copy}.)\n".encode(),
                )
            )
    return documents
