"""Fixtures of the LLM judge tests: a tiny benchmark, a deterministic KB, the test server behind
Heta's own ``LanguageModel``, and the stand-in's rules as the server's answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from llm_judges.llm_server import LLMServer

from heta_nb.benchmark import Benchmark
from heta_nb.llm_judges.standin import standin_answer

MANIFEST = {"name": "capitals", "version": "1", "split": "test", "task_type": "qa"}


def capitals(n: int = 6, *, answers: bool = True) -> Benchmark:
    """``n`` cases "What is the capital of country i?" (expected "The capital of country i is City{i}.")."""
    rows = [
        {
            "case_id": f"c{i}",
            "query": f"What is the capital of country {i}?",
            "answers": [f"The capital of country {i} is City{i}."] if answers else None,
        }
        for i in range(n)
    ]
    return Benchmark.from_frame(pd.DataFrame(rows), manifest=MANIFEST)


def capital_kb(query: str) -> dict[str, Any]:
    """A KB that answers right, plus one claim its chunks do not hold; chunk 1 supports the answer."""
    i = query.split()[-1].rstrip("?")
    return {
        "answer": f"The capital of country {i} is City{i}. It has a large harbour.",
        "results": [
            {"id": f"doc-{i}", "text": f"City{i} is the capital of country {i}."},
            {"id": "cats", "text": "Cats sleep most of the day."},
        ],
    }


def standin_responder(messages: list[dict]) -> str:
    """The server's answers: the stand-in's rules applied to the judge's system and user prompts."""
    system = next(m["content"] for m in messages if m["role"] == "system")
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    return standin_answer(system, prompt)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    """The OpenAI-compatible test server on 127.0.0.1, answering with the stand-in's rules."""
    with LLMServer(standin_responder, model="judge-test") as running:
        yield running


@pytest.fixture
def heta_model(server: LLMServer) -> Any:
    """Heta's own LiteLLM-backed ``LanguageModel`` pointed at the test server (no retries of its own)."""
    pytest.importorskip("heta_framework")
    import litellm
    from heta_framework.common.models.language.model import LanguageModel

    litellm.suppress_debug_info = True
    return LanguageModel(model_name="openai/judge-test", api_base=server.api_base, api_key="test", max_retries=0)
