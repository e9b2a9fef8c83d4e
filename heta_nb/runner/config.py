"""A run's settings (:class:`RunConfig`), each documented once and checked when the config is made.

What needs the world to check (the KB, the store's reports) is checked by :mod:`heta_nb.runner.plan`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_nb.llm_judges.binding import JudgeSettings
from heta_nb.model.json import to_json_value
from heta_nb.runner.errors import RunError
from heta_nb.runner.redaction import recorded_options

__all__ = ["RUNNER_METADATA", "RunConfig"]

RUNNER_METADATA = frozenset(("heta_nb", "run_units", "benchmark_document_keys"))
"""The report's metadata keys the runner writes (Heta writes the last two)."""


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """A run's settings, validated when the config is made (a bad one raises :class:`RunError`).

    ``heta_nb.evaluate``, ``evaluate_async`` and ``start`` take the same settings as
    keyword arguments, documented by the field docstrings below (tests/api/test_docs.py
    checks them and, with ``HETA_UPDATE_DOCS=1``, rewrites heta_nb/api/ from them).
    The fields after ``lint`` are the checked forms the engine reads.
    """

    benchmark: Any
    """a heta_nb ``Benchmark``, a benchmark folder (Heta JSONL, BEIR or
    MultiHop-RAG), or any Heta ``BenchmarkProtocol`` object."""
    kb: Any = None
    """the knowledge base: a Heta ``KnowledgeBase``, an object with a sync or async
    ``query(query, *, mode, top_k, options, trace)``, or a plain function.
    Pass exactly one of ``kb`` and ``recipe``."""
    recipe: Any = None
    """instead of ``kb``, a Heta ``KnowledgeRecipe``: one KB is built per run
    unit, exactly as Heta's runner does, with build progress reported."""
    query_modes: Sequence[str] | str = ("full_text_search",)
    """the mode (a string) or modes to query; default
    ``("full_text_search",)``. With a Heta KB or recipe, a mode that looks like
    a misspelling of a registered one is refused before any work; another
    unregistered mode is warned about and its cases are recorded as errors."""
    evaluators: Sequence[Any] | None = None
    """evaluator objects, functions or names (``"evidence_recall@5"``,
    ``"ndcg@10"``, ``"answer_f1"``..., see :func:`heta_nb.evaluators.get`);
    default: the benchmark's own."""
    top_k: int = 10
    """passed to every query (as Heta does); default ``10``. The report
    records it in ``metadata.heta_nb``."""
    query_options: Mapping[str, Any] | None = None
    """passed to every query (as Heta does); default ``{}``. The report
    records them in ``metadata.heta_nb``, with the values of secret-looking
    keys (``api_key``, ``password``, ``token``...) as ``"<redacted>"``."""
    trace: bool = False
    """passed to every query (as Heta does); default ``False``. The report
    records it in ``metadata.heta_nb``."""
    concurrency: int = 8
    """queries in flight at once (default 8, as Heta); with ``executor``, per Dask worker thread."""
    executor: Any = None
    """None (default: this process), ``"dask"`` (a Dask ``LocalCluster``
    of one single-threaded worker process per CPU, closed after the run) or a
    ``dask.distributed.Client``: cases go to the workers in batches and the
    report is the one a local run gives. Each worker unpickles the KB once per
    run unit (a ``kb=`` object or function, or the unit's built Heta KB,
    sent by cloudpickle); a Heta KB that cannot be pickled is loaded once per
    worker from its recipe's object store, which must be on a shared path.
    The report's ``metadata.heta_nb.executor`` records it. Needs the
    ``[dask]`` extra."""
    timeout_s: float | None = 60.0
    """per-query timeout in seconds (default 60; None: no timeout).
    Timeouts count as retryable. It covers the KB call only (see
    ``evaluator_timeout_s``). Python cannot stop a thread: a sync KB that
    overruns runs on in its thread until it returns (later queries get fresh
    threads, and the interpreter waits for it at exit); an async KB that
    swallows the cancellation is recorded as it returns; an async KB that
    blocks the event loop (``time.sleep`` inside ``async def``) past its
    timeout is recorded as a timeout that names the cause (not retried), and
    a warning says so once per run."""
    evaluator_timeout_s: float | str | None = "timeout_s"
    """seconds one async evaluator may take for one case; default
    ``"timeout_s"``: the query's timeout (None: no limit). An evaluator that
    takes longer is recorded as that score's error (value ``"error"``,
    ``metadata.error.type`` ``TimeoutError``); the case keeps its response
    and other scores. A sync evaluator runs on the event loop and cannot be
    stopped: one that blocks it longer is recorded the same way once it
    returns."""
    retries: int = 2
    """retries for retryable errors (``exc.retryable is True``, timeouts, or
    ``retry_on`` classes); default 2."""
    backoff_s: float = 0.5
    """seconds to wait before a retry, doubled each retry
    (``backoff_s * 2**attempt``); default 0.5 s."""
    retry_on: tuple[type[BaseException], ...] = ()
    """extra exception classes to retry (default: none)."""
    store: Any = "auto"
    """a ``ReportStore``, folder, fsspec URL or Heta ObjectStore; ``None`` keeps
    the report in memory. Default ``"auto"``: the recipe's (or a Heta KB's
    recipe's) object store, or in memory for other KBs. A local path that
    is a file is refused."""
    report_id: str | None = None
    """default ``eval_<32 hex>`` like Heta. With a store it must be a safe
    store key (no ``/``, ``\\``, ``..``, NUL...)."""
    knowledge_base_name: str | None = None
    """the (base) KB name; default the KB's own name (a
    function's ``__name__``)."""
    resume: bool = False
    """finish an interrupted run with the same ``report_id`` from its checkpoint
    (or from its stored report); its settings must match. Needs a store."""
    overwrite: bool = False
    """replace an existing report with this ``report_id`` (or discard the
    checkpoint an interrupted run left; without ``resume`` or ``overwrite`` both
    are refused, so nothing finished is lost)."""
    shard: tuple[int, int] | None = None
    """``(index, count)``: run a stable subset; combine the shard reports with
    ``heta_nb.merge_reports([...])``."""
    metadata: Mapping[str, Any] | None = None
    """JSON-safe run metadata (checked before the first query; the keys
    ``heta_nb``, ``run_units`` and ``benchmark_document_keys`` are the runner's)."""
    query_engines: Any = None
    """a Heta ``QueryEngineRegistry`` for recipe-built KBs (replaces
    Heta's default registry, as in Heta)."""
    reuse_kb: bool = True
    """with ``recipe``, load a KB that already finished building in the store
    instead of failing (default True; see the README)."""
    workspace: Any = None
    """the folder a Heta ``BenchmarkProtocol`` object prepares its files in
    (default: ``heta_nb-workspace-<uid>`` in the temporary folder)."""
    lint: bool = True
    """warn before the first query about cases the chosen evaluators cannot
    score (no gold evidence or answers...); default True."""
    judge_model: Any = None
    """the language model of the LLM judges (``faithfulness``,
    ``answer_correctness``, ``heta_nb.judge(...)``...): any object following
    Heta's ``LanguageModelProtocol`` (its LiteLLM-backed ``LanguageModel``
    reaches OpenAI, Anthropic, Ollama, vLLM or any OpenAI-compatible server), a
    function or coroutine from prompt to text, or a ``heta_nb.JudgeModel``. A
    judge given its own ``model=`` keeps it."""
    judge_cache: Any = "auto"
    """where judges keep the model's answers: a folder, ``"replay"`` (a
    miss is an error: CI replays a recorded run without a key), ``"refresh"``
    (ask again, keep the new answers), a ``heta_nb.JudgeCache`` or None (no
    cache). Default ``"auto"``: ``_heta_nb/judge_cache`` beside a local store,
    else ``~/.cache/heta_nb/judge_cache``."""
    judge_limits: Any = None
    """a ``heta_nb.JudgeLimits`` (or a mapping of its fields): judge calls in
    flight (default 16), requests and tokens per minute, a call's timeout,
    retries and backoff; 429s wait as ``Retry-After`` says."""
    judge_prices: Mapping[str, Any] | None = None
    """dollars per million tokens by judge model name,
    ``{"openai/gpt-4o-mini": {"input": 0.15, "output": 0.6}}``; models not
    in it are priced from LiteLLM's offline map when LiteLLM is installed,
    else their cost reads unknown (never $0)."""
    max_cost: float | None = None
    """stop the run once the judges have spent this many dollars: the
    report is partial and says why (needs a known price)."""
    repeats: int = 1
    """judge each case this many times; the score is their mean and its
    metadata keeps each verdict and their agreement (default 1)."""

    modes: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """``query_modes`` as a tuple of stripped mode names."""
    retry_types: tuple[type[BaseException], ...] = field(init=False, repr=False, compare=False)
    """``retry_on`` as a tuple (one class given alone counts as a tuple of one)."""
    evaluator_timeout: float | None = field(init=False, repr=False, compare=False)
    """``evaluator_timeout_s`` as seconds (``"timeout_s"`` resolved)."""
    metadata_json: dict[str, Any] = field(init=False, repr=False, compare=False)
    """``metadata`` as plain JSON (a copy)."""
    query_options_json: dict[str, Any] = field(init=False, repr=False, compare=False)
    """``query_options`` as plain JSON (a copy): what every query gets."""
    recorded_options: dict[str, Any] = field(init=False, repr=False, compare=False)
    """``query_options`` as reports and checkpoints record them: secret-looking keys' values redacted."""
    judges: JudgeSettings = field(init=False, repr=False, compare=False)
    """The ``judge_*`` settings, ``max_cost`` and ``repeats``, checked."""

    def __post_init__(self) -> None:
        """Check every setting that needs nothing else; fill in the checked forms."""
        if self.kb is None and self.recipe is None:
            raise RunError(
                "no knowledge base to evaluate: pass exactly one of kb= (a Heta KnowledgeBase, an object with "
                "query(...), or a function) or recipe= (a Heta KnowledgeRecipe)"
            )
        if self.kb is not None and self.recipe is not None:
            raise RunError(
                "got both kb= and recipe=: pass exactly one of kb= (a knowledge base) or recipe= (it builds its own KB)"
            )
        object.__setattr__(self, "modes", _modes(self.query_modes))
        for name, value, low in (
            ("top_k", self.top_k, 1),
            ("concurrency", self.concurrency, 1),
            ("retries", self.retries, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise RunError(f"{name} must be an integer >= {low}, got {value!r}")
        timeout_s = self.timeout_s
        if timeout_s is not None and not (
            isinstance(timeout_s, (int, float)) and not isinstance(timeout_s, bool) and timeout_s > 0
        ):
            raise RunError(f"timeout_s must be a positive number or None, got {timeout_s!r}")
        object.__setattr__(self, "evaluator_timeout", _evaluator_timeout(self.evaluator_timeout_s, timeout_s))
        backoff_s = self.backoff_s
        if isinstance(backoff_s, bool) or not isinstance(backoff_s, (int, float)) or not 0 <= backoff_s < float("inf"):
            raise RunError(f"backoff_s must be a finite number >= 0, got {backoff_s!r}")
        retry_on: Any = (self.retry_on,) if isinstance(self.retry_on, type) else self.retry_on
        if not isinstance(retry_on, (tuple, list)) or not all(
            isinstance(kind, type) and issubclass(kind, BaseException) for kind in retry_on
        ):
            raise RunError(f"retry_on must be exception classes (a tuple of them), got {self.retry_on!r}")
        object.__setattr__(self, "retry_types", tuple(retry_on))
        _check_executor(self.executor)
        shard: Any = self.shard
        if shard is not None and not (
            isinstance(shard, tuple)
            and len(shard) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in shard)
            and shard[1] >= 1
            and 0 <= shard[0] < shard[1]
        ):
            raise RunError(f"shard must be (index, count) with 0 <= index < count, got {shard!r}")
        metadata = _json_setting(self.metadata, "metadata")
        reserved = sorted(set(metadata) & RUNNER_METADATA)
        if reserved:
            raise RunError(f"metadata keys {reserved} are written by the runner; use other names")
        object.__setattr__(self, "metadata_json", metadata)
        query_options = _json_setting(self.query_options, "query_options")
        object.__setattr__(self, "query_options_json", query_options)
        object.__setattr__(self, "recorded_options", recorded_options(query_options))
        if self.report_id and not self.report_id.strip():
            raise RunError("report_id must not be blank")
        try:
            judges = JudgeSettings.make(
                model=self.judge_model,
                cache=self.judge_cache,
                limits=self.judge_limits,
                prices=self.judge_prices,
                max_cost=self.max_cost,
                repeats=self.repeats,
            )
        except (TypeError, ValueError) as exc:
            raise RunError(str(exc)) from None
        object.__setattr__(self, "judges", judges)


def _check_executor(value: Any) -> None:
    """Refuse an ``executor`` that is not None, ``"dask"`` or a ``dask.distributed.Client``."""
    if value is None:
        return
    if isinstance(value, str) and value == "dask":
        from heta_nb._util.optional import require

        require("distributed", extra="dask", purpose='executor="dask"')
        return
    kind = type(value)
    if kind.__name__ == "Client" and kind.__module__.split(".")[0] == "distributed":
        return
    raise RunError(
        'executor must be None, "dask" or a dask.distributed.Client (with the [dask] extra: '
        f"pip install 'heta-nb[dask]'), got {value!r}"
    )


def _evaluator_timeout(value: float | str | None, timeout_s: float | None) -> float | None:
    """``evaluator_timeout_s`` in seconds, or a :class:`RunError` saying what is wrong with it."""
    if isinstance(value, str) and value == "timeout_s":
        return None if timeout_s is None else float(timeout_s)
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    raise RunError(f'evaluator_timeout_s must be a positive number, None or "timeout_s", got {value!r}')


def _modes(query_modes: Sequence[str] | str) -> tuple[str, ...]:
    """The mode names, stripped; a :class:`RunError` for none, a non-name or a duplicate."""
    modes = [query_modes] if isinstance(query_modes, str) else list(query_modes or ())
    if not modes:
        raise RunError("query_modes must name at least one mode")
    for mode in modes:
        if not isinstance(mode, str) or not mode.strip():
            raise RunError(f"query_modes: {mode!r} is not a mode name")
    modes = [m.strip() for m in modes]
    if len(set(modes)) != len(modes):
        raise RunError(f"query_modes contains duplicates: {modes}")
    return tuple(modes)


def _json_setting(value: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    """A mapping setting as JSON, or a :class:`RunError` saying what is wrong with it."""
    if value is not None and not isinstance(value, Mapping):
        raise RunError(f"{name} must be a mapping, got {type(value).__name__}")
    try:
        converted: dict[str, Any] = to_json_value(dict(value or {}), name)
    except (TypeError, ValueError) as exc:
        raise RunError(str(exc)) from None
    except RecursionError:
        raise RunError(f"{name} is nested too deeply or contains itself") from None
    return converted
