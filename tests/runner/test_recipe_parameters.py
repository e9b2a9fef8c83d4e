"""Each recipe step's settings in the report (``metadata.heta_nb.recipe_parameters``) and the reuse guard."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, heta_recipe, requires_heta
from runner_support import exact_kb

import heta_nb
from heta_nb.runner.recipe_parameters import (
    LONG_TEXT,
    MAX_ITEMS,
    RECIPE_PARAMETERS,
    SIDECAR,
    recipe_parameters,
    step_parameters,
)

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}
SETTINGS: dict[str, Any] = dict(knowledge_base_name="kb", evaluators=["evidence_recall@3"], progress=False, lint=False)


@requires_heta
def test_a_demo_recipe_records_each_steps_config_in_manifest_order(tmp_path: Path) -> None:
    recipe = heta_recipe(tmp_path, chunk_size=333)
    recorded = recipe_parameters(recipe)
    assert recorded is not None
    steps = [step["name"] for step in recipe.manifest().to_dict()["steps"]]
    assert [(e["index"], e["name"], e["type"]) for e in recorded] == [
        (0, steps[0], "ParseDocuments"),
        (1, steps[1], "SplitDocuments"),
        (2, steps[2], "IndexFullText"),
    ]
    split = recorded[1]["parameters"]
    assert (split["chunk_size"], split["overlap"], split["encoding_name"]) == (333, 10, "unicode")
    assert split["split_punctuation"] == list(recipe.steps[1].config.split_punctuation)  # a tuple, as a list
    assert split["object_store"] is None
    assert recorded[2]["parameters"]["index_names"] == {"chunk_text": "chunk_full_text"}  # a nested dataclass
    assert json.loads(json.dumps(recorded)) == recorded  # plain JSON


@requires_heta
def test_objects_secrets_and_long_texts_are_not_recorded_as_they_are(tmp_path: Path) -> None:
    from heta_framework.common.stores import LocalObjectStore
    from heta_framework.kb import KnowledgeRecipe, SplitDocuments, SplitDocumentsConfig

    long_prompt = "Summarise the chunk. " * 200

    @dataclass(frozen=True)
    class ServiceSplitConfig(SplitDocumentsConfig):
        api_key: str = "sk-live-123"
        hf_token: str | None = "hf_abc"
        endpoint: str = "https://user:hunter2@example.org/v1"
        store: Any = None
        prompt: str = long_prompt
        extra: Any = None

    config = ServiceSplitConfig(
        store=LocalObjectStore(tmp_path),
        extra={"password": "pw", "max_tokens": 5, "ids": list(range(MAX_ITEMS + 1))},
    )
    parameters = step_parameters(SplitDocuments(config))
    text = json.dumps(parameters)
    for secret in ("sk-live-123", "hf_abc", "hunter2", 'pw"'):
        assert secret not in text
    assert parameters["api_key"] == parameters["hf_token"] == "<redacted>"
    assert parameters["endpoint"] == "https://user:<redacted>@example.org/v1"
    assert parameters["store"] == {"type": "LocalObjectStore"}
    assert len(long_prompt) > LONG_TEXT and parameters["prompt"] == {
        "type": "str",
        "characters": len(long_prompt),
        "sha256": hashlib.sha256(long_prompt.encode()).hexdigest(),
    }
    assert parameters["extra"] == {"password": "<redacted>", "max_tokens": 5, "ids": {"type": "list", "items": 201}}
    assert parameters["chunk_size"] == SplitDocumentsConfig().chunk_size

    recorded = recipe_parameters(KnowledgeRecipe(steps=(SplitDocuments(config),)))
    assert recorded is not None and recorded[0]["parameters"] == parameters


def test_a_step_without_a_config_records_its_plain_attributes_and_a_non_recipe_nothing() -> None:
    class Rerank:
        name = "rerank_results"

        def __init__(self) -> None:
            self.top_n = 3
            self.labels = ("a", "b")
            self.client = object()
            self.access_key = "secret"
            self._cache: dict[str, Any] = {}

    class Recipe:
        steps = (Rerank(),)

    assert recipe_parameters(Recipe()) == [
        {
            "index": 0,
            "name": "rerank_results",
            "type": "Rerank",
            "parameters": {"top_n": 3, "labels": ["a", "b"], "access_key": "<redacted>"},
        }
    ]
    assert step_parameters(object()) == {}
    assert recipe_parameters(object()) is None and recipe_parameters(None) is None


@requires_heta
def test_a_recipe_run_records_the_parameters_and_a_function_kb_does_not(tmp_path: Path) -> None:
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    recipe = heta_recipe(tmp_path, chunk_size=150)
    built = heta_nb.evaluate(bench, recipe=recipe, report_id="built", **SETTINGS)
    recorded = built.metadata["heta_nb"][RECIPE_PARAMETERS]
    assert recorded[1]["parameters"]["chunk_size"] == 150
    assert json.loads(built.to_json())["metadata"]["heta_nb"][RECIPE_PARAMETERS] == recipe_parameters(recipe)

    from heta_framework.kb import KnowledgeBase

    kb = asyncio.run(KnowledgeBase.load(recipe=recipe, name="kb"))  # a prebuilt Heta KB: its recipe's settings
    loaded = heta_nb.evaluate(bench, kb=kb, report_id="loaded", store=None, **SETTINGS)
    assert loaded.metadata["heta_nb"][RECIPE_PARAMETERS] == recorded

    plain = heta_nb.evaluate(bench, kb=exact_kb, store=None, **SETTINGS)
    assert RECIPE_PARAMETERS not in plain.metadata["heta_nb"]


@requires_heta
def test_a_kb_built_with_other_step_settings_is_not_reused(tmp_path: Path) -> None:
    from heta_framework.kb import KnowledgeBaseRuntime

    from heta_nb.runner import RunFailedError

    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path, chunk_size=120), report_id="one", **SETTINGS)
    sidecar = tmp_path / "objects" / KnowledgeBaseRuntime("kb").prefix / SIDECAR
    assert json.loads(sidecar.read_text())[1]["parameters"]["chunk_size"] == 120
    again = heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path, chunk_size=120), report_id="two", **SETTINGS)
    assert again.error_count == 0  # the same settings: reused (or rebuilt), not refused
    with pytest.raises(RunFailedError, match=r"its step settings differ in split_documents\.chunk_size\)"):
        heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path, chunk_size=400), report_id="three", **SETTINGS)
