"""How fast judges may call their model: concurrency, requests and tokens per minute,
timeouts, and backoff that honours ``Retry-After``.

One :class:`CallLimiter` per run is shared by every judge that calls one model, so the
limits hold for the run, not per judge. A throttled answer (429, overloaded) pauses
*every* call until the provider's ``Retry-After`` has passed, not only the one that was
refused: the next calls would be refused too.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from heta_nb._util.aio import GRACE_S, wait_bounded
from heta_nb.llm_judges.models import ModelCallError

__all__ = ["CallLimiter", "JudgeLimits", "as_limits"]

T = TypeVar("T")


@dataclass(frozen=True)
class JudgeLimits:
    """Limits on a run's judge calls.

    Attributes:
        concurrency: calls in flight at once (default 16).
        requests_per_minute: at most this many calls start per minute (None: no limit).
        tokens_per_minute: at most this many prompt tokens per minute, counted as
            ``len(prompt) / 4`` before the call (None: no limit).
        timeout_s: one call's time limit in seconds (None: none); a timeout is retried.
        retries: tries after the first for a retryable failure (default 5).
        backoff_s: the first wait before a retry, doubled each time with jitter, unless
            the provider's ``Retry-After`` says otherwise (default 1 s).
        max_backoff_s: the longest wait between two tries (default 60 s).
    """

    concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout_s: float | None = 120.0
    retries: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ValueError(f"judge_limits.concurrency must be a whole number >= 1, got {self.concurrency!r}")
        for name in ("requests_per_minute", "tokens_per_minute", "timeout_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"judge_limits.{name} must be > 0 or None, got {value!r}")
        if not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"judge_limits.retries must be a whole number >= 0, got {self.retries!r}")
        if self.backoff_s < 0 or self.max_backoff_s < self.backoff_s:
            raise ValueError("judge_limits: need 0 <= backoff_s <= max_backoff_s")

    def record(self) -> dict[str, Any]:
        """The limits as JSON (the report's metadata)."""
        return asdict(self)


def as_limits(value: JudgeLimits | Mapping[str, Any] | None) -> JudgeLimits:
    """``judge_limits=`` as :class:`JudgeLimits` (a mapping of its fields, or None: the defaults)."""
    if value is None:
        return JudgeLimits()
    if isinstance(value, JudgeLimits):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - set(JudgeLimits.__dataclass_fields__)
        if unknown:
            raise ValueError(
                f"judge_limits: unknown field(s) {sorted(unknown)}; known: {list(JudgeLimits.__dataclass_fields__)}"
            )
        return JudgeLimits(**value)
    raise TypeError(f"judge_limits must be JudgeLimits or a mapping, not {type(value).__name__}")


class _Bucket:
    """A token bucket refilled at ``per_minute / 60`` per second, holding at most one minute's worth."""

    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = per_minute
        self.level = per_minute
        self.stamp = time.monotonic()

    def wait_for(self, amount: float) -> float:
        """Take ``amount`` (more than the capacity counts as the capacity) and return how long to wait first."""
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        amount = min(amount, self.capacity)
        self.level -= amount
        return 0.0 if self.level >= 0 else -self.level / self.rate


class CallLimiter:
    """Runs model calls within :class:`JudgeLimits` (one per run and model)."""

    def __init__(self, limits: JudgeLimits, *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.limits = limits
        self._slots = asyncio.Semaphore(limits.concurrency)
        self._abandoned: set[asyncio.Task[Any]] = set()
        """Model calls that ignored their cancellation, held until they end (see wait_bounded)."""
        self._requests = _Bucket(limits.requests_per_minute) if limits.requests_per_minute else None
        self._tokens = _Bucket(limits.tokens_per_minute) if limits.tokens_per_minute else None
        self._not_before = 0.0
        """No call starts before this ``time.monotonic()``: a provider's Retry-After holds every call."""
        self._sleep = sleep
        self.retried = 0
        """Calls tried again after a retryable failure (for the report's warnings)."""
        self.throttled = 0
        """Answers that were throttling (429 and the like)."""

    async def _admit(self, tokens: float) -> None:
        wait = 0.0
        if self._requests is not None:
            wait = max(wait, self._requests.wait_for(1))
        if self._tokens is not None:
            wait = max(wait, self._tokens.wait_for(tokens))
        wait = max(wait, self._not_before - time.monotonic())
        if wait > 0:
            await self._sleep(wait)

    async def call(self, make_call: Callable[[], Awaitable[T]], *, prompt_chars: int) -> T:
        """Make the call within the limits, retrying retryable failures with backoff.

        Raises:
            ModelCallError: the last failure, when it is not retryable or the tries are used up.
        """
        limits = self.limits
        attempt = 0
        while True:
            async with self._slots:
                await self._admit(prompt_chars / 4)
                try:
                    if limits.timeout_s is None:
                        return await make_call()
                    # bounded even for a model that swallows its cancellation (asyncio.wait_for waits for it)
                    return await wait_bounded(make_call, limits.timeout_s, GRACE_S, self._abandoned)
                except asyncio.TimeoutError as exc:
                    how = f": {exc}" if str(exc) else ""  # (what a call that ignored its cancellation did)
                    failure = ModelCallError(
                        f"model call timed out after {limits.timeout_s:g} s (judge_limits.timeout_s){how}",
                        retryable=not how,
                    )
                    failure.__cause__ = exc
                except ModelCallError as exc:
                    failure = exc
            if not failure.retryable or attempt >= limits.retries:
                if attempt:
                    failure.args = (f"{failure.args[0]} (after {attempt + 1} tries)",)
                raise failure
            attempt += 1
            self.retried += 1
            wait = min(limits.max_backoff_s, limits.backoff_s * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
            if failure.status in (429, 529) or failure.retry_after is not None:
                self.throttled += 1
                if failure.retry_after is not None:
                    wait = max(failure.retry_after, 0.0) + random.random() * 0.1 * max(failure.retry_after, 0.1)
                self._not_before = max(self._not_before, time.monotonic() + wait)
            await self._sleep(wait)
