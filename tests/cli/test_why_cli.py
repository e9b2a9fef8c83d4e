"""``heta-nb compare`` and ``heta-nb check`` say why it changed: the stage lines, what differs,
the slices that moved (with ``--benchmark``) and clustered intervals (``--cluster-by``)."""

from __future__ import annotations

import warnings
import zlib
from pathlib import Path
from typing import Any

import pytest

import heta_nb
from heta_nb.cli import main
from heta_nb.demo.settings import DATA, load_benchmark

PREFIX = "raw/benchmarks/saltmarsh_isles/test"


def _kb(lose_every: int) -> Any:
    """Retrieves each case's evidence first, then the rest; loses the evidence of one case in ``lose_every``."""
    gold = load_benchmark()
    evidence = {c.query: [e.reference_id for e in c.expected.evidence] for c in gold.cases}
    others = sorted({d.document_id for d in gold.documents})

    def kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        wanted = evidence[query]
        lost = lose_every and zlib.crc32(query.encode()) % lose_every == 0
        docs = (
            [d for d in others if d not in wanted][:5]
            if lost
            else (wanted + [d for d in others if d not in wanted])[:5]
        )
        return {
            "mode": mode,
            "results": [{"id": d, "text": d, "source": {"object_key": f"{PREFIX}/{d}/x.txt"}} for d in docs],
        }

    return kb


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    work = tmp_path_factory.mktemp("why-cli")
    out = {}
    for name, every in (("base", 0), ("lossy", 3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = heta_nb.evaluate(
                load_benchmark(), kb=_kb(every), query_modes=["search"], evaluators=["evidence_recall@5", "ndcg@5"],
                knowledge_base_name=name, report_id=name, progress=False,
            )  # fmt: skip
        path = work / f"{name}.json"
        path.write_text(report.to_json(), encoding="utf-8")
        out[name] = str(path)
    return out


def test_compare_says_why_and_clusters(pair: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", pair["base"], pair["lossy"], "--benchmark", str(DATA)]) == 0
    out = capsys.readouterr().out
    assert "why it changed:" in out and "lost their evidence in retrieval" in out
    assert "slices:" in out and "labels." in out
    assert main(["compare", pair["base"], pair["lossy"], "--benchmark", str(DATA), "--cluster-by", "document"]) == 0
    clustered = capsys.readouterr().out
    assert "intervals and p-values clustered by document (" in clustered and "CR1" in clustered
    with pytest.raises(SystemExit) as stop:  # a usage error: argparse's exit
        main(["compare", pair["base"], pair["lossy"], "--cluster-by", "document"])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert "--cluster-by document: reads the benchmark's cases; give --benchmark PATH" in err


def test_check_markdown_says_why(pair: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "summary.md"
    code = main(["check", pair["lossy"], "--baseline", pair["base"], "--benchmark", str(DATA), "-o", str(target)])
    capsys.readouterr()
    text = target.read_text(encoding="utf-8")
    assert code == 1 and "**Why it changed**" in text and "lost their evidence in retrieval" in text
    assert "| detects ≥ |" in text
    assert main(["check", pair["lossy"], "--baseline", pair["base"]]) == 1
    assert "why it changed:" in capsys.readouterr().out
