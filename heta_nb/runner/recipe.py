"""Building knowledge bases from a Heta recipe, as Heta's runner does, with progress.

Needs the ``[heta]`` extra. For each run unit: the unit's documents are written to
the recipe's object store under Heta's raw keys, then ``KnowledgeBase.create`` builds
the KB named as Heta names it (the base name for one corpus-level unit, else
``"{base}-{unit slug}"``). Each recipe step reports ``running`` / ``succeeded`` /
``failed`` / ``skipped`` as :class:`BuildStep` events, through a builder that wraps
Heta's run state (Heta itself reports nothing until the build returns).

A KB name that already finished building in the store is reused (loaded, status
``reused``) when ``reuse=True``, which is what makes a resumed run or a re-run work;
Heta's runner fails with ``KnowledgeBaseAlreadyExistsError`` there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from heta_nb._optional import require
from heta_nb.runner.events import BuildFinished, BuildStarted, BuildStep, Event, RunWarning

__all__ = ["RecipeBuilder", "unit_knowledge_base_name"]

MAX_KB_NAME = 80


def _unit_slug(unit_id: str) -> str:
    normalized = "".join(char.lower() if char.isalnum() else "_" for char in unit_id.strip())
    return "_".join(part for part in normalized.split("_") if part) or "unit"


def unit_knowledge_base_name(base_name: str, unit: Any, unit_count: int) -> str:
    """Heta's KB name for a run unit (spec section 5.2)."""
    corpus_level = not tuple(getattr(unit, "document_ids", ())) and not tuple(getattr(unit, "case_ids", ()))
    if unit_count == 1 and corpus_level:
        return base_name
    candidate = f"{base_name}-{_unit_slug(unit.unit_id)}"
    if len(candidate) <= MAX_KB_NAME:
        return candidate
    digest = hashlib.sha1(unit.unit_id.encode("utf-8")).hexdigest()[:10]
    keep = max(1, MAX_KB_NAME - len(digest) - 2)
    return f"{base_name[:keep].rstrip(' -_')}-{digest}"


class _StateProxy:
    """Forwards to Heta's RecipeRunState and reports each step transition."""

    def __init__(self, state: Any, report: Callable[[Any, str], None]) -> None:
        self._state = state
        self._report = report

    def __getattr__(self, name: str) -> Any:
        return getattr(self._state, name)

    async def start_step(self, record: Any, **kwargs: Any) -> Any:
        self._report(record, "running")
        return await self._state.start_step(record, **kwargs)

    async def finish_step(self, record: Any, **kwargs: Any) -> Any:
        self._report(record, str(getattr(record, "status", "succeeded")))
        return await self._state.finish_step(record, **kwargs)

    async def skip_step(self, record: Any, **kwargs: Any) -> Any:
        self._report(record, "skipped")
        return await self._state.skip_step(record, **kwargs)


class RecipeBuilder:
    """Writes benchmark documents and builds one Heta KB per run unit.

    Args:
        recipe: a ``heta_framework`` ``KnowledgeRecipe``.
        emit: the runner's event sink.
        clock: seconds since the run started (for event times).
        query_engines: optional ``QueryEngineRegistry`` replacing the defaults (as Heta).
        reuse: load a KB that already finished building instead of failing.
    """

    def __init__(
        self,
        recipe: Any,
        *,
        emit: Callable[[Event], None],
        clock: Callable[[], float],
        query_engines: Any = None,
        reuse: bool = True,
    ) -> None:
        self.recipe = recipe
        self.emit = emit
        self.clock = clock
        self.query_engines = query_engines
        self.reuse = reuse
        stores = getattr(recipe, "stores", None)
        self.objects: Any = getattr(stores, "objects", None)
        needed = ("put", "get", "exists", "list")
        if self.objects is None or not all(callable(getattr(self.objects, n, None)) for n in needed):
            raise TypeError("recipe.stores.objects must be a Heta ObjectStore (async put/get/exists/list)")
        self.knowledge_bases: list[Any] = []

    def recipe_manifest(self) -> dict[str, Any]:
        """``recipe.manifest().to_dict()``."""
        return dict(self.recipe.manifest().to_dict())

    async def check_contamination(self, benchmark_keys: Sequence[str]) -> None:
        """Warn when ``raw/`` already holds objects that Heta's ParseDocuments would ingest."""
        try:
            existing = await self.objects.list("raw")
        except Exception:  # noqa: BLE001 - listing is best effort
            return
        ours = set(benchmark_keys)
        foreign = [info.key for info in existing if getattr(info, "key", None) not in ours]
        if foreign:
            shown = ", ".join(foreign[:3]) + (" ..." if len(foreign) > 3 else "")
            self.emit(
                RunWarning(
                    code="corpus_contamination",
                    message=(
                        f"the recipe's object store already holds {len(foreign)} other raw object(s) "
                        f"({shown}); Heta's ParseDocuments reads all of raw/, so they join this "
                        "benchmark's corpus. Use a fresh object store for clean numbers."
                    ),
                    t=self.clock(),
                )
            )

    @staticmethod
    def raw_keys(manifest: Any, documents: Sequence[Any]) -> list[str]:
        """The documents' raw keys, each checked to be six plain path segments.

        A benchmark name, split, document id or file name that would nest, escape or
        alias a folder is refused here, before anything is written (Heta's runner
        writes such keys, or fails half-way through).
        """
        keys = [document.raw_key(manifest) for document in documents]
        for key in keys:
            parts = key.split("/")
            if len(parts) != 6 or any(part in ("", ".", "..") or "\\" in part or "\x00" in part for part in parts):
                raise ValueError(
                    f"raw key {key!r}: benchmark name, split, document id and name must each be one "
                    "plain path segment (no '/', '\\', '.', '..')"
                )
        return keys

    async def write_documents(self, manifest: Any, documents: Sequence[Any]) -> list[str]:
        """Put each document's bytes at its raw key; return the keys in write order."""
        keys = self.raw_keys(manifest, documents)
        for key, document in zip(keys, documents):
            data = document.read_bytes() if hasattr(document, "read_bytes") else _document_bytes(document)
            await self.objects.put(key, data)
        return keys

    async def build(self, *, unit: Any, name: str, document_keys: Sequence[str]) -> Any:
        """Build (or reuse) the KB of one unit, reporting every step."""
        kb_module = require("heta_framework.kb", extra="heta", purpose="building a KB from a recipe")
        builder_module = require("heta_framework.kb.builder", extra="heta", purpose="building a KB from a recipe")
        started = time.perf_counter()
        unit_id = unit.unit_id
        steps = self.recipe.expanded_steps()
        self.emit(
            BuildStarted(
                unit_id=unit_id,
                knowledge_base_name=name,
                steps=tuple(step.name for step in steps),
                documents=len(document_keys),
                t=self.clock(),
            )
        )

        def report(record: Any, status: str) -> None:
            self.emit(
                BuildStep(
                    unit_id=unit_id,
                    index=int(record.index),
                    name=str(record.step_name),
                    step_type=str(record.step_type),
                    status=status,
                    error=getattr(record, "error", None),
                    t=self.clock(),
                )
            )

        base_builder = builder_module.KnowledgeBaseBuilder

        class ProgressBuilder(base_builder):  # type: ignore[misc, valid-type]
            async def build(self, recipe: Any, *, run_state: Any = None, **kwargs: Any) -> Any:
                proxy = _StateProxy(run_state, report) if run_state is not None else None
                return await super().build(recipe, run_state=proxy, **kwargs)

        config = builder_module.KnowledgeBaseBuilderConfig(skip_succeeded_steps=True)
        artifacts = {"benchmark_document_keys": tuple(document_keys), "source_keys": tuple(document_keys)}
        try:
            kb = await kb_module.KnowledgeBase.create(
                recipe=self.recipe, name=name, initial_artifacts=artifacts, builder=ProgressBuilder(config)
            )
            status = str(kb.run_record.status)
        except kb_module.KnowledgeBaseAlreadyExistsError:
            if not self.reuse:
                raise
            kb = await kb_module.KnowledgeBase.load(recipe=self.recipe, name=name)
            status = "reused"
        if self.query_engines is not None:
            kb = _with_query_engines(kb, self.query_engines)
        self.knowledge_bases.append(kb)
        self.emit(
            BuildFinished(
                unit_id=unit_id,
                knowledge_base_name=name,
                status=status,
                seconds=time.perf_counter() - started,
                t=self.clock(),
            )
        )
        if status == "failed":
            failed = [r for r in kb.run_record.step_records if r.status == "failed"]
            detail = f": {failed[0].step_name}: {failed[0].error}" if failed else ""
            self.emit(
                RunWarning(
                    code="build_failed",
                    message=f"building {name!r} failed{detail}; its queries will fail with missing assets",
                    t=self.clock(),
                )
            )
        return kb

    def knowledge_base_manifest(self) -> dict[str, Any]:
        """Heta's shape: one manifest, or ``{"knowledge_bases": [...]}`` for several units."""
        manifests = [dict(kb.manifest().to_dict()) for kb in self.knowledge_bases]
        if len(manifests) == 1:
            return manifests[0]
        return {"knowledge_bases": manifests}


def _with_query_engines(kb: Any, registry: Any) -> Any:
    if dataclasses.is_dataclass(kb) and not isinstance(kb, type):
        return dataclasses.replace(kb, query_engines=registry)  # type: ignore[type-var]
    return type(kb)(
        name=kb.name,
        description=kb.description,
        recipe=kb.recipe,
        run_record=kb.run_record,
        created_at=kb.created_at,
        updated_at=kb.updated_at,
        metadata=kb.metadata,
        query_engines=registry,
    )


def _document_bytes(document: Any) -> bytes:
    data = getattr(document, "data", None)
    if data is not None:
        return bytes(data)
    path = getattr(document, "path", None)
    if path is not None:
        from pathlib import Path

        return Path(path).read_bytes()
    raise NotImplementedError(f"document {getattr(document, 'document_id', '?')}: source_uri documents cannot be read")
