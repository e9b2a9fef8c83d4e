"""A sweep's pairs: every (recipe or KB, benchmark), named, checked and matched to its stored report.

Everything that can be refused is refused here, before any KB is built: unknown or
reserved settings, names Heta or the store would refuse, a Heta recipe object shared
by several benchmarks (their corpora would mix), and stored reports made with other
settings. Each pair then starts fresh, resumes an interrupted run, or reuses a finished
report as it is.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from heta_nb.errors import HetaNbError
from heta_nb.sweeps.collisions import CellPaths, refuse_colliding, store_folder

__all__ = ["CONTROLLED", "PairSpec", "SweepError", "is_recipe", "plan_pairs"]

CONTROLLED = ("benchmark", "kb", "recipe", "store", "report_id", "knowledge_base_name", "resume", "overwrite")
"""``evaluate`` settings the sweep sets per pair (not accepted as ``**settings``)."""

_KB_NAME = re.compile(r"[A-Za-z0-9 _-]{1,80}")
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")

Start = Literal["fresh", "resume", "reuse", "overwrite"]


class SweepError(HetaNbError, ValueError):
    """A sweep that cannot run as asked (said before any work), or in which every pair failed."""


@dataclass(frozen=True)
class PairSpec:
    """One (recipe or KB, benchmark) pair, ready to run anywhere (everything in it pickles with cloudpickle)."""

    index: int
    recipe: str
    """The recipe's (or KB's) name: also the report's ``knowledge_base_name``."""
    benchmark: str
    """The benchmark's name in the sweep."""
    kind: Literal["recipe", "factory", "kb"]
    system: Any
    """A Heta recipe, a recipe factory ``f(folder) -> recipe``, or a KB."""
    bench: Any
    report_id: str
    settings: dict[str, Any] = field(default_factory=dict)
    """The other ``evaluate`` settings (modes, evaluators, top_k...)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    store: Any = None
    start: Start = "fresh"
    folder: str | None = None
    """Where a factory builds this pair's recipe (its own object store)."""

    @property
    def label(self) -> str:
        """``recipe × benchmark``."""
        return f"{self.recipe} × {self.benchmark}"


def is_recipe(value: Any) -> bool:
    """Whether ``value`` looks like a Heta ``KnowledgeRecipe`` (stores, steps and a manifest)."""
    return hasattr(value, "stores") and hasattr(value, "steps") and callable(getattr(value, "manifest", None))


def _named(values: Any, what: str) -> dict[str, Any]:
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise SweepError(f"{what} must be a dict of name -> {what[:-1]}, got {type(values).__name__}")
    named = {}
    for name, value in values.items():
        if not isinstance(name, str) or not name.strip():
            raise SweepError(f"{what}: every name must be a non-blank string, got {name!r}")
        if name.strip() in named:
            raise SweepError(f"{what}: {name!r} and {name.strip()!r} are one name (spaces around a name are dropped)")
        named[name.strip()] = value
    return named


def _benchmarks(benchmarks: Any) -> dict[str, Any]:
    """The benchmarks by name: a dict as given, else named after their manifests."""
    from heta_nb.benchmark.load import load_benchmark
    from heta_nb.comparison.systems import unique_labels

    if isinstance(benchmarks, Mapping):
        items = list(_named(benchmarks, "benchmarks").items())
    else:
        many = isinstance(benchmarks, (list, tuple))
        values = list(benchmarks) if many else [benchmarks]
        items = [("", value) for value in values]
    loaded = []
    for name, value in items:
        if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
            value = load_benchmark(value)  # once, here: every pair shares it
        loaded.append((name, value))
    if not isinstance(benchmarks, Mapping):
        manifests = [getattr(v, "manifest", None) for _, v in loaded]
        names = [str(getattr(m, "name", "") or "benchmark") for m in manifests]
        if len(set(names)) < len(names):
            names = [str(getattr(m, "key", n)) for m, n in zip(manifests, names)]
        loaded = [(name, value) for name, (_, value) in zip(unique_labels(names), loaded)]
    if not loaded:
        raise SweepError("benchmarks: give at least one benchmark")
    return dict(loaded)


def _check_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    from heta_nb.runner.config import RunConfig

    known = [f.name for f in dataclasses.fields(RunConfig) if f.init]
    for name in settings:
        if name in CONTROLLED:
            raise SweepError(
                f"sweep() sets {name}= for each pair itself "
                "(the recipe's name is the KB name, report ids come from name= and the benchmark's name)"
            )
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; evaluate's settings: {', '.join(known)}"
            raise SweepError(f"unknown setting {name!r}{hint}")
    return dict(settings)


def _report_id(name: str, benchmark: str) -> str:
    """``{name}--{benchmark}`` as a report id (two that slug alike are refused by :func:`refuse_colliding`)."""
    return (_ID_CHARS.sub("_", f"{name}--{benchmark}").strip("._") or "sweep")[:120]


def plan_pairs(
    benchmarks: Any,
    recipes: Any,
    kbs: Any,
    *,
    name: str,
    store: Any,
    rerun: bool,
    settings: Mapping[str, Any],
    folder_of: Any,
) -> list[PairSpec]:
    """Every pair of the sweep, checked, with how each starts.

    Args:
        benchmarks: one benchmark (object or folder), a list, or a dict name -> benchmark.
        recipes: dict name -> Heta recipe or recipe factory.
        kbs: dict name -> KB (anything ``evaluate(kb=...)`` takes).
        name: the sweep's name (the report ids' prefix).
        store: where reports go (None: memory only).
        rerun: replace stored reports instead of reusing or resuming them.
        settings: the other ``evaluate`` settings.
        folder_of: ``folder_of(recipe, benchmark) -> str``, a factory's folder for a pair.

    Returns:
        The pairs, benchmark by benchmark, systems in the order given.

    Raises:
        SweepError: anything that would fail later, said now.
    """
    from heta_nb.runner.config import RunConfig

    if not isinstance(name, str) or not name.strip():
        raise SweepError("name must be a non-blank string (it prefixes every report id)")
    settings = _check_settings(settings)
    user_metadata = dict(settings.pop("metadata", None) or {})
    if "sweep" in user_metadata:
        raise SweepError("metadata key 'sweep' is written by sweep() (recipe, benchmark and sweep name); use another")
    bench = _benchmarks(benchmarks)
    systems: dict[str, tuple[str, Any]] = {}
    for label, value in _named(recipes, "recipes").items():
        systems[label] = ("recipe" if is_recipe(value) else "factory", value)
        if not is_recipe(value) and not callable(value):
            raise SweepError(
                f"recipes[{label!r}] is neither a Heta KnowledgeRecipe nor a factory f(folder) -> recipe: "
                f"{type(value).__name__}"
            )
    for label, value in _named(kbs, "kbs").items():
        if label in systems:
            raise SweepError(f"{label!r} names both a recipe and a KB; names must be unique")
        systems[label] = ("kb", value)
    if not systems:
        raise SweepError("nothing to evaluate: pass recipes={name: recipe or factory} and/or kbs={name: kb}")
    for label, (kind, _) in systems.items():
        if kind != "kb" and not _KB_NAME.fullmatch(label):
            raise SweepError(
                f"recipe name {label!r} names its knowledge base: Heta allows at most 80 letters, digits, "
                "spaces, '_' and '-'"
            )
        if kind == "recipe" and len(bench) > 1:
            raise SweepError(
                f"recipes[{label!r}] is one Heta recipe object, with one object store and one text index: "
                f"evaluated on {len(bench)} benchmarks, their corpora would mix (Heta's ParseDocuments reads "
                "all of raw/). Pass a factory that makes a fresh recipe in a folder instead, e.g. "
                "functools.partial(heta_nb.demo.heta_recipes.demo_recipe, chunk_size=160, overlap=20)"
            )
    report_ids = {bench_label: _report_id(name.strip(), bench_label) for bench_label in bench}
    folders = {
        (label, bench_label): folder_of(label, bench_label) if kind == "factory" else None
        for bench_label in bench
        for label, (kind, _) in systems.items()
    }
    # every path a cell writes, checked with the store's slug before anything is built, queried or read
    refuse_colliding(
        (
            CellPaths(label, bench_label, report_ids[bench_label], folder)
            for (label, bench_label), folder in folders.items()
        ),
        SweepError,
    )
    pairs: list[PairSpec] = []
    report_store = None
    if store is not None:
        from heta_nb.store import ReportStore

        report_store = store if isinstance(store, ReportStore) else ReportStore(store)
    for bench_label, benchmark in bench.items():
        report_id = report_ids[bench_label]
        for label, (kind, value) in systems.items():
            metadata = {
                **user_metadata,
                "sweep": {
                    "name": name.strip(),
                    "recipe": label,
                    "benchmark": bench_label,
                    "recipes": list(systems),
                    "benchmarks": list(bench),
                },
            }
            keyword = "kb" if kind == "kb" else "recipe"
            # every setting checked now, as evaluate() would (a factory's recipe is made later)
            RunConfig(
                benchmark=benchmark,
                **{keyword: value},
                store=None,
                report_id=report_id,
                knowledge_base_name=label,
                metadata=metadata,
                **settings,
            )
            spec = PairSpec(
                index=len(pairs),
                recipe=label,
                benchmark=bench_label,
                kind=kind,  # type: ignore[arg-type]
                system=value,
                bench=benchmark,
                report_id=report_id,
                settings=dict(settings),
                metadata=metadata,
                store=store,
                folder=folders[(label, bench_label)],
            )
            if report_store is not None:
                from heta_nb.store.names import safe_slug

                safe_slug(label, "recipe name")
                safe_slug(report_id, "report_id")
                spec = dataclasses.replace(spec, start=_start(spec, report_store, rerun))
            pairs.append(spec)
    return pairs


def _start(spec: PairSpec, store: Any, rerun: bool) -> Start:
    """How a pair starts: its stored report reused, resumed, replaced, or a fresh run."""
    from heta_nb.runner.checkpoint import checkpoint_exists

    exists = store.exists(spec.recipe, spec.report_id)
    interrupted = checkpoint_exists(store, spec.recipe, spec.report_id)
    if not exists and not interrupted:
        return "fresh"
    if rerun:
        return "overwrite"
    if interrupted or not exists:
        return "resume"
    report = store.load(spec.recipe, spec.report_id)
    _check_same_names(spec, report)
    recorded = report.metadata.get("heta_nb")
    info = recorded if isinstance(recorded, Mapping) else {}
    if info.get("status", "complete") != "complete":
        return "resume"
    _check_same_settings(spec, report, info)
    return "reuse"


def _check_same_names(spec: PairSpec, report: Any) -> None:
    """Refuse a stored report another sweep wrote under names that slug like this pair's (one folder, two names)."""
    stored = report.metadata.get("sweep")
    if not isinstance(stored, Mapping):
        return
    mine = spec.metadata.get("sweep") or {}
    for key, what in (("name", "sweep names"), ("recipe", "names"), ("benchmark", "benchmark names")):
        theirs, ours = stored.get(key), mine.get(key)
        if isinstance(theirs, str) and isinstance(ours, str) and theirs != ours:
            raise SweepError(
                f"{what} {theirs!r} (stored) and {ours!r} would share one report folder "
                f"{store_folder(spec.recipe, spec.report_id)!r}; use another name, or rerun=True to replace it"
            )


def _check_same_settings(spec: PairSpec, report: Any, info: Mapping[str, Any]) -> None:
    """Refuse to reuse a stored report made with other settings than this pair's."""
    from heta_nb.runner.config import RunConfig
    from heta_nb.runner.plan import prepared_evaluators

    config = RunConfig(benchmark=spec.bench, kb=_NO_KB, knowledge_base_name=spec.recipe, **spec.settings)
    chosen = config.evaluators
    if chosen is None and hasattr(spec.bench, "evaluators"):
        chosen = spec.bench.evaluators()
    mine: dict[str, Any] = {
        "modes": list(config.modes),
        "top_k": config.top_k,
        "query_options": config.recorded_options,
        "trace": config.trace,
    }
    if chosen is not None:
        mine["evaluators"] = [e.name for e in prepared_evaluators(chosen)]
    theirs: dict[str, Any] = {"modes": list(report.query_modes)}
    theirs.update({k: info[k] for k in ("top_k", "query_options", "trace", "evaluators") if k in info})
    manifest = getattr(spec.bench, "manifest", None)
    if manifest is not None and getattr(manifest, "key", report.benchmark.key) != report.benchmark.key:
        mine["benchmark"], theirs["benchmark"] = manifest.key, report.benchmark.key
    for key in mine:
        if key in theirs and _plain(theirs[key]) != _plain(mine[key]):
            raise SweepError(
                f"{spec.label}: the store already holds report {spec.report_id!r} made with "
                f"{key}={_plain(theirs[key])!r}, this sweep has {key}={_plain(mine[key])!r}; pass rerun=True "
                "to replace it, or another name= to keep both"
            )


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _no_kb(query: str) -> list[Any]:  # pragma: no cover - never queried: only names a config
    return []


_NO_KB = _no_kb
