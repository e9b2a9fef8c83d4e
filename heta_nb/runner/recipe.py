"""Building knowledge bases from a Heta recipe, as Heta's runner does, with progress.

Needs the ``[heta]`` extra. For each run unit: the unit's documents are written to
the recipe's object store under Heta's raw keys, then ``KnowledgeBase.create`` builds
the KB named as Heta names it (the base name for one corpus-level unit, else
``"{base}-{unit slug}"``). Each recipe step reports ``running`` / ``succeeded`` /
``failed`` / ``skipped`` as :class:`BuildStep` events, through a builder that wraps
Heta's run state (Heta itself reports nothing until the build returns).

A KB name that already finished building in the store is reused (loaded, status
``reused``) when ``reuse=True``, which is what makes a resumed run or a re-run work;
Heta's runner fails with ``KnowledgeBaseAlreadyExistsError`` there. Reuse is checked:
a KB that was built by a different recipe (another manifest, or other step settings,
kept beside the KB by :mod:`heta_nb.runner.recipe_parameters`) is refused (its results
would be reported under this recipe's manifest), and a KB whose search assets are gone
from this recipe's stores (an in-memory text index starts empty in a new process, or with a
new recipe object) is built again, with a ``kb_rebuilt`` warning, instead of failing
every query.

Isolation is Heta's: ``ParseDocuments`` reads all of ``raw/`` and a shared text index
keeps earlier units' chunks, so with several run units each KB also searches the
documents of the units before it (spec section 5.5). heta_nb builds exactly as
Heta does, so the numbers match Heta's reports, and says so with a
``unit_contamination`` warning. A build that fails leaves a KB whose queries fail
with Heta's missing-asset ``LookupError``; the ``build_failed`` warning (kept in the
report's ``metadata.heta_nb.warnings``) names the step that failed and why.

Without network access, Heta's ``ParseDocuments`` waits for a failed tiktoken download
once per document before it counts words instead; during a build, an encoding that
failed once fails at once (:mod:`heta_nb.runner.tiktoken_guard`), so the KB gets the
same word counts in a fraction of the time, and a ``tiktoken_unavailable`` warning
says so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from heta_nb._util.optional import require
from heta_nb.model.json import heta_json_safe
from heta_nb.runner.events import BuildFinished, BuildStarted, BuildStep, Event, RunWarning, logger
from heta_nb.runner.kb import KnowledgeBaseAdapter
from heta_nb.runner.recipe_parameters import (
    parameter_differences,
    read_stored_parameters,
    recipe_parameters,
    sidecar_key,
    store_parameters,
)
from heta_nb.runner.tiktoken_guard import fail_fast_encodings, tiktoken_message

if TYPE_CHECKING:
    from heta_nb.runner.sources import BenchmarkSource

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
        self._benchmark_keys: frozenset[str] | None = None
        self._warned_units = False
        self._unavailable_encodings: dict[str, str] = {}
        """tiktoken encodings that failed to load while building -> why (see :mod:`.tiktoken_guard`)."""
        self._warned_encodings: set[str] = set()
        self.build_notes: list[str] = []
        """What the builds did instead of the usual (tiktoken's fallback): said, not warned."""

    def recipe_manifest(self) -> dict[str, Any]:
        """``recipe.manifest().to_dict()``."""
        return dict(self.recipe.manifest().to_dict())

    async def check_contamination(self, benchmark_keys: Sequence[str]) -> None:
        """Warn when ``raw/`` already holds objects that Heta's ParseDocuments would ingest."""
        self._benchmark_keys = frozenset(benchmark_keys)
        try:
            existing = await self.objects.list("raw")
        except Exception:  # noqa: BLE001 - listing is best effort
            return
        ours = set(benchmark_keys)
        foreign = [info.key for info in existing if getattr(info, "key", None) not in ours]
        if foreign:
            self.emit(
                RunWarning(
                    code="corpus_contamination",
                    message=(
                        f"the recipe's object store already holds {len(foreign)} other raw object(s) "
                        f"({_first_keys(foreign)}); Heta's ParseDocuments reads all of raw/, so they join this "
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
        if not documents:
            # Heta's runner refuses this too; building would index whatever raw/ holds
            raise ValueError("benchmark produced no documents: a recipe needs the benchmark's documents to build a KB")
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

    async def unit_adapter(
        self,
        source: BenchmarkSource,
        unit: Any,
        *,
        first: bool,
        name: str,
        modes: Sequence[str],
        threads: int,
        build: bool,
    ) -> tuple[list[str], KnowledgeBaseAdapter | None]:
        """Write a run unit's documents, then build its KB (when ``build``: it has cases to query).

        Args:
            source: the benchmark.
            unit: the run unit.
            first: it is the run's first unit (then the store is checked for foreign documents).
            name: the unit's KB name (see :func:`unit_knowledge_base_name`).
            modes: the run's query modes (those the KB lacks are warned about).
            threads: the KB adapter's thread pool size.
            build: build the KB (else only write the documents).

        Returns:
            The documents' raw keys, and the built KB ready to query (None when not built).
        """
        if first:
            await self.check_contamination(source.raw_keys())
        keys = await self.write_documents(source.manifest, source.unit_documents(unit))
        if not build:
            return keys, None
        kb = await self.build(unit=unit, name=name, document_keys=keys)
        adapter = KnowledgeBaseAdapter(kb, threads=threads)
        available = adapter.available_modes
        if available is not None and str(getattr(getattr(kb, "run_record", None), "status", "")) != "failed":
            # (a failed build has no modes at all; its build_failed warning says why)
            missing = [m for m in modes if m not in available]
            if missing:
                message = (
                    f"mode(s) {missing} not available in {name!r} "
                    f"(available: {', '.join(sorted(available))}); their cases will be errors"
                )
                self.emit(RunWarning(code="unknown_mode", message=message, t=self.clock()))
        return keys, adapter

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

        class ProgressBuilder(base_builder):  # type: ignore[misc, valid-type]  # Heta's class, imported at run time
            async def build(self, recipe: Any, *, run_state: Any = None, **kwargs: Any) -> Any:
                if run_state is None:  # a rebuild: an in-memory state, so the steps are reported too
                    state_module = require("heta_framework.kb.state", extra="heta", purpose="building a KB")
                    run_state = state_module.RecipeRunState.start(run_id=f"run_{uuid.uuid4().hex}", started_at=_now())
                return await super().build(recipe, run_state=_StateProxy(run_state, report), **kwargs)

        config = builder_module.KnowledgeBaseBuilderConfig(skip_succeeded_steps=True)
        artifacts = {"benchmark_document_keys": tuple(document_keys), "source_keys": tuple(document_keys)}
        others = await self._other_units_documents(document_keys)
        with fail_fast_encodings(self._unavailable_encodings.setdefault):  # see tiktoken_guard
            try:
                kb = await kb_module.KnowledgeBase.create(
                    recipe=self.recipe, name=name, initial_artifacts=artifacts, builder=ProgressBuilder(config)
                )
                status = str(kb.run_record.status)
            except kb_module.KnowledgeBaseAlreadyExistsError:
                if not self.reuse:
                    raise
                kb = await kb_module.KnowledgeBase.load(recipe=self.recipe, name=name)
                await self._check_recipe(name)
                missing = await self._missing_assets(kb)
                if missing:
                    self.emit(
                        RunWarning(
                            code="kb_rebuilt",
                            message=(
                                f"knowledge base {name!r} finished building in this store before, but its search "
                                f"asset(s) {', '.join(missing)} are not in this recipe's stores (an in-memory store "
                                "starts empty in a new process or recipe object); it is built again"
                            ),
                            t=self.clock(),
                        )
                    )
                    rebuilder = ProgressBuilder(builder_module.KnowledgeBaseBuilderConfig(skip_succeeded_steps=False))
                    result = await rebuilder.build(self.recipe, initial_artifacts=artifacts)
                    kb = dataclasses.replace(kb, run_record=result.record, updated_at=_now())
                    status = str(kb.run_record.status)
                else:
                    status = "reused"
        note = self._note_unavailable_encodings()
        if status != "reused":  # the settings it was built with, for the next run's reuse check
            await store_parameters(self.objects, self._parameters_key(name), self.recipe)
        if self.query_engines is not None:
            kb = _with_query_engines(kb, self.query_engines)
        if others and status != "reused" and not self._warned_units:
            self._warned_units = True
            self.emit(
                RunWarning(
                    code="unit_contamination",
                    message=(
                        f"run unit {unit_id!r}: its KB {name!r} also reads {len(others)} document(s) of other run "
                        f"units ({_first_keys(others)}): Heta's ParseDocuments reads all of raw/ and a shared text "
                        "index keeps earlier units' chunks, so each unit's KB searches the units before it too. "
                        "heta_nb builds as Heta's BenchmarkRunner does (same numbers); for isolated units, "
                        "evaluate each unit with its own recipe and fresh stores"
                    ),
                    t=self.clock(),
                )
            )
        failure = None
        if status == "failed":
            failed = [r for r in kb.run_record.step_records if r.status == "failed"]
            failure = f"step {failed[0].step_name!r} failed: {failed[0].error}" if failed else "a step failed"
        self.knowledge_bases.append(kb)
        self.emit(
            BuildFinished(
                unit_id=unit_id,
                knowledge_base_name=name,
                status=status,
                seconds=time.perf_counter() - started,
                note=note,
                t=self.clock(),
            )
        )
        if failure is not None:
            self.emit(
                RunWarning(
                    code="build_failed",
                    message=f"building {name!r} failed: {failure}; its queries will fail with missing assets",
                    t=self.clock(),
                )
            )
        return kb

    def _note_unavailable_encodings(self) -> str | None:
        """The build's note when Heta counted document tokens as words (once per run and encoding).

        Not a warning: Heta takes this fallback itself, the scores do not depend on it and
        the reader cannot act on it offline. The note ends the build's line and is kept in
        the report (``metadata.heta_nb.build_notes``). It names no KB, so that the shards
        of a run say the same thing and a merge lists it once.
        """
        said = []
        for encoding, reason in self._unavailable_encodings.items():
            if encoding in self._warned_encodings:
                continue
            self._warned_encodings.add(encoding)
            logger.debug(
                "tiktoken could not load its %r encoding (%s); heta_nb let it try once per build, not once per "
                "document; for tiktoken's counts offline, put the encoding's file in TIKTOKEN_CACHE_DIR",
                encoding,
                reason,
            )
            said.append(tiktoken_message(encoding))
        self.build_notes.extend(said)
        return "; ".join(said) or None

    async def _other_units_documents(self, document_keys: Sequence[str]) -> list[str]:
        """Benchmark documents of other run units that ``raw/`` already holds (Heta's KB reads them too)."""
        if not self._benchmark_keys or self._warned_units:
            return []
        others = self._benchmark_keys.difference(document_keys)
        if not others:
            return []
        try:
            existing = await self.objects.list("raw")
        except Exception:  # noqa: BLE001 - listing is best effort
            return []
        return sorted(info.key for info in existing if getattr(info, "key", None) in others)

    async def _check_recipe(self, name: str) -> None:
        """Refuse to reuse a KB that the store says was built by another recipe."""
        runtime = require("heta_framework.kb.runtime", extra="heta", purpose="building a KB from a recipe")
        try:
            stored = json.loads(await self.objects.get(runtime.KnowledgeBaseRuntime(name).manifest_key))["recipe"]
        except Exception:  # noqa: BLE001 - load() read it already; nothing to compare with
            return
        current = heta_json_safe(dict(self.recipe.manifest().to_dict()))
        differs = []
        if heta_json_safe(stored) != current:
            differs = sorted(k for k in set(stored) | set(current) if stored.get(k) != current.get(k))
        what = "recipe manifest differs"
        if not differs:  # Heta's manifest has no step settings: heta_nb keeps them beside it
            kept = await read_stored_parameters(self.objects, self._parameters_key(name))
            differs = parameter_differences(kept, recipe_parameters(self.recipe)) if kept else []
            what = "step settings differ"
        if differs:
            raise ValueError(
                f"knowledge base {name!r} already exists in this store, built by a different recipe "
                f"(its {what} in {', '.join(differs)}); reusing it would report its results "
                "under this recipe. Pass another knowledge_base_name, or use a fresh object store"
            )

    @staticmethod
    def _parameters_key(name: str) -> str:
        """Where the step settings of the recipe that built KB ``name`` are kept (beside its manifest)."""
        runtime = require("heta_framework.kb.runtime", extra="heta", purpose="building a KB from a recipe")
        return sidecar_key(runtime.KnowledgeBaseRuntime(name).manifest_key)

    async def _missing_assets(self, kb: Any) -> list[str]:
        """The KB's search assets whose store in this recipe does not hold them (by ``count``)."""
        steps = require("heta_framework.kb.steps", extra="heta", purpose="building a KB from a recipe")
        missing = []
        for asset in tuple(kb.run_record.capabilities.search_assets):
            store_key = getattr(asset, "store", None)
            if not store_key:
                continue
            parts = str(store_key).split(".")
            try:
                ref = steps.ComponentRef(*parts) if len(parts) in (2, 3) else None
                component = self.recipe.get_component(ref) if ref is not None else None
            except Exception:  # noqa: BLE001 - a component this check cannot resolve
                continue
            count = getattr(component, "count", None)
            if not callable(count):
                continue
            try:
                await count(asset.name)
            except Exception:  # noqa: BLE001 - the index or collection does not exist
                missing.append(f"{asset.name} ({store_key})")
        return missing

    def knowledge_base_manifest(self) -> dict[str, Any]:
        """Heta's shape: one manifest, or ``{"knowledge_bases": [...]}`` for several units."""
        manifests = [dict(kb.manifest().to_dict()) for kb in self.knowledge_bases]
        if len(manifests) == 1:
            return manifests[0]
        return {"knowledge_bases": manifests}


def _with_query_engines(kb: Any, registry: Any) -> Any:
    if dataclasses.is_dataclass(kb) and not isinstance(kb, type):
        return dataclasses.replace(kb, query_engines=registry)
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


def _first_keys(keys: Sequence[str]) -> str:
    """The first three keys, for a warning."""
    return ", ".join(keys[:3]) + (" ..." if len(keys) > 3 else "")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _document_bytes(document: Any) -> bytes:
    data = getattr(document, "data", None)
    if data is not None:
        return bytes(data)
    path = getattr(document, "path", None)
    if path is not None:  # a regular file within the size bound (a FIFO would hang the build)
        from heta_nb._util.fs import read_regular_file

        return read_regular_file(path)
    raise NotImplementedError(f"document {getattr(document, 'document_id', '?')}: source_uri documents cannot be read")
