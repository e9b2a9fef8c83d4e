"""The case panel's LLM judge blocks: each judge score's verdicts, model, usage and cost as
compact JSON (``case_data``'s ``j``), read by ``assets/explorer.js`` in the notebook and on
a page alike.

One block per judge score (a score whose ``metadata.judge`` is an object), keys short:

* ``n`` name, ``k`` kind, ``st`` state (``ok``, ``na``: n/a, ``err``: the judge failed),
  ``v`` the value as text, ``p`` passed (``t``, ``f`` or ``""``), ``th`` the threshold;
* ``why`` the judge's reason (n/a: why it could not judge), ``m`` the model;
* ``use`` calls and tokens, ``cost`` (``$0.0004``, ``cost unknown: <why>``, ``cached`` when
  every call was answered from the cache, ``""`` without a call: never ``$0`` for an
  unknown price), ``ag`` the agreement of repeats (``un``: true when they disagreed);
* ``cl`` claims ``[claim, verdict, reason, [ranks]]`` (rank N: the response's N-th
  result, the judge's ``cN``), ``rc`` the expected answers' claims ``[claim, verdict,
  reason]`` (answer correctness), ``ch`` context precision's chunks ``[rank, verdict,
  reason]``, with ``cln`` / ``rcn`` / ``chn`` the counts when some were left out;
  ``vd`` a single verdict (answer relevance);
* ``err`` ``[type, message]`` and ``raw`` (the model's unusable answers, the first few).

Every text is cut (:class:`~heta_nb.explorer.case_data.CaseDataLimits`' ``claims`` and
``claim_chars``); what is not a string is described as text, never passed on as an object.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any, Protocol

from heta_nb._util.text import plural, shorten
from heta_nb.llm_judges.totals import money
from heta_nb.render.context.formatting import as_mapping, describe
from heta_nb.render.env import format_number

__all__ = ["UNSTABLE", "is_judge_score", "judge_block", "judge_reason"]

UNSTABLE = "judges disagree"
"""The explorer's quick filter of case results whose judges disagreed across repeats."""

_RANK = re.compile(r"c([1-9][0-9]{0,3})")
_MAX_RANKS = 12
"""Chunks listed per claim."""


class _Limits(Protocol):
    """What a judge block reads of :class:`~heta_nb.explorer.case_data.CaseDataLimits`."""

    @property
    def claims(self) -> int: ...

    @property
    def claim_chars(self) -> int: ...

    @property
    def meta_chars(self) -> int: ...


def is_judge_score(score: Mapping[str, Any]) -> bool:
    """A score an LLM judge recorded (its metadata has a ``judge`` object)."""
    metadata = score.get("metadata")
    return isinstance(metadata, Mapping) and isinstance(metadata.get("judge"), Mapping)


def _text(value: Any, chars: int) -> str:
    """A string cut to ``chars``; anything else described as text (an object stays data)."""
    if isinstance(value, str):
        return shorten(value, chars)
    return "" if value is None else describe(value, chars)


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def judge_reason(score: Mapping[str, Any], chars: int) -> str:
    """A judge score's reason, cut: the scores table's short metadata text for it."""
    return _text(as_mapping(score.get("metadata")).get("reason"), chars)


def _cost(metadata: Mapping[str, Any], calls: int, cached: int) -> str:
    if not calls:
        return ""
    if cached >= calls:
        return "cached"
    cost = _number(metadata.get("cost"))
    if cost is not None:
        return money(cost)
    why = metadata.get("cost_unknown")
    return "cost unknown: " + _text(why, 120) if why else "cost unknown"


def _ranks(chunks: Any) -> list[int]:
    """``["c2", "c1"]`` -> ``[1, 2]`` (anything else left out)."""
    if not isinstance(chunks, Sequence) or isinstance(chunks, str):
        return []
    found = set()
    for chunk in islice(chunks, 50):
        match = _RANK.fullmatch(chunk) if isinstance(chunk, str) else None
        if match:
            found.add(int(match[1]))
    return sorted(found)[:_MAX_RANKS]


def _claims(items: Any, limits: _Limits, *, chunks: bool) -> tuple[list[list[Any]], int]:
    if not isinstance(items, Sequence) or isinstance(items, str):
        return [], 0
    chars = limits.claim_chars
    rows: list[list[Any]] = []
    for item in islice(items, limits.claims):
        claim = as_mapping(item)
        row: list[Any] = [
            _text(claim.get("claim"), chars),
            _text(claim.get("verdict"), 24),
            _text(claim.get("reason"), chars),
        ]
        if chunks:
            row.append(_ranks(claim.get("chunks")))
        rows.append(row)
    return rows, len(items)


def _chunks(items: Any, limits: _Limits) -> tuple[list[list[Any]], int]:
    """Context precision's verdict per retrieved chunk: ``[rank, verdict, reason]``."""
    if not isinstance(items, Sequence) or isinstance(items, str):
        return [], 0
    rows: list[list[Any]] = []
    for item in islice(items, limits.claims):
        chunk = as_mapping(item)
        rank = chunk.get("rank")
        if type(rank) is not int or not 0 < rank < 10_000:
            ranks = _ranks([chunk.get("id")])
            rank = ranks[0] if ranks else 0
        if rank:
            rows.append([rank, _text(chunk.get("verdict"), 24), _text(chunk.get("reason"), limits.claim_chars)])
    return rows, len(items)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format_number(value)
    return _text(value, 40)


def judge_block(score: Mapping[str, Any], limits: _Limits) -> dict[str, Any]:
    """One judge score's block of the case panel (see the module's keys)."""
    metadata = as_mapping(score.get("metadata"))
    judge = as_mapping(metadata.get("judge"))
    value = score.get("value")
    error = metadata.get("error")
    skipped = metadata.get("skipped") is True
    state = "na" if skipped else "err" if value == "error" or isinstance(error, Mapping) else "ok"
    passed = score.get("passed")
    calls, cached = _count(metadata.get("calls")), _count(metadata.get("cached_calls"))
    block: dict[str, Any] = {
        "n": _text(score.get("name"), 80),
        "k": _text(judge.get("kind"), 40),
        "st": state,
        "v": "n/a" if skipped else "error" if state == "err" else _value(value),
        "p": "t" if passed is True else "f" if passed is False else "",
        "th": format_number(t) if (t := _number(judge.get("threshold"))) is not None else "",
        "why": _text(metadata.get("reason"), limits.claim_chars),
        "m": _text(judge.get("model"), 80),
        "use": (
            plural(calls, "call")
            + (f" ({cached:,} cached)" if cached else "")
            + f" · {_count(metadata.get('tokens_in')):,} in / {_count(metadata.get('tokens_out')):,} out tokens"
        )
        if calls
        else "no model call",
        "cost": _cost(metadata, calls, cached),
    }
    agreement = _number(metadata.get("agreement"))
    if agreement is not None:
        repeats = metadata.get("repeats")
        count = len(repeats) if isinstance(repeats, Sequence) and not isinstance(repeats, str) else 0
        block["ag"] = f"agreement {format_number(agreement, 2)}" + (f" over {count:,} repeats" if count else "")
        block["un"] = agreement < 1
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("error_type") or "error"
        block["err"] = [_text(kind, 80), _text(error.get("message"), limits.meta_chars)]
        raw = metadata.get("raw_answers")
        if isinstance(raw, Sequence) and not isinstance(raw, str) and raw:
            block["raw"] = [_text(answer, limits.claim_chars) for answer in islice(raw, 3)]
            block["rawn"] = len(raw)
    for key, (rows, total) in (
        ("cl", _claims(metadata.get("claims"), limits, chunks=True)),
        ("rc", _claims(metadata.get("reference_claims"), limits, chunks=False)),
        ("ch", _chunks(metadata.get("chunks"), limits)),
    ):
        if rows or total:
            block[key] = rows
            if total > len(rows):
                block[key + "n"] = total
    verdict = metadata.get("verdict")
    if verdict is not None and not isinstance(verdict, (Mapping, list)):
        block["vd"] = _text(verdict, 40)
    return block
