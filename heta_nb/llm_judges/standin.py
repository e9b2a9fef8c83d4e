"""A deterministic stand-in for a judge model: word overlap dressed as verdicts.

It is **not** a language model and its verdicts are not a language model's: it reads
the material the judges send, splits answers into sentences as "claims", and calls a
claim supported when most of its content words occur in one chunk. It exists so that
notebooks, demos and tests run offline and repeatably; every score it gives names it
(its model name says "stand-in"). Use a real model (``heta_nb.JudgeModel`` over Heta's
``LanguageModel``) for verdicts you can trust.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from heta_nb.llm_judges.costs import STANDIN_PRICE_NAME
from heta_nb.llm_judges.models import JudgeModel

__all__ = ["STANDIN_NAME", "standin_answer", "standin_model"]

STANDIN_NAME = STANDIN_PRICE_NAME
_WORD = re.compile(r"[0-9a-z]+")
_STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were what when where "
    "which who why how with does did do not no".split()
)
_MATERIAL = re.compile(r"<material>\n(?P<body>.*)\n</material>", re.S)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


_DECLINE = re.compile(r"\b(i )?(do not|don't|cannot|can't) (know|answer|tell)\b|\bno information\b", re.I)


def _sentences(text: str) -> list[str]:
    """The claims of a text: its sentences with content words, less those that only decline."""
    return [s.strip() for s in re.split(r"(?<=[.!?;])\s+|\n+", text) if _words(s) and not _DECLINE.search(s)]


def _share(part: str, whole: str) -> float:
    words = _words(part)
    return len(words & _words(whole)) / len(words) if words else 0.0


def _support(claim: str, chunks: list[dict[str, str]]) -> tuple[str, list[str]]:
    best = max(chunks, key=lambda c: _share(claim, c["text"]), default=None)
    if best is not None and _share(claim, best["text"]) >= 0.6:
        return "supported", [best["id"]]
    return "not_found", []


def standin_answer(system: str, prompt: str) -> str:
    """The stand-in's answer (a JSON object) to a judge's prompt."""
    match = _MATERIAL.search(prompt)
    material: dict[str, Any] = orjson.loads(match["body"]) if match else {}
    query = str(material.get("query", ""))
    answer = str(material.get("answer", ""))
    chunks = [c for c in material.get("chunks", []) if isinstance(c, dict)]
    expected = " ".join(material.get("expected_answers", []))
    reason = "stand-in: word overlap"
    if '"answer_claims"' in system:
        answer_claims = [
            {"claim": s, "verdict": "supported" if _share(s, expected) >= 0.6 else "not_found", "reason": reason}
            for s in _sentences(answer)
        ]
        reference_claims = [
            {"claim": s, "verdict": "covered" if _share(s, answer) >= 0.6 else "missing", "reason": reason}
            for s in _sentences(expected)
        ]
        data: dict[str, Any] = {"answer_claims": answer_claims, "reference_claims": reference_claims}
    elif '"claims"' in system:
        text = expected if "expected answer" in system else answer
        claims = []
        for sentence in _sentences(text):
            verdict, ids = _support(sentence, chunks)
            claims.append({"claim": sentence, "verdict": verdict, "chunks": ids, "reason": reason})
        data = {"claims": claims}
    elif '"chunks"' in system:
        target = expected or query
        data = {
            "chunks": [
                {
                    "id": c["id"],
                    "verdict": "relevant" if _share(target, c["text"]) >= 0.5 else "not_relevant",
                    "reason": reason,
                }
                for c in chunks
            ]
        }
    else:
        overlap = _share(query, answer) if query else (1.0 if answer else 0.0)
        if '"score"' in system:
            low, high = (int(n) for n in re.findall(r"from (\d+) to (\d+)", system)[0])
            data = {"score": low + round((high - low) * overlap), "reason": reason}
        elif '"label"' in system:
            labels = re.search(r'"label": "([^"]*)"', system)
            names = labels[1].split("|") if labels else ["yes", "no"]
            data = {"label": names[0] if overlap >= 0.5 else names[-1], "reason": reason}
        elif '"verdict": true' in system:
            data = {"verdict": overlap >= 0.5, "reason": reason}
        else:
            verdict = "relevant" if overlap >= 0.5 else ("partial" if overlap > 0 else "not_relevant")
            data = {"verdict": verdict, "reason": reason}
    return orjson.dumps(data).decode()


def _standin(prompt: str, system: str = "") -> dict[str, Any]:
    text = standin_answer(system, prompt)
    return {"text": text, "tokens_in": len((system + " " + prompt).split()), "tokens_out": len(text.split())}


def standin_model() -> JudgeModel:
    """The stand-in as a judge model, named so that no output mistakes it for a language model."""
    return JudgeModel(_standin, name=STANDIN_NAME)
