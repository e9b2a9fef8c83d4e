"""A judge with its own ``model=`` plugs into Heta's own ``BenchmarkRunner`` like any evaluator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import heta_jsonl_benchmark, heta_recipe, requires_heta

from heta_nb.llm_judges import ContextPrecision, Faithfulness, standin_model


@requires_heta
@pytest.mark.slow
def test_hetas_runner_records_the_judges_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the judge's default cache
    benchmark = heta_jsonl_benchmark(ContextPrecision(model=standin_model()), Faithfulness(model=standin_model()))
    recipe = heta_recipe(tmp_path)
    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=recipe,
            knowledge_base_name="kb",
            query_modes=("full_text_search",),
            workspace=BenchmarkWorkspace(root_dir=tmp_path / "ws", cache_dir=tmp_path / "ws" / "cache"),
            config=BenchmarkRunConfig(top_k=3, report_id="heta"),
        )
    )
    report = json.loads(asyncio.run(recipe.stores.objects.get(result.report_key)))
    scores = [s for r in report["case_results"] for s in r["scores"]]
    precision = [s for s in scores if s["name"] == "context_precision"]
    assert precision and all(isinstance(s["value"], float) for s in precision)
    first = precision[0]["metadata"]
    assert first["judge"]["model"] == "stand-in (word overlap, not a language model)"
    assert [c["rank"] for c in first["chunks"]] == list(range(1, len(first["chunks"]) + 1))
    faithfulness = [s for s in scores if s["name"] == "faithfulness"]
    assert {s["metadata"]["reason"] for s in faithfulness} == {"the response has no answer"}  # n/a, not 1.0
    assert list((tmp_path / "cache" / "heta_nb" / "judge_cache").glob("*.jsonl"))
