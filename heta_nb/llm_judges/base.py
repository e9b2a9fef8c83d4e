"""What every LLM judge shares: its model and version, the material it reads, n/a, repeats,
and the score it records.

A judge is an evaluator (``name`` and ``async evaluate(*, case, response)``) whose
model comes from the run (``judge_model=``) unless it was given its own. Its score's
metadata holds ``judge`` (kind, model, template name and version, the judge's version),
``reason``, its verdicts (``claims`` or ``chunks``), and the usage: ``calls``,
``cached_calls``, ``tokens_in``, ``tokens_out``, ``cost`` (None with ``cost_unknown``
when no price is known, never a silent 0). A response it cannot judge (no answer, no
claims, nothing retrieved, no expected answer) is n/a: value 0.0 with ``skipped: true``
and the reason, the report's convention, so it never reaches a mean.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from heta_nb.llm_judges.cache import JudgeCache, default_cache_folder
from heta_nb.llm_judges.models import JudgeModel, as_judge_model
from heta_nb.llm_judges.prompts import PromptTemplate
from heta_nb.llm_judges.session import JudgeSession, Usage
from heta_nb.model.report import EvaluationScore

__all__ = ["JudgeEvaluator", "NotJudgeable", "answer_of", "chunks_of", "expected_answers"]

MAX_CHUNKS = 10
"""Retrieved results a judge reads (the first, in rank order)."""
MAX_CHUNK_CHARS = 4000
"""Characters of one result's text a judge reads."""


class NotJudgeable(Exception):  # noqa: N818 - an outcome, not a failure
    """The response cannot be judged: the score is n/a with this reason."""


def _get(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def answer_of(response: Any) -> str:
    """The response's answer, stripped; :class:`NotJudgeable` when it has none."""
    answer = _get(response, "answer")
    if not isinstance(answer, str) or not answer.strip():
        raise NotJudgeable("the response has no answer")
    return answer.strip()


def chunks_of(response: Any) -> list[dict[str, Any]]:
    """The first :data:`MAX_CHUNKS` retrieved results as ``{"id": "c1", "result_id", "text"}``.

    The judge sees ``c1``, ``c2``... (rank order), never the results' own ids, which are
    data. :class:`NotJudgeable` when nothing with text was retrieved.
    """
    chunks = []
    for rank, result in enumerate(list(_get(response, "results") or ())[:MAX_CHUNKS], start=1):
        text = _get(result, "text")
        if isinstance(text, str) and text.strip():
            chunks.append({"id": f"c{rank}", "result_id": str(_get(result, "id")), "text": text[:MAX_CHUNK_CHARS]})
    if not chunks:
        raise NotJudgeable("nothing with text was retrieved")
    return chunks


def expected_answers(case: Any) -> list[str]:
    """The case's expected answers; :class:`NotJudgeable` when it has none."""
    expected = _get(case, "expected")
    answers = [a for a in (_get(expected, "answers") or ()) if isinstance(a, str) and a.strip()]
    if not answers:
        raise NotJudgeable("the case has no expected answers")
    return answers


class JudgeEvaluator:
    """Base of the LLM judges (see the module docstring).

    Args:
        name: the score's name (default: the judge's kind, e.g. ``"faithfulness"``).
        model: this judge's own model (default: the run's ``judge_model=``).
        threshold: ``passed`` is ``value >= threshold``.
        repeats: judge each case this many times (default: the run's ``repeats=``, else 1).
    """

    kind = "judge"
    template: PromptTemplate
    own_deadline = True
    """The runner's evaluator timeout does not apply: each model call has its own (judge_limits)."""

    def __init__(
        self,
        name: str | None = None,
        *,
        model: Any = None,
        threshold: float = 0.5,
        repeats: int | None = None,
    ) -> None:
        self.name = (name or self.kind).strip()
        self.model: JudgeModel | None = as_judge_model(model)
        self.threshold = threshold
        if repeats is not None and (not isinstance(repeats, int) or repeats < 1):
            raise ValueError(f"repeats must be a whole number >= 1, got {repeats!r}")
        self.repeats = repeats
        self.session: JudgeSession | None = None
        self._described: dict[str, Any] | None = None
        """:meth:`describe` once bound (the same for every case of a run)."""

    def __repr__(self) -> str:
        model = f", model={self.model.name!r}" if self.model is not None else ""
        return f"{type(self).__name__}({self.name!r}{model})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["session"] = None  # (a session holds the run's event-loop objects)
        state.pop("_sessions", None)
        return state

    # -- what the judge is -----------------------------------------------------------------
    def bind(self, session: JudgeSession, repeats: int) -> None:
        """Give the judge the run's session (its own model's, when it has one) and repeats."""
        self.session = session
        self.model = session.model
        if self.repeats is None:
            self.repeats = repeats
        self._described = self.describe()

    def settings(self) -> dict[str, Any]:
        """What else changes the score (a subclass adds its own: scale, criteria...)."""
        return {"threshold": self.threshold, "repeats": self.repeats or 1}

    def describe(self) -> dict[str, Any]:
        """The judge as the report records it: kind, model, template and versions."""
        model = self.model
        identity = model.identity if model is not None else None
        version_of = {"kind": self.kind, "template": self.template.version, "model": identity, **self.settings()}
        version = hashlib.sha256(orjson.dumps(version_of, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]
        return {
            "kind": self.kind,
            "model": model.name if model is not None else None,
            "template": self.template.name,
            "template_version": self.template.version,
            "version": version,
            **self.settings(),
        }

    def _own_session(self) -> JudgeSession:
        """A session of the judge's own ``model=`` for this event loop, when no heta_nb run bound one
        (Heta's own ``BenchmarkRunner`` calls ``evaluate`` directly); its answers go to the default cache."""
        if self.model is None:
            raise RuntimeError(
                f"judge {self.name!r} has no model: pass judge_model= to evaluate/start/sweep/rescore "
                "(or model= to the judge)"
            )
        loop = asyncio.get_running_loop()
        sessions = self.__dict__.setdefault("_sessions", weakref.WeakKeyDictionary())
        session = sessions.get(loop)
        if session is None:
            session = sessions[loop] = JudgeSession(self.model, JudgeCache(default_cache_folder(None)))
            if self.repeats is None:
                self.repeats = 1
        return session

    # -- a subclass's part -----------------------------------------------------------------
    def material(self, case: Any, response: Any) -> dict[str, Any]:
        """The material to judge (raise :class:`NotJudgeable` when there is none)."""
        raise NotImplementedError

    def validate(self, data: dict[str, Any], material: dict[str, Any]) -> Any:
        """Check a parsed answer against the schema and the material; the verdict (raise VerdictError)."""
        raise NotImplementedError

    def outcome(self, verdict: Any, material: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
        """``(value, reason, details)`` of a verdict (raise :class:`NotJudgeable` for n/a)."""
        raise NotImplementedError

    def passed(self, value: Any) -> bool | None:
        """Whether ``value`` passes (numbers: ``>= threshold``)."""
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return value >= self.threshold
        return None

    # -- scoring ---------------------------------------------------------------------------
    async def evaluate(self, *, case: Any, response: Any) -> EvaluationScore:
        """Judge one response: its score (built here as valid JSON, so the runner takes it as it is)."""
        return EvaluationScore.from_raw(await self.score_json(case, response))

    async def score_json(self, case: Any, response: Any) -> dict[str, Any]:
        """Judge one response: the score's JSON object."""
        session = self.session or self._own_session()
        described = self._described or self.describe()
        try:
            material = self.material(case, response)
        except NotJudgeable as why:
            return self._not_applicable(str(why), described, Usage())
        k = self.repeats or 1
        try:
            if k == 1:  # (no task of its own: two event-loop turns fewer per case)
                parts = [await self._judge_once(session, material, 0)]
            else:
                parts = list(await asyncio.gather(*(self._judge_once(session, material, r) for r in range(k))))
        except BaseException as exc:
            if isinstance(exc, Exception):
                extra = dict(getattr(exc, "score_metadata", None) or {})
                exc.score_metadata = {"judge": described, **extra}  # type: ignore[attr-defined]
            raise
        usage = parts[0][3]
        for part in parts[1:]:
            usage.merge(part[3])
        if any(p[0] is _NA for p in parts):
            return self._not_applicable(next(p[1] for p in parts if p[0] is _NA), described, usage)
        value, reason, details, _ = parts[0]
        metadata: dict[str, Any] = {"judge": described, "reason": reason, **details}
        if k > 1:
            value, agreement = _combine([p[0] for p in parts])
            metadata["repeats"] = [{"value": p[0], "reason": p[1], **p[2]} for p in parts]
            metadata["agreement"] = agreement
        metadata.update(usage.record())
        return {"name": self.name, "value": value, "passed": self.passed(value), "metadata": metadata}

    async def _judge_once(
        self, session: JudgeSession, material: dict[str, Any], repeat: int
    ) -> tuple[Any, str, dict[str, Any], Usage]:
        prompt_material = {k: v for k, v in material.items() if not k.startswith("_")}
        verdict, usage = await session.ask(
            self.template, prompt_material, lambda data: self.validate(data, material), repeat=repeat
        )
        try:
            value, reason, details = self.outcome(verdict, material)
        except NotJudgeable as why:
            return _NA, str(why), {}, usage
        return value, reason, details, usage

    def _not_applicable(self, reason: str, described: dict[str, Any], usage: Usage) -> dict[str, Any]:
        metadata: dict[str, Any] = {"skipped": True, "reason": reason, "judge": described}
        if usage.calls:
            metadata.update(usage.record())
        return {"name": self.name, "value": 0.0, "passed": None, "metadata": metadata}


_NA: Any = object()


def _combine(values: Sequence[Any]) -> tuple[Any, float]:
    """The repeats' score (mean of numbers, share of True, most common label) and their agreement.

    Agreement is the share of repeats that gave the most common value (1.0: all agree).
    """
    keys = [round(v, 6) if isinstance(v, float) else v for v in values]
    most, count = Counter(keys).most_common(1)[0]
    agreement = round(count / len(values), 6)
    if all(isinstance(v, (int, float)) for v in values):
        return sum(float(v) for v in values) / len(values), agreement
    return most, agreement
