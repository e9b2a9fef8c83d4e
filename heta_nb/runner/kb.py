"""Knowledge bases as the runner sees them: one async call, and a normalised response.

``kb=`` accepts a Heta ``KnowledgeBase`` unchanged, any object with a sync or async
``query(query, *, mode, top_k, options, trace)``, or a plain function (sync or
async) taking the query text and, optionally, any of those keywords. Sync callables
run on a thread pool so a slow one neither blocks the event loop nor defeats the
per-query timeout.

What the KB returns may be a heta or heta_nb ``QueryResponse``, a mapping in the
serialized schema, a list of results (mappings, ``QueryResult`` objects or plain
strings), or a string (taken as the answer). Anything else becomes a per-case
:class:`InvalidResponseError`, never a crash.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import weakref
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from heta_nb._util.callables import accepted_keywords, is_async_callable
from heta_nb._util.text import describe_error
from heta_nb._util.values import NOT_NUMPY, numpy_item
from heta_nb.model.json import dict_is_json_object, heta_json_safe
from heta_nb.model.query import QueryResponse, QueryResult
from heta_nb.runner.errors import ExitRaised, RunError
from heta_nb.runner.interrupts import users_interrupt
from heta_nb.runner.plain_scores import RESULT_FIELDS as _RESULT_FIELDS
from heta_nb.runner.plain_scores import without_numpy_scores

__all__ = [
    "THREAD_LEFT_RUNNING",
    "ExitRaised",
    "call_left_thread",
    "InvalidResponseError",
    "KnowledgeBaseAdapter",
    "kb_attribute",
    "normalize_response",
    "normalize_response_data",
]

_QUERY_KEYWORDS = ("mode", "top_k", "options", "trace")
THREAD_LEFT_RUNNING = "the KB's thread was left running"
"""The message of the ``CancelledError`` that ends a call abandoned while its thread runs the KB."""
_SCALARS = (str, int, float, bool, type(None))
_LEFT_THREAD: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
"""Tasks whose call of a sync KB ended with its thread left running (see :func:`call_left_thread`)."""


def call_left_thread(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` (awaiting :meth:`KnowledgeBaseAdapter.in_thread`) left its KB thread running."""
    return task in _LEFT_THREAD


class InvalidResponseError(ValueError):
    """The KB returned something that is not a response (recorded per case)."""


def kb_attribute(kb: Any, name: str, default: Any = None, *, owner: str = "the knowledge base") -> Any:
    """``getattr(kb, name, default)``; a property that raises becomes a :class:`RunError` naming it.

    Raises:
        RunError: reading the attribute raised, whatever it raised (any ``BaseException``),
            e.g. ``the knowledge base (MyKB): reading its attribute 'name' raised RuntimeError: ...``.
            Except a ``KeyboardInterrupt`` on the main thread: attributes are read before the run
            watches for the user's Ctrl-C, which it may be, so it propagates as it is.
    """
    try:
        return getattr(kb, name, default)
    except BaseException as exc:
        if users_interrupt(exc, None):
            raise
        raise RunError(
            f"{owner} ({type(kb).__name__}): reading its attribute {name!r} raised "
            f"{type(exc).__name__}: {describe_error(exc) or '(no message)'}"
        ) from exc


class KnowledgeBaseAdapter:
    """Wraps ``kb`` so the runner can ``await adapter.query(text, mode=...)``.

    Args:
        kb: the knowledge base, object or function (see the module docstring).
        threads: size of the pool used for synchronous callables.
    """

    def __init__(self, kb: Any, *, threads: int = 8) -> None:
        self.kb = kb
        target: Callable[..., Any] | None
        query = kb_attribute(kb, "query")
        if callable(query):
            target = query
        elif callable(kb):
            target = kb
        else:
            raise TypeError(
                f"kb must be a Heta KnowledgeBase, an object with query(...), or a function; got {type(kb).__name__}"
            )
        self._target = target
        self.is_async = is_async_callable(target)
        accepted = accepted_keywords(target, _QUERY_KEYWORDS)
        self._keywords = accepted if accepted is not None else frozenset(_QUERY_KEYWORDS)  # unreadable: try all
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self.interrupted: Callable[[], bool] | None = None
        """Whether the run counted the user's Ctrl-C (set by the engine; see :func:`users_interrupt`)."""
        name = kb_attribute(kb, "name")
        self.name: str | None = name if isinstance(name, str) and name.strip() else None

    @property
    def available_modes(self) -> frozenset[str] | None:
        """The KB's ``available_queries`` when it declares them (Heta KBs do)."""
        modes = kb_attribute(self.kb, "available_queries")
        if isinstance(modes, (set, frozenset, list, tuple)):
            return frozenset(str(m) for m in modes)
        return None

    def manifest(self) -> dict[str, Any]:
        """``kb.manifest().to_dict()`` when the KB has one (Heta KBs), else a small stub."""
        try:  # a foreign manifest() must not stop the run, not even with sys.exit()
            manifest = getattr(self.kb, "manifest", None)
            if callable(manifest):
                value = manifest()
                value = value.to_dict() if hasattr(value, "to_dict") else value
                if isinstance(value, Mapping):
                    safe: dict[str, Any] = heta_json_safe(dict(value))
                    return safe
        except BaseException as exc:  # noqa: BLE001 - even gevent's Timeout: a stub stands in
            if users_interrupt(exc, self.interrupted):
                raise
        return {"name": self.name, "kind": type(self.kb).__name__}

    async def query(self, text: str, *, mode: str, top_k: int, options: Mapping[str, Any], trace: bool) -> Any:
        """Call the KB once and return whatever it returned."""
        result = await self.caller(mode, top_k=top_k, options=options, trace=trace)(text)
        if inspect.isawaitable(result):  # a sync wrapper returning a coroutine
            result = await result
        return result

    def caller(
        self, mode: str, *, top_k: int, options: Mapping[str, Any], trace: bool
    ) -> Callable[[str], Awaitable[Any]]:
        """A one-argument query function for ``mode``, its keywords bound once per run.

        Each call gets its own copy of ``options``, so a KB that changes them cannot
        affect the next query: a plain ``dict`` copy when every value is immutable
        (see :func:`_flat_options`, decided once here), else a ``copy.deepcopy``. Options
        that cannot be deep-copied (a client object, say) fall back to the plain copy.
        """
        flat = _flat_options(options)
        snapshot: dict[str, Any] = dict(options)
        if not flat:
            try:
                snapshot = copy.deepcopy(snapshot)
            except Exception:  # noqa: BLE001 - not copyable: share its values as before
                flat = True
        given: dict[str, Any] = {"mode": mode, "top_k": top_k, "options": snapshot, "trace": trace}
        kwargs = {k: v for k, v in given.items() if k in self._keywords}
        target = self._target
        copy_options: dict[str, Any] | None = kwargs.pop("options", None)
        if copy_options is not None and not flat:
            deep = copy.deepcopy
            nested = copy_options
            if self.is_async:
                return lambda text: target(text, options=deep(nested), **kwargs)
            return lambda text: self.in_thread(functools.partial(target, text, options=deep(nested), **kwargs))
        if self.is_async:
            if copy_options is None:
                return functools.partial(target, **kwargs)
            return lambda text: target(text, options=dict(copy_options), **kwargs)
        if copy_options is not None:
            return lambda text: self.in_thread(functools.partial(target, text, options=dict(copy_options), **kwargs))
        return lambda text: self.in_thread(functools.partial(target, text, **kwargs))

    async def in_thread(self, call: Callable[[], Any]) -> Any:
        """``call()`` on the pool; a call abandoned while it runs (a timeout) retires the pool.

        What ``call()`` returned, even an awaitable (a sync wrapper's coroutine): the caller
        awaits it (the runner as any call of user code, see :mod:`heta_nb.runner.user_calls`).

        Python cannot stop the thread of a sync KB that overruns its timeout. Left in the
        pool, it would hold a worker until it returns, and with ``concurrency=1`` every
        later query would time out waiting for it; the next query gets a fresh pool
        instead, and the old one ends as its threads return.
        """
        loop = asyncio.get_running_loop()
        pool = self._pool
        if pool is None:
            pool = self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="heta_nb-kb")
        running = _RunningCall(call)
        try:
            result = await loop.run_in_executor(pool, running)
        except asyncio.CancelledError:
            if running.state != "running":
                raise
            if self._pool is pool:  # its thread is stuck in the KB
                self._pool = None
                pool.shutdown(wait=False)
            task = asyncio.current_task()
            if task is not None:  # (Python 3.10 drops the message below when the task is awaited)
                _LEFT_THREAD.add(task)
            raise asyncio.CancelledError(THREAD_LEFT_RUNNING) from None
        return result

    def close(self) -> None:
        """Release the thread pool (threads stuck in a hung call are abandoned)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class _RunningCall:
    """A call for a pool thread that says whether it is ``queued``, ``running`` or ``done``."""

    __slots__ = ("call", "state")

    def __init__(self, call: Callable[[], Any]) -> None:
        self.call = call
        self.state = "queued"

    def __call__(self) -> Any:
        self.state = "running"
        try:
            return _call_in_thread(self.call)
        finally:
            self.state = "done"


def _call_in_thread(call: Callable[[], Any]) -> Any:
    """``call()`` on a pool thread, with ``StopIteration`` and exits made ordinary errors.

    A future cannot hold ``StopIteration`` (asyncio refuses to set it, and the query would never
    finish), so it and ``StopAsyncIteration`` become a ``RuntimeError`` naming them, with the
    original as ``__cause__``. Every other ``BaseException`` that is not an ``Exception``
    (``sys.exit()``'s ``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``, gevent's ``Timeout``...)
    travels as :class:`ExitRaised` (a ``GeneratorExit`` reaching the awaiting task would close its
    coroutine instead, a ``CancelledError`` would pass for a cancellation).
    """
    try:
        return call()
    except (StopIteration, StopAsyncIteration) as exc:
        detail = str(exc)
        name = type(exc).__name__
        raise RuntimeError(
            f"the knowledge base raised {name}: {detail}" if detail else f"the knowledge base raised {name}"
        ) from exc
    except Exception:
        raise
    except BaseException as exc:
        raise ExitRaised(exc, in_thread=True) from exc


def _flat_options(options: Mapping[str, Any]) -> bool:
    """Whether every value is None, a bool, int, float or str, or a tuple/frozenset of those."""
    for value in options.values():
        kind = type(value)
        if kind in _SCALAR_TYPES:
            continue
        if (kind is tuple or kind is frozenset) and all(type(item) in _SCALAR_TYPES for item in value):
            continue
        return False
    return True


# -- responses ------------------------------------------------------------------------


_SCALAR_TYPES = frozenset(_SCALARS)


def _safe_value(value: Any) -> Any:
    """Heta's ``_json_safe`` of one value, with fast paths for plain JSON shapes."""
    kind = type(value)
    if kind in _SCALAR_TYPES:
        return value
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _SCALAR_TYPES:
                return heta_json_safe(value)
        return list(value)
    if kind is dict:
        return _safe_mapping(value)
    return heta_json_safe(value)


def _safe_mapping(value: Any) -> dict[str, Any]:
    """Heta's ``_json_safe`` for a mapping (keys ``str()``-ed), fast for plain dicts."""
    if type(value) is not dict:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            safe: dict[str, Any] = heta_json_safe({"value": value})
            return safe
    result: dict[str, Any] = {}
    for key, item in value.items():
        result[key if type(key) is str else str(key)] = item if type(item) in _SCALAR_TYPES else _safe_value(item)
    return result


def _shared(value: Any) -> Any:
    return value


def registered_modes(kb: Any, recipe: Any, query_engines: Any) -> frozenset[str] | None:
    """The query modes Heta's query-engine registry of a run knows, when it can be told.

    ``query_engines`` when given; for a recipe, Heta's default registry (what a KB it
    builds queries with); for a Heta ``KnowledgeBase``, its own registry. None for
    other KBs (any mode name may be theirs).
    """
    registry = query_engines
    if registry is None and recipe is not None:
        try:
            from heta_framework.kb import QueryEngineRegistry
        except ImportError:
            return None
        registry = QueryEngineRegistry.defaults()
    elif registry is None and kb is not None:
        registry = kb_attribute(kb, "query_engines")
    modes = kb_attribute(registry, "modes", owner="the query-engine registry")
    if isinstance(modes, (set, frozenset)) and all(isinstance(m, str) for m in modes):
        return frozenset(modes)
    return None


_PLAIN_SCORES = frozenset((float, int, type(None)))


def _heta_response(raw: Any, mapping: Callable[[Any], Any]) -> dict[str, Any]:
    """A heta-framework QueryResponse (already validated by Heta) as report JSON.

    ``mapping`` converts every ``source`` and ``metadata``: :func:`_safe_mapping`
    applies Heta's ``_json_safe`` rules (copies), :func:`_shared` keeps them as they
    are. When sharing, a Heta ``QueryResult`` (a frozen dataclass whose fields are
    exactly a report result's keys, in order) is represented by its own
    ``__dict__``: no copy, nothing new for the garbage collector to track. Whether
    shared data is JSON is checked when the result is encoded; if not, the runner
    converts it again with :func:`_safe_mapping`.
    """
    items = raw.results
    if mapping is _shared and items and dict_is_json_object(type(items[0]), _RESULT_FIELDS):
        first = type(items[0])
        results = [r.__dict__ if type(r) is first else _heta_result(r, mapping) for r in items]
    else:
        results = [_heta_result(r, mapping) for r in items]
        if mapping is _safe_mapping:  # the converting path: numpy scores become plain numbers
            for result in results:
                if type(result["score"]) not in _PLAIN_SCORES:
                    plain = numpy_item(result["score"])
                    if plain is not NOT_NUMPY:
                        result["score"] = plain
    citations = raw.citations
    trace = raw.trace
    return {
        "mode": raw.mode,
        "results": results,
        "answer": raw.answer,
        "citations": [
            {
                "id": c.id,
                "result_id": c.result_id,
                "source": mapping(c.source),
                "text": c.text,
                "metadata": mapping(c.metadata),
            }
            for c in citations
        ]
        if citations
        else [],
        "trace": [{"stage": e.stage, "message": e.message, "metadata": mapping(e.metadata)} for e in trace]
        if trace
        else [],
        "metadata": mapping(raw.metadata),
    }


def _heta_result(r: Any, mapping: Callable[[Any], Any]) -> dict[str, Any]:
    return {
        "id": r.id,
        "text": r.text,
        "score": r.score,
        "kind": r.kind,
        "source": mapping(r.source),
        "metadata": mapping(r.metadata),
    }


def _is_heta_object(value: Any) -> bool:
    return type(value).__module__.startswith("heta_framework.")


def _result_from_item(item: Any, index: int) -> Any:
    if isinstance(item, str):
        return {"id": f"result_{index + 1}", "text": item}
    return item


_HETA_RESPONSE_TYPES: set[type] = set()
"""heta-framework QueryResponse classes seen so far (an exact type check is cheaper)."""


def normalize_response_data(raw: Any, mode: str, *, safe: bool = True) -> dict[str, Any]:
    """``normalize_response(raw, mode, safe=safe)``'s JSON, without a wrapper for Heta's responses."""
    if type(raw) in _HETA_RESPONSE_TYPES:
        try:
            return _heta_response(raw, _safe_mapping if safe else _shared)
        except (TypeError, ValueError, AttributeError) as exc:
            raise InvalidResponseError(f"the KB returned an invalid response: {exc}") from exc
    return normalize_response(raw, mode, safe=safe).raw


def normalize_response(raw: Any, mode: str, *, safe: bool = True) -> QueryResponse:
    """Turn what a KB returned into a validated heta_nb :class:`QueryResponse`.

    With ``safe=False`` a heta-framework response shares its ``source`` and
    ``metadata`` dicts (several times faster); the caller must then check that the
    result encodes as JSON and call again with ``safe=True`` if it does not.

    Raises:
        InvalidResponseError: with a message saying what was returned and what was
            expected (the runner records it as the case's error).
    """
    kind = type(raw)
    if kind in _HETA_RESPONSE_TYPES:
        return QueryResponse.from_raw(normalize_response_data(raw, mode, safe=safe))
    try:
        if isinstance(raw, QueryResponse):
            return raw
        if _is_heta_object(raw) and hasattr(raw, "results") and hasattr(raw, "mode"):
            if kind.__name__ == "QueryResponse":
                _HETA_RESPONSE_TYPES.add(kind)
            return QueryResponse.from_raw(_heta_response(raw, _safe_mapping if safe else _shared))
        if isinstance(raw, Mapping):
            data = dict(raw)
            data.setdefault("mode", mode)
            if "results" in data and isinstance(data["results"], (list, tuple)):
                data["results"] = [_result_from_item(item, i) for i, item in enumerate(data["results"])]
            return QueryResponse.coerce(data)
        if isinstance(raw, (list, tuple)):
            return QueryResponse(mode=mode, results=[_result_from_item(item, i) for i, item in enumerate(raw)])
        if isinstance(raw, QueryResult) or (
            hasattr(raw, "id") and hasattr(raw, "text") and not hasattr(raw, "results")
        ):
            return QueryResponse(mode=mode, results=[raw])
        if isinstance(raw, str):
            return QueryResponse(mode=mode, answer=raw)
        if hasattr(raw, "results") and hasattr(raw, "mode"):
            return QueryResponse.coerce(raw)
    except (TypeError, ValueError, AttributeError) as exc:
        plain = without_numpy_scores(raw)
        if plain is not None:  # numpy scores (np.float32...): validate again with plain numbers
            return normalize_response(plain, mode, safe=safe)
        raise InvalidResponseError(f"the KB returned an invalid response: {exc}") from exc
    raise InvalidResponseError(
        f"the KB returned {type(raw).__name__}; expected a QueryResponse, a mapping with 'results', "
        "a list of results or an answer string"
    )
