"""Benchmark lint: gold data that can never score under the chosen evaluators (Heta's
evidence-matching traps, spec section 4.1, and cases without gold data), found before the
first query."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_nb._util.text import listing

__all__ = ["LintIssue", "labelled_unanswerable", "lint_benchmark"]

_HETA_PARSED_ID = re.compile(r"^doc_[0-9a-f]{16}$")
_HETA_RESULT_ID = re.compile(r"^(doc|chunk)_[0-9a-f]+$")
_DOCUMENT_METRIC = re.compile(r"^(beir_)?(recall|precision|hit|success|mrr|rr|ndcg|map)@\d+$")


@dataclass(frozen=True)
class LintIssue:
    """One kind of problem, with how many cases it affects and a few examples."""

    code: str
    message: str
    case_ids: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


def _names(evaluators: Iterable[Any]) -> list[str]:
    names = []
    for evaluator in evaluators:
        name = evaluator if isinstance(evaluator, str) else getattr(evaluator, "name", None)
        if callable(name):
            try:
                name = name()
            except Exception:  # noqa: BLE001
                name = None
        if isinstance(name, str):
            names.append(name.strip().lower())
    return names


def _is_heta_beir(evaluator: Any, name: str) -> bool:
    """Heta's own ``BeirRetrievalMetric`` (its judgements come from reference ids only)."""
    module = getattr(type(evaluator), "__module__", "") or ""
    return module.startswith("heta_framework") and not isinstance(evaluator, str) and name.startswith("beir_")


def _nb_qrels(case: Any, heta: bool) -> bool:
    """Whether document metrics find any judgement in the case (``heta``: the ``beir_*``
    reading, which is Heta's ``BeirRetrievalMetric``'s, for its objects and heta_nb's alike)."""
    from heta_nb.evaluators.documents import judgements

    return bool(judgements(case, heta=heta))


def _names_each(evaluators: Sequence[Any]) -> list[str]:
    """One name per evaluator ("" when it has none), aligned with ``evaluators``."""
    return [(_names([e]) or [""])[0] for e in evaluators]


def labelled_unanswerable(case: Any) -> bool:
    """Whether the case says it has no answer: a label ``unanswerable`` (a value, as in
    ``question_type: unanswerable``, or ``unanswerable: true``) or ``answerable: false``.

    Such a case has no gold evidence or answers on purpose; its scores are still marked
    skipped, and every view counts them (the lint only stops calling them a gap).
    """
    labels = getattr(case, "labels", None)
    if not isinstance(labels, Mapping):
        return False
    if labels.get("unanswerable") is True or labels.get("answerable") is False:
        return True
    return any(isinstance(v, str) and v.strip().lower() == "unanswerable" for v in labels.values())


def lint_benchmark(cases: Sequence[Any], evaluators: Iterable[Any], *, manifest: Any = None) -> list[LintIssue]:
    """Problems in ``cases`` that make the given evaluators score nothing useful.

    Heta's evidence matching has traps (spec section 4.1) that silently give 0.0:

    * ``locator.document_id`` is compared with Heta's *parsed* ids (``doc_<sha16>``), so a
      benchmark document id there never matches;
    * a reference id alone must equal a result id, source key or document id *exactly*:
      a bare benchmark id such as ``"lh6"`` never matches Heta's chunks;
    * a reference id is ignored as soon as a locator or text is set, so a locator that
      points at another document than the reference id is what counts;
    * a locator that points outside this benchmark's raw keys never matches a KB built by
      the runner;
    * evidence with both a locator and text must match within one chunk;
    * Heta's own ``beir_*`` metrics (``BeirRetrievalMetric``) judge only evidence with a
      ``reference_id`` (and relevance > 0); heta_nb's document metrics also judge a raw-key
      locator. Evidence that gives the chosen metrics no judgement is skipped (0.0).

    Each trap is reported only when an evaluator that it affects is chosen, and only for
    evidence that cannot match: a reference id that is a Heta id (``doc_<sha16>``,
    ``chunk_<hex>``) or a raw key, and a prefix that covers the whole benchmark, can.

    Cases without gold data are also reported: their scores are "skipped" zeros that
    Heta averages in.

    Args:
        cases: benchmark cases (heta_nb's or Heta's).
        evaluators: the evaluators of the run (objects or names).
        manifest: the benchmark manifest, to know this benchmark's raw-key prefix.

    Returns:
        One :class:`LintIssue` per kind of problem found (empty when all is well).
    """
    evaluators = list(evaluators)
    names = _names(evaluators)
    evidence_recall = any(n.startswith("evidence_recall@") for n in names)
    named = list(zip(evaluators, _names_each(evaluators)))
    heta_beir = any(_is_heta_beir(e, n) for e, n in named)
    nb_document = [n for e, n in named if n and _DOCUMENT_METRIC.match(n) and not _is_heta_beir(e, n)]
    document_metrics = heta_beir or bool(nb_document)
    beir = heta_beir or any(n.startswith("beir_") for n in nb_document)
    trec = any(not n.startswith("beir_") for n in nb_document)
    answer_metrics = any(n.startswith("answer_") for n in names)
    prefix = f"raw/benchmarks/{manifest.name}/{manifest.split}/" if manifest is not None else None
    found: dict[str, list[str]] = {}

    def note(code: str, case_id: str) -> None:
        ids = found.setdefault(code, [])
        if not ids or ids[-1] != case_id:
            ids.append(case_id)

    def foreign(locator: dict[str, Any]) -> bool:
        if prefix is None:
            return False
        for key in ("source_key", "object_key", "source_key_prefix"):
            if key not in locator:
                continue
            value = str(locator[key])
            if value.startswith(prefix) or (key == "source_key_prefix" and prefix.startswith(value)):
                continue
            return True
        return False

    for case in cases:
        evidence = tuple(case.expected.evidence)
        unanswerable = labelled_unanswerable(case)  # no gold by design: not a finding
        if not evidence and (evidence_recall or document_metrics) and not unanswerable:
            note("no_evidence", case.case_id)
        if not tuple(case.expected.answers) and answer_metrics and not unanswerable:
            note("no_answers", case.case_id)
        for item in evidence:
            locator = dict(item.locator or {})
            reference = item.reference_id
            # the locator is read by evidence_recall, and by heta_nb's document metrics without a reference id
            locator_read = evidence_recall or (bool(nb_document) and not reference)
            if evidence_recall:
                document_id = locator.get("document_id")
                if document_id is not None and not _HETA_PARSED_ID.match(str(document_id)):
                    note("locator_document_id", case.case_id)
                if (
                    reference
                    and not locator
                    and not item.text
                    and "/" not in reference
                    and not _HETA_RESULT_ID.match(reference)
                ):
                    note("bare_reference_id", case.case_id)
                if locator and item.text:
                    note("locator_and_text", case.case_id)
            if locator_read and foreign(locator):
                note("foreign_locator", case.case_id)
            if document_metrics and reference and prefix is not None:
                for key in ("source_key", "object_key", "source_key_prefix"):
                    value = str(locator.get(key, ""))
                    if value.startswith(prefix) and value[len(prefix) :].split("/", 1)[0] not in ("", reference):
                        note("reference_locator_mismatch", case.case_id)
        if evidence and document_metrics:
            judged = []
            if beir:
                judged.append(_nb_qrels(case, True))
            if trec:
                judged.append(_nb_qrels(case, False))
            if not all(judged):
                note("no_document_ids", case.case_id)

    messages = {
        "locator_document_id": "evidence uses locator.document_id with a benchmark id; Heta's evidence_recall "
        "compares it with Heta's parsed ids (doc_<sha16>), so it never matches. Use "
        f'{{"source_key_prefix": "{prefix or "raw/benchmarks/NAME/SPLIT/"}<document_id>/"}} instead',
        "bare_reference_id": "evidence has only a reference_id; evidence_recall compares it with result ids and "
        "source keys exactly, so a bare document id never matches a chunk. Add a source_key_prefix locator",
        "locator_and_text": "evidence sets both a locator and text; both must match within one chunk, so a fact "
        "split across chunks is never found",
        "foreign_locator": f"evidence locators point outside this benchmark's raw keys ({prefix}...); they never "
        "match a KB built from this benchmark",
        "reference_locator_mismatch": "evidence reference_id and locator name different documents; "
        "document metrics judge the reference_id's document (which may not be a document at all), while "
        "evidence_recall ignores the reference_id when a locator is set",
        "no_document_ids": "evidence gives the document-level metrics no relevance judgement (Heta's beir_* "
        "metrics read only reference_id items with relevance > 0; heta_nb's also raw-key locators), so they "
        "skip these cases (0.0)",
        "no_evidence": "cases have no expected evidence: retrieval metrics score them 0.0 (skipped), which Heta's "
        "summary averages in",
        "no_answers": "cases have no expected answers: answer metrics score them False/0.0 (skipped), which "
        "Heta's summary averages in",
    }
    issues = []
    for code, ids in found.items():
        issues.append(
            LintIssue(
                code=code,
                message=f"{len(ids)} case(s) ({listing(ids, 5, counted=False)}): {messages[code]}",
                case_ids=tuple(ids),
            )
        )
    return issues
