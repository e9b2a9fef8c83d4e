"""The demo's Heta recipes and its extractive answer engine (needs the ``[heta]`` extra)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from heta_nb._util.optional import require

__all__ = ["DEMO_RECIPE", "ExtractiveAnswer", "demo_query_engines", "demo_recipe"]

DEMO_RECIPE = "full text: parse, split, BM25"
"""The demo recipes' manifest metadata, the same for every chunk size: two demo recipes'
recorded settings differ in ``chunk_size`` and ``overlap`` only (``metadata.heta_nb.recipe_parameters``)."""

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STOP = frozenset(
    "a an and are as at be by did do does for from had has have how in is it its of on or the to was were what "
    "when where which who whom whose why with".split()
)


def demo_recipe(root: Path, chunk_size: int, overlap: int, *, encoding: str = "unicode") -> Any:
    """A full-text recipe: parse, split, BM25 index; objects under ``root / "objects"``.

    Heta's recipe manifest does not hold ``chunk_size`` or ``overlap`` (its metadata is
    :data:`DEMO_RECIPE` whatever they are); a heta_nb report records them in
    ``metadata.heta_nb.recipe_parameters``.

    ``encoding`` is the splitter's tokenizer: ``"unicode"`` (one character per token)
    works offline; tiktoken encodings are downloaded by tiktoken on first use.
    """
    require("heta_framework", extra="heta", purpose="using the demo recipes")
    from heta_framework.common.stores import InMemoryTextIndexStore, LocalObjectStore
    from heta_framework.kb import (
        DocumentParserRegistry,
        IndexFullText,
        KnowledgeParsers,
        KnowledgeRecipe,
        KnowledgeStores,
        ParseDocuments,
        SplitDocuments,
        SplitDocumentsConfig,
        TextParser,
    )

    return KnowledgeRecipe(
        parsers=KnowledgeParsers(documents=DocumentParserRegistry([TextParser()])),
        stores=KnowledgeStores(objects=LocalObjectStore(root / "objects"), text_index=InMemoryTextIndexStore()),
        steps=(
            ParseDocuments(),
            SplitDocuments(SplitDocumentsConfig(encoding_name=encoding, chunk_size=chunk_size, overlap=overlap)),
            IndexFullText(),
        ),
        metadata={"demo_recipe": DEMO_RECIPE},
    )


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def best_sentence(query: str, texts: list[str]) -> str | None:
    """The sentence of ``texts`` sharing the most content words with ``query`` (ties: earliest)."""
    wanted = _terms(query)
    best: tuple[int, int, str] | None = None
    position = 0
    for text in texts:
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip()
            if not sentence:
                continue
            position += 1
            overlap = len(wanted & _terms(sentence))
            if best is None or overlap > best[0] or (overlap == best[0] and position < best[1]):
                best = (overlap, position, sentence)
    return best[2] if best and best[0] > 0 else None


class ExtractiveAnswer:
    """Query mode ``extractive_answer``: full-text search, then the best-matching sentence
    of the top three chunks as the answer (a stand-in for an LLM, offline)."""

    mode = "extractive_answer"

    def __init__(self) -> None:
        from heta_framework.kb import SearchAssetRef

        self.required_assets = frozenset({SearchAssetRef(kind="chunk_full_text_index")})

    async def query(self, request: Any, context: Any) -> Any:
        """Answer ``request`` from the full-text results."""
        from heta_framework.kb import QueryResponse, QueryTraceEvent

        inner = await context.query("full_text_search", request)
        answer = best_sentence(request.text, [r.text for r in inner.results[:3]])
        trace = inner.trace
        if request.trace:
            trace = (*trace, QueryTraceEvent(stage=self.mode, message="Picked the best-matching sentence."))
        return QueryResponse(
            mode=self.mode,
            results=inner.results,
            answer=answer,
            citations=inner.citations[:1],
            trace=trace,
            metadata={"wrapped_mode": inner.mode, "answer_strategy": "best_sentence_of_top_3"},
        )


def demo_query_engines() -> Any:
    """Heta's default query engines plus :class:`ExtractiveAnswer`."""
    from heta_framework.kb import QueryEngineRegistry

    return QueryEngineRegistry.defaults().register(ExtractiveAnswer())
