"""What a judge call costs: tokens times a price, from the user's table or LiteLLM's offline map.

A cost is never guessed: with no price for a model, a score's cost is ``None`` and
the report says why ("no price for model 'x'"), never $0. A call answered from the
cache costs 0.0 and says it was cached.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["STANDIN_PRICE_NAME", "Price", "PriceTable"]

STANDIN_PRICE_NAME = "stand-in (word overlap, not a language model)"
"""The offline stand-in's model name (:mod:`heta_nb.llm_judges.standin`): it costs nothing."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens in (prompt) and out (completion), and where it came from."""

    input_per_million: float
    output_per_million: float
    source: str

    def cost(self, tokens_in: int | None, tokens_out: int | None) -> float | None:
        """The cost of one call; None when the model did not report its tokens."""
        if tokens_in is None or tokens_out is None:
            return None
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1_000_000


def _price(value: Any, model: str) -> Price:
    if isinstance(value, Price):
        return value
    if isinstance(value, Mapping) and set(value) <= {"input", "output"} and value:
        entry = (value.get("input", 0.0), value.get("output", 0.0))
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        entry = (value[0], value[1])
    else:
        raise ValueError(
            f"judge_prices[{model!r}]: give dollars per million tokens as {{'input': x, 'output': y}} or (x, y)"
        )
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in entry):
        raise ValueError(f"judge_prices[{model!r}]: prices must be numbers >= 0, got {entry!r}")
    return Price(float(entry[0]), float(entry[1]), "judge_prices")


class PriceTable:
    """Prices by model name: the user's ``judge_prices`` first, then LiteLLM's bundled map.

    Args:
        prices: ``{"openai/gpt-4o-mini": {"input": 0.15, "output": 0.60}}`` in dollars per
            million tokens, or ``(input, output)`` pairs.
        litellm: also look models up in LiteLLM's own price map when LiteLLM is installed
            (read offline: ``LITELLM_LOCAL_MODEL_COST_MAP`` is set before it is imported).
    """

    def __init__(self, prices: Mapping[str, Any] | None = None, *, litellm: bool = True) -> None:
        self.prices = {str(name): _price(value, str(name)) for name, value in (prices or {}).items()}
        self.litellm = litellm

    def price(self, model: str, *, import_litellm: bool = True) -> Price | None:
        """The price of ``model``, or None when neither table knows it (the offline stand-in is free).

        ``import_litellm=False`` reads LiteLLM's map only if LiteLLM is already imported (its import
        takes seconds: a plain-function model that LiteLLM does not serve should not pay it)."""
        if model == STANDIN_PRICE_NAME:
            return Price(0.0, 0.0, "the offline stand-in costs nothing")
        found = self.prices.get(model)
        if found is not None:
            return found
        if not self.litellm or (not import_litellm and "litellm" not in sys.modules):
            return None
        return _litellm_price(model)

    def why_unknown(self, model: str) -> str:
        """The reason a cost is unknown, for the report."""
        where = "judge_prices" + (" or LiteLLM's price map" if self.litellm and _litellm_installed() else "")
        return f"no price for model {model!r} in {where}: cost unknown (pass judge_prices=)"


def _litellm_installed() -> bool:
    if "litellm" in sys.modules:
        return True
    import importlib.util

    return importlib.util.find_spec("litellm") is not None


_LITELLM_PRICES: dict[str, Price | None] = {}


def _litellm_price(model: str) -> Price | None:
    """LiteLLM's bundled price of ``model`` (also without its ``provider/`` prefix); None if unknown."""
    if model in _LITELLM_PRICES:
        return _LITELLM_PRICES[model]
    found: Price | None = None
    if _litellm_installed():
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm

            table = litellm.model_cost
        except Exception:  # noqa: BLE001 - a broken LiteLLM is no price, not a failed run
            table = {}
        for name in (model, model.split("/", 1)[-1]):
            entry = table.get(name)
            if isinstance(entry, Mapping):
                inp, out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
                if isinstance(inp, (int, float)) and isinstance(out, (int, float)):
                    found = Price(inp * 1_000_000, out * 1_000_000, f"LiteLLM's price map ({name})")
                    break
    _LITELLM_PRICES[model] = found
    return found
