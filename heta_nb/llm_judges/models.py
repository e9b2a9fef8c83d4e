"""The language model a judge calls: Heta's ``LanguageModelProtocol`` or a plain function.

:class:`JudgeModel` turns either into one call, ``complete(system, prompt)``, that
returns a :class:`Completion` (the text and the tokens the model reported) or raises
:class:`ModelCallError`, which says whether the failure is worth retrying (429,
overloaded, 5xx, timeouts) and how long the provider asked to wait (``Retry-After``).

A model's :attr:`JudgeModel.identity` is everything about it that changes its answers
(its name, the server it reaches, its sampling settings): the cache key and the judge's
version are made from it. A plain function has no settings heta_nb can see, so its
identity is its name (``JudgeModel(fn, name="my-judge-v2")`` when its behaviour changes).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from heta_nb._util.callables import accepted_keywords, is_async_callable

__all__ = ["Completion", "JudgeModel", "ModelCallError", "as_judge_model", "call_failure"]

_RETRY_STATUS = frozenset((408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529))
"""HTTP statuses worth another try: throttled, overloaded, or a server's passing failure."""


@dataclass(frozen=True)
class Completion:
    """What the model answered: its text and the tokens it reported (None: not reported)."""

    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None


class ModelCallError(Exception):
    """A model call that failed: ``retryable`` (throttling, overload, 5xx, timeout) or not.

    ``retry_after`` is the wait in seconds the provider asked for (``Retry-After``), if any;
    ``status`` the HTTP status, when one was seen.
    """

    def __init__(
        self, message: str, *, retryable: bool, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        value = headers.get(name)
        if value is None:
            value = headers.get(name.lower())
    except (AttributeError, TypeError):
        return None
    return None if value is None else str(value)


def _retry_after(headers: Any) -> float | None:
    """Seconds from a ``Retry-After`` (or ``retry-after-ms``) header; None when absent or a date."""
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = _header(headers, "Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: the backoff's own wait is used


def call_failure(exc: BaseException) -> ModelCallError:
    """Describe a failed call: walk the exception's causes for an HTTP status and ``Retry-After``.

    Heta's client raises ``ModelRequestError`` whose ``__cause__`` is LiteLLM's exception
    (``status_code``, ``response.headers`` or ``litellm_response_headers``); a plain
    function may raise anything. Timeouts are retryable; so is any exception whose
    ``retryable`` attribute is True.
    """
    status: int | None = None
    retry_after: float | None = None
    timeout = False
    retryable_flag = False
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in type(current).__name__:
            timeout = True
        if getattr(current, "retryable", None) is True:
            retryable_flag = True
        code = getattr(current, "status_code", None)
        if isinstance(code, int) and status is None:
            status = code
        # LiteLLM keeps the server's headers in ``litellm_response_headers`` (its ``response`` is one
        # it built, without them); the openai error further down has the real ``response.headers``
        for headers in (
            getattr(current, "litellm_response_headers", None),
            getattr(getattr(current, "response", None), "headers", None),
        ):
            wait = _retry_after(headers)
            if wait is not None and retry_after is None:
                retry_after = wait
        current = current.__cause__ or current.__context__
    retryable = timeout or retryable_flag or (status in _RETRY_STATUS)
    kind = "timed out" if timeout else (f"HTTP {status}" if status is not None else type(exc).__name__)
    detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    cause = exc.__cause__
    if cause is not None and str(cause).strip():
        detail += f" ({type(cause).__name__}: {str(cause).strip().splitlines()[0][:300]})"
    return ModelCallError(
        f"model call failed, {kind}: {detail}", retryable=retryable, retry_after=retry_after, status=status
    )


def _tokens(usage: Any, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, Mapping) else getattr(usage, key, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _completion(result: Any, who: str) -> Completion:
    """A :class:`Completion` from what a model or function returned (text, a ModelResult, a mapping)."""
    if isinstance(result, str):
        return Completion(result)
    if isinstance(result, Mapping):
        text = result.get("text")
        usage = result.get("token_usage") or result
        in_key, out_key = (
            ("prompt_tokens", "completion_tokens") if "prompt_tokens" in usage else ("tokens_in", "tokens_out")
        )
    else:
        text = getattr(result, "text", None)
        usage = getattr(result, "token_usage", None) or {}
        in_key, out_key = "prompt_tokens", "completion_tokens"
    if not isinstance(text, str):
        raise ModelCallError(
            f"{who} returned {type(result).__name__}, not text (a str, or an object with .text)", retryable=False
        )
    return Completion(text, _tokens(usage, in_key), _tokens(usage, out_key))


class JudgeModel:
    """A judge's language model: Heta's ``LanguageModelProtocol`` or a function from prompt to text.

    Args:
        model: an object with ``model_name`` and ``async invoke(ModelRequest)`` (Heta's
            ``LanguageModel``, which reaches OpenAI, Anthropic, Ollama, vLLM or any
            OpenAI-compatible server through LiteLLM); or a function or coroutine function
            ``f(prompt) -> str`` (it gets the instructions and the material as one prompt,
            or them apart if it has a ``system`` parameter). It may also return a Heta
            ``ModelResult`` or ``{"text", "tokens_in", "tokens_out"}``.
        name: the model's name in reports and in the cache key (default: ``model_name``,
            or the function's qualified name).
        temperature: asked of a Heta model (default 0.0, the most repeatable).
        max_output_tokens: asked of a Heta model (default None: the provider's).
        json_mode: ask a Heta model for a JSON object (``response_format``; default True).
    """

    def __init__(
        self,
        model: Any,
        *,
        name: str | None = None,
        temperature: float | None = 0.0,
        max_output_tokens: int | None = None,
        json_mode: bool = True,
    ) -> None:
        if isinstance(model, JudgeModel):
            raise TypeError("model is already a JudgeModel")
        self.model = model
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.json_mode = json_mode
        self.is_protocol = callable(getattr(model, "invoke", None)) and hasattr(model, "model_name")
        if not self.is_protocol and not callable(model):
            raise TypeError(
                f"judge_model must follow Heta's LanguageModelProtocol (model_name, async invoke) or be a "
                f"function from prompt to text, not {type(model).__name__}"
            )
        if self.is_protocol:
            default = str(model.model_name)
        else:
            default = getattr(model, "__qualname__", None) or type(model).__qualname__
            if default == "<lambda>" and name is None:
                raise ValueError("give a lambda judge model a name: JudgeModel(fn, name='...')")
        self.name = (name or default).strip()
        if not self.name:
            raise ValueError("a judge model needs a non-blank name")
        self._is_async = not self.is_protocol and is_async_callable(model)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        """Per event loop, a copy of a Heta model (see :meth:`_client`)."""
        keywords = None if self.is_protocol else accepted_keywords(model, ("system",))
        self._takes_system = bool(keywords)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_clients"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._clients = weakref.WeakKeyDictionary()

    def _client(self) -> Any:
        """The Heta model to call on this event loop.

        Heta's ``LanguageModel`` makes an ``asyncio.Semaphore`` when it is created, and the
        semaphore belongs to the first loop that waits on it; every heta_nb run has a loop of
        its own, so a second run would fail ("bound to a different event loop"). A model
        that can be rebuilt from its settings (``type(model).from_config(model.config)``) is
        copied once per loop; the given object itself is never called, nor changed.
        """
        model = self.model
        config = getattr(model, "config", None)
        make = getattr(type(model), "from_config", None)
        if config is None or make is None:
            return model
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = make(config)
        return client

    def __repr__(self) -> str:
        kind = "Heta model" if self.is_protocol else "function"
        return f"JudgeModel({self.name!r}, {kind})"

    @property
    def identity(self) -> dict[str, Any]:
        """What changes the model's answers (no secrets): the cache key and judge version use it."""
        identity: dict[str, Any] = {"name": self.name}
        if self.is_protocol:
            config = getattr(self.model, "config", None)
            identity["class"] = f"{type(self.model).__module__}.{type(self.model).__qualname__}"
            identity["temperature"] = self._temperature(config)
            identity["max_output_tokens"] = self.max_output_tokens
            identity["json_mode"] = self.json_mode
            if config is not None:
                identity["api_base"] = getattr(config, "api_base", None)
                options = getattr(config, "provider_options", None)
                identity["provider_options"] = _plain(options) if options else None
        return identity

    def _temperature(self, config: Any) -> float | None:
        if self.temperature is not None:
            return self.temperature
        return getattr(config, "default_temperature", None)

    async def complete(self, system: str, prompt: str) -> Completion:
        """Ask the model once; a failure becomes :class:`ModelCallError`."""
        try:
            if self.is_protocol:
                result = await self._client().invoke(self._request(system, prompt))
                return _completion(result, f"model {self.name!r}")
            if self._takes_system:
                result = self.model(prompt, system=system)
            else:
                result = self.model(f"{system}\n\n{prompt}")
            if self._is_async or inspect.isawaitable(result):
                result = await result
            return _completion(result, f"judge model {self.name!r}")
        except (asyncio.CancelledError, ModelCallError):
            raise
        except Exception as exc:  # noqa: BLE001 - any model failure is described, then retried or recorded
            raise call_failure(exc) from exc

    def _request(self, system: str, prompt: str) -> Any:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM must not fetch its price map
        from heta_framework.common.models.language.types import ModelOptions, ModelRequest

        options = ModelOptions(
            temperature=self.temperature,
            max_output_tokens=self.max_output_tokens,
            response_format={"type": "json_object"} if self.json_mode else None,
        )
        return ModelRequest(prompt=prompt, system_prompt=system, options=options)


def _plain(value: Any) -> Any:
    """A JSON-like copy (for the identity): mappings and sequences of plain values, else repr."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda item: str(item[0]))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def as_judge_model(model: Any) -> JudgeModel | None:
    """``model`` as a :class:`JudgeModel` (None stays None)."""
    if model is None or isinstance(model, JudgeModel):
        return model
    if callable(model) or hasattr(model, "invoke"):
        return JudgeModel(model)
    raise TypeError(
        f"judge_model must follow Heta's LanguageModelProtocol or be a function from prompt to text, "
        f"not {type(model).__name__}"
    )
