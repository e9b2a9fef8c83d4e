"""``heta_nb.start``: an evaluation in the background, returning its run handle."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from heta_nb.api.views import ViewOptions, start_run
from heta_nb.progress.choose import Progress
from heta_nb.runner.config import RunConfig
from heta_nb.runner.events import Event
from heta_nb.runner.handle import EvaluationRun

__all__ = ["start"]


def start(
    benchmark: Any,
    *,
    kb: Any = None,
    recipe: Any = None,
    query_modes: Sequence[str] | str = ("full_text_search",),
    evaluators: Sequence[Any] | None = None,
    top_k: int = 10,
    query_options: Mapping[str, Any] | None = None,
    trace: bool = False,
    concurrency: int = 8,
    executor: Any = None,
    timeout_s: float | None = 60.0,
    evaluator_timeout_s: float | str | None = "timeout_s",
    retries: int = 2,
    backoff_s: float = 0.5,
    retry_on: tuple[type[BaseException], ...] = (),
    store: Any = "auto",
    report_id: str | None = None,
    knowledge_base_name: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    shard: tuple[int, int] | None = None,
    metadata: Mapping[str, Any] | None = None,
    query_engines: Any = None,
    reuse_kb: bool = True,
    workspace: Any = None,
    lint: bool = True,
    judge_model: Any = None,
    judge_cache: Any = "auto",
    judge_limits: Any = None,
    judge_prices: Mapping[str, Any] | None = None,
    max_cost: float | None = None,
    repeats: int = 1,
    progress: Progress = True,
    on_event: Callable[[Event], None] | None = None,
    record_events: bool = False,
) -> EvaluationRun:
    """Start an evaluation in the background and return its :class:`EvaluationRun`.

    The caller stays free (in a notebook, other cells run meanwhile). The settings,
    names, store, metadata and given evaluators are validated before this returns
    (the benchmark is loaded in the background: its problems, and those of its own
    evaluators, are raised by ``run.result()``, still before any query);
    ``run.result()`` waits for the report. ``run.state`` is the live progress,
    ``run.cancel()`` stops the run (``result()`` then returns the partial report) and
    ``await run`` waits without blocking the event loop. With ``record_events=True``
    (only here) every event is also kept in ``run.events``.

    Example::

        run = heta_nb.start(demo.load_benchmark(), kb=my_kb, evaluators=["recall@5"], store=None)
        run.state.done, run.state.total   # while it runs
        report = run.result()

    Args:
        benchmark: a heta_nb ``Benchmark``, a benchmark folder (Heta JSONL, BEIR or
            MultiHop-RAG), or any Heta ``BenchmarkProtocol`` object.
        kb: the knowledge base: a Heta ``KnowledgeBase``, an object with a sync or async
            ``query(query, *, mode, top_k, options, trace)``, or a plain function.
            Pass exactly one of ``kb`` and ``recipe``.
        recipe: instead of ``kb``, a Heta ``KnowledgeRecipe``: one KB is built per run
            unit, exactly as Heta's runner does, with build progress reported.
        query_modes: the mode (a string) or modes to query; default
            ``("full_text_search",)``. With a Heta KB or recipe, a mode that looks like
            a misspelling of a registered one is refused before any work; another
            unregistered mode is warned about and its cases are recorded as errors.
        evaluators: evaluator objects, functions or names (``"evidence_recall@5"``,
            ``"ndcg@10"``, ``"answer_f1"``..., see :func:`heta_nb.evaluators.get`);
            default: the benchmark's own.
        top_k: passed to every query (as Heta does); default ``10``. The report
            records it in ``metadata.heta_nb``.
        query_options: passed to every query (as Heta does); default ``{}``. The report
            records them in ``metadata.heta_nb``, with the values of secret-looking
            keys (``api_key``, ``password``, ``token``...) as ``"<redacted>"``.
        trace: passed to every query (as Heta does); default ``False``. The report
            records it in ``metadata.heta_nb``.
        concurrency: queries in flight at once (default 8, as Heta); with ``executor``, per Dask worker thread.
        executor: None (default: this process), ``"dask"`` (a Dask ``LocalCluster``
            of one single-threaded worker process per CPU, closed after the run) or a
            ``dask.distributed.Client``: cases go to the workers in batches and the
            report is the one a local run gives. Each worker unpickles the KB once per
            run unit (a ``kb=`` object or function, or the unit's built Heta KB,
            sent by cloudpickle); a Heta KB that cannot be pickled is loaded once per
            worker from its recipe's object store, which must be on a shared path.
            The report's ``metadata.heta_nb.executor`` records it. Needs the
            ``[dask]`` extra.
        timeout_s: per-query timeout in seconds (default 60; None: no timeout).
            Timeouts count as retryable. It covers the KB call only (see
            ``evaluator_timeout_s``). Python cannot stop a thread: a sync KB that
            overruns runs on in its thread until it returns (later queries get fresh
            threads, and the interpreter waits for it at exit); an async KB that
            swallows the cancellation is recorded as it returns; an async KB that
            blocks the event loop (``time.sleep`` inside ``async def``) past its
            timeout is recorded as a timeout that names the cause (not retried), and
            a warning says so once per run.
        evaluator_timeout_s: seconds one async evaluator may take for one case; default
            ``"timeout_s"``: the query's timeout (None: no limit). An evaluator that
            takes longer is recorded as that score's error (value ``"error"``,
            ``metadata.error.type`` ``TimeoutError``); the case keeps its response
            and other scores. A sync evaluator runs on the event loop and cannot be
            stopped: one that blocks it longer is recorded the same way once it
            returns.
        retries: retries for retryable errors (``exc.retryable is True``, timeouts, or
            ``retry_on`` classes); default 2.
        backoff_s: seconds to wait before a retry, doubled each retry
            (``backoff_s * 2**attempt``); default 0.5 s.
        retry_on: extra exception classes to retry (default: none).
        store: a ``ReportStore``, folder, fsspec URL or Heta ObjectStore; ``None`` keeps
            the report in memory. Default ``"auto"``: the recipe's (or a Heta KB's
            recipe's) object store, or in memory for other KBs. A local path that
            is a file is refused.
        report_id: default ``eval_<32 hex>`` like Heta. With a store it must be a safe
            store key (no ``/``, ``\\``, ``..``, NUL...).
        knowledge_base_name: the (base) KB name; default the KB's own name (a
            function's ``__name__``).
        resume: finish an interrupted run with the same ``report_id`` from its checkpoint
            (or from its stored report); its settings must match. Needs a store.
        overwrite: replace an existing report with this ``report_id`` (or discard the
            checkpoint an interrupted run left; without ``resume`` or ``overwrite`` both
            are refused, so nothing finished is lost).
        shard: ``(index, count)``: run a stable subset; combine the shard reports with
            ``heta_nb.merge_reports([...])``.
        metadata: JSON-safe run metadata (checked before the first query; the keys
            ``heta_nb``, ``run_units`` and ``benchmark_document_keys`` are the runner's).
        query_engines: a Heta ``QueryEngineRegistry`` for recipe-built KBs (replaces
            Heta's default registry, as in Heta).
        reuse_kb: with ``recipe``, load a KB that already finished building in the store
            instead of failing (default True; see the README).
        workspace: the folder a Heta ``BenchmarkProtocol`` object prepares its files in
            (default: ``heta_nb-workspace-<uid>`` in the temporary folder).
        lint: warn before the first query about cases the chosen evaluators cannot
            score (no gold evidence or answers...); default True.
        judge_model: the language model of the LLM judges (``faithfulness``,
            ``answer_correctness``, ``heta_nb.judge(...)``...): any object following
            Heta's ``LanguageModelProtocol`` (its LiteLLM-backed ``LanguageModel``
            reaches OpenAI, Anthropic, Ollama, vLLM or any OpenAI-compatible server), a
            function or coroutine from prompt to text, or a ``heta_nb.JudgeModel``. A
            judge given its own ``model=`` keeps it.
        judge_cache: where judges keep the model's answers: a folder, ``"replay"`` (a
            miss is an error: CI replays a recorded run without a key), ``"refresh"``
            (ask again, keep the new answers), a ``heta_nb.JudgeCache`` or None (no
            cache). Default ``"auto"``: ``_heta_nb/judge_cache`` beside a local store,
            else ``~/.cache/heta_nb/judge_cache``.
        judge_limits: a ``heta_nb.JudgeLimits`` (or a mapping of its fields): judge calls in
            flight (default 16), requests and tokens per minute, a call's timeout,
            retries and backoff; 429s wait as ``Retry-After`` says.
        judge_prices: dollars per million tokens by judge model name,
            ``{"openai/gpt-4o-mini": {"input": 0.15, "output": 0.6}}``; models not
            in it are priced from LiteLLM's offline map when LiteLLM is installed,
            else their cost reads unknown (never $0).
        max_cost: stop the run once the judges have spent this many dollars: the
            report is partial and says why (needs a known price).
        repeats: judge each case this many times; the score is their mean and its
            metadata keeps each verdict and their agreement (default 1).
        progress: True (default: widget in notebooks, console elsewhere), False,
            ``"widget"``, ``"console"`` or a callable receiving each event.
        on_event: an extra callable receiving each event.
        record_events: also keep every event in ``run.events`` (``start`` only).

    Raises:
        heta_nb.runner.RunError: a bad setting (a ``ValueError``), before any work.
        heta_nb.errors.HetaNbError: an unsafe name (``UnsafeNameError``), a store that
            cannot be used (``StoreError``), an existing report or checkpoint under
            this ``report_id`` (``ReportExistsError``) or another run writing it right
            now (``ReportInUseError``, local stores), before any work.
        ValueError, TypeError: an unknown evaluator name or a KB that cannot be
            queried, before any work.
    """
    config = RunConfig(
        benchmark=benchmark,
        kb=kb,
        recipe=recipe,
        query_modes=query_modes,
        evaluators=evaluators,
        top_k=top_k,
        query_options=query_options,
        trace=trace,
        concurrency=concurrency,
        executor=executor,
        timeout_s=timeout_s,
        evaluator_timeout_s=evaluator_timeout_s,
        retries=retries,
        backoff_s=backoff_s,
        retry_on=retry_on,
        store=store,
        report_id=report_id,
        knowledge_base_name=knowledge_base_name,
        resume=resume,
        overwrite=overwrite,
        shard=shard,
        metadata=metadata,
        query_engines=query_engines,
        reuse_kb=reuse_kb,
        workspace=workspace,
        lint=lint,
        judge_model=judge_model,
        judge_cache=judge_cache,
        judge_limits=judge_limits,
        judge_prices=judge_prices,
        max_cost=max_cost,
        repeats=repeats,
    )
    return start_run(config, ViewOptions(progress=progress, on_event=on_event, record_events=record_events))
