"""One run's judging: the model, its cache, its limits, its prices and its budget.

:meth:`JudgeSession.ask` is every judge's one way to the model: the cache first (a
replay never asks), then the model within the shared limits; the answer is parsed
strictly as one JSON object and checked by the judge's ``validate``; a malformed or
invalid answer is asked again once with a repair prompt, and a second failure is a
:class:`JudgeOutputError` that keeps both raw answers and what they cost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from heta_nb.llm_judges.cache import JudgeCache, key_prefix
from heta_nb.llm_judges.costs import PriceTable
from heta_nb.llm_judges.limits import CallLimiter, JudgeLimits
from heta_nb.llm_judges.models import Completion, JudgeModel
from heta_nb.llm_judges.prompts import PromptTemplate, material_prompt, repair_prompt

__all__ = ["JudgeOutputError", "JudgeSession", "Usage", "VerdictError", "parse_json_object"]

T = TypeVar("T")


class VerdictError(ValueError):
    """An answer that is not the verdict asked for (not JSON, wrong shape, an unknown claim or chunk id)."""


@dataclass
class Usage:
    """What one score's calls used: calls made, answered from the cache, tokens and cost."""

    calls: int = 0
    cached: int = 0
    tokens_in: int | None = 0
    tokens_out: int | None = 0
    cost: float | None = 0.0
    cost_unknown: str | None = None
    """Why :attr:`cost` is None (no price for the model, or tokens not reported)."""

    def add(self, tokens_in: int | None, tokens_out: int | None, cost: float | None, *, cached: bool) -> None:
        """Count one call."""
        self.merge(Usage(1, int(cached), tokens_in, tokens_out, cost))

    def merge(self, other: Usage) -> None:
        """Add another usage (one call, or a repeat's): a sum is None once a part is unknown."""
        self.calls += other.calls
        self.cached += other.cached
        for name in ("tokens_in", "tokens_out", "cost"):
            mine, theirs = getattr(self, name), getattr(other, name)
            setattr(self, name, None if mine is None or theirs is None else mine + theirs)
        self.cost_unknown = self.cost_unknown or other.cost_unknown

    def record(self) -> dict[str, Any]:
        """The score metadata's usage fields."""
        data: dict[str, Any] = {
            "calls": self.calls,
            "cached_calls": self.cached,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": None if self.cost is None else round(self.cost, 10),
        }
        if self.cost is None and self.cost_unknown:
            data["cost_unknown"] = self.cost_unknown
        return data


class JudgeOutputError(RuntimeError):
    """The model's answers stayed unusable after the repair prompt; keeps them and their usage.

    The runner records it as the score's evaluator error; ``score_metadata`` (the raw
    answers, the model, the usage) goes into that score's metadata.
    """

    def __init__(self, message: str, score_metadata: dict[str, Any]) -> None:
        super().__init__(message)
        self.score_metadata = score_metadata


def parse_json_object(text: str) -> dict[str, Any]:
    """The one JSON object ``text`` holds (a Markdown code fence around it is allowed).

    Raises:
        VerdictError: anything else (prose around it, two objects, a list, invalid JSON).
    """
    body = text.strip()
    if body.startswith("```"):
        lines = body.splitlines()
        if len(lines) >= 2 and lines[-1].strip() == "```":
            body = "\n".join(lines[1:-1]).strip()
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise VerdictError(f"the answer is not one JSON object ({str(exc).split(':')[0]})") from None
    if not isinstance(data, dict):
        raise VerdictError(f"the answer is JSON {type(data).__name__}, not an object")
    return data


@dataclass
class _Budget:
    max_cost: float
    spent: float = 0.0
    exhausted: bool = False
    on_exhausted: Callable[[str], None] | None = None

    def spend(self, cost: float) -> None:
        self.spent += cost
        if not self.exhausted and self.spent >= self.max_cost:
            self.exhausted = True
            if self.on_exhausted is not None:
                self.on_exhausted(
                    f"stopped at the judge budget: ${self.spent:.4f} spent of max_cost ${self.max_cost:g}"
                )


@dataclass
class JudgeSession:
    """A model with its cache, limiter, prices and budget; shared by the judges of one run."""

    model: JudgeModel
    cache: JudgeCache | None = None
    limits: JudgeLimits = field(default_factory=JudgeLimits)
    prices: PriceTable = field(default_factory=PriceTable)
    max_cost: float | None = None
    on_exhausted: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        self.limiter = CallLimiter(self.limits)
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._keys: dict[str, tuple[PromptTemplate, Any]] = {}
        """Per template, its cache-key function (the model, instructions and schema hashed once)."""
        self._price = self.prices.price(
            self.model.name, import_litellm=self.model.is_protocol or self.max_cost is not None
        )
        self._budget = None if self.max_cost is None else _Budget(self.max_cost, on_exhausted=self.on_exhausted)
        if self._budget is not None and self._price is None:
            raise ValueError(
                f"max_cost needs the price of judge model {self.model.name!r}: "
                f"{self.prices.why_unknown(self.model.name)}"
            )

    @property
    def spent(self) -> float:
        """Dollars spent on calls so far (cached calls cost nothing)."""
        return self._budget.spent if self._budget is not None else 0.0

    async def ask(
        self,
        template: PromptTemplate,
        material: dict[str, Any],
        validate: Callable[[dict[str, Any]], T],
        *,
        repeat: int = 0,
    ) -> tuple[T, Usage]:
        """The model's verdict on ``material``, validated; the usage of every call it took.

        Raises:
            JudgeOutputError: two unusable answers (the raw texts are kept).
            ModelCallError: the model could not be reached (after the limiter's retries).
            CacheMissError: a replay found no answer.
        """
        system, prompt = template.system, material_prompt(material)
        usage = Usage()
        answers: list[str] = []
        problem = ""
        for attempt in range(2):
            asked = prompt if attempt == 0 else repair_prompt(prompt, problem)
            text = await self._answer(template, system, asked, repeat, usage)
            answers.append(text)
            try:
                return validate(parse_json_object(text)), usage
            except VerdictError as exc:
                problem = str(exc)
        metadata = {"raw_answers": [a[:4000] for a in answers], "model": self.model.name, **usage.record()}
        raise JudgeOutputError(f"the judge's answer was unusable twice (after a repair prompt): {problem}", metadata)

    async def _answer(self, template: PromptTemplate, system: str, prompt: str, repeat: int, usage: Usage) -> str:
        """One call's text, from the cache or the model; counts it in ``usage``."""
        keyer = self._keys.get(template.name)
        if keyer is None or keyer[0] is not template:
            keyer = self._keys[template.name] = (template, key_prefix(self.model.identity, system, template.schema))
        key = keyer[1](prompt, repeat)
        cache = self.cache
        if cache is not None:
            entry = cache.get(key)
            if entry is not None:
                usage.add(entry.get("tokens_in"), entry.get("tokens_out"), 0.0, cached=True)
                return str(entry["text"])
        pending = self._inflight.get(key)
        if pending is not None:  # the same call is in flight (say, one answer in two modes): share it
            completion = await asyncio.shield(pending)
            usage.add(completion.tokens_in, completion.tokens_out, 0.0, cached=True)
            return completion.text
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            completion = await self.limiter.call(lambda: self.model.complete(system, prompt), prompt_chars=len(prompt))
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # (retrieved: no "never retrieved" warning when nobody shared it)
            raise
        finally:
            self._inflight.pop(key, None)
        future.set_result(completion)
        cost = None
        if self._price is not None:
            cost = self._price.cost(completion.tokens_in, completion.tokens_out)
        if cost is None:
            usage.cost_unknown = (
                self.prices.why_unknown(self.model.name)
                if self._price is None
                else f"model {self.model.name!r} did not report its tokens: cost unknown"
            )
        elif self._budget is not None:
            self._budget.spend(cost)
        usage.add(completion.tokens_in, completion.tokens_out, cost, cached=False)
        if cache is not None:
            cache.put(
                key,
                completion.text,
                model=self.model.name,
                tokens_in=completion.tokens_in,
                tokens_out=completion.tokens_out,
            )
        return completion.text
