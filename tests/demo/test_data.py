"""The bundled Saltmarsh Isles benchmark is consistent."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "heta_nb/demo/data"


BENCHMARK = "saltmarsh_isles"


SPLIT = "test"


QUESTION_TYPES = {"factoid", "bridge", "comparison", "temporal", "unanswerable"}


DIFFICULTIES = {"easy", "hard"}


TYPE_RANGES = {
    "factoid": (30, 40),
    "bridge": (25, 35),
    "comparison": (8, 12),
    "temporal": (8, 12),
    "unanswerable": (5, 6),
}


DOC_ID = re.compile(r"^d\d{2}$")


CASE_ID = re.compile(r"^q\d{3}$")


BARE_TXT_NAME = re.compile(r"^[a-z0-9_]+\.txt$")


def _read_jsonl(name: str) -> list[dict]:
    rows = []
    with (DATA / name).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            assert line.strip(), f"{name}:{number} is blank"
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:  # pragma: no cover - failure path
                raise AssertionError(f"{name}:{number} is not JSON: {exc}") from exc
    return rows


DOCUMENTS = _read_jsonl("documents.jsonl")


CASES = _read_jsonl("cases.jsonl")


DOCS_BY_ID = {doc["document_id"]: doc for doc in DOCUMENTS}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _words(text: str) -> int:
    return len(text.split())


def test_manifest() -> None:
    manifest = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["name"] == BENCHMARK
    assert manifest["version"] == "1"
    assert manifest["split"] == SPLIT
    assert manifest["task_type"] == "multihop_qa"
    assert manifest["build_scope"] == "corpus"
    assert manifest["license"] == "CC0-1.0"
    assert manifest["homepage"] is None and manifest["citation"] is None
    assert manifest["metadata"]["description"].strip()
    assert manifest["metadata"]["origin"] == "written for heta_nb; entirely fictional"


def test_readme_exists() -> None:
    text = (DATA / "README.md").read_text(encoding="utf-8")
    assert "CC0-1.0" in text
    assert "fictional" in text


def test_document_keys_and_ids() -> None:
    ids = [doc["document_id"] for doc in DOCUMENTS]
    assert len(ids) == len(set(ids))
    width = len(ids[0])
    for doc in DOCUMENTS:
        assert {"document_id", "name", "media_type", "text", "metadata"} <= doc.keys()
        assert DOC_ID.match(doc["document_id"]) and len(doc["document_id"]) == width
        assert doc["media_type"] == "text/plain"
        assert isinstance(doc["text"], str) and doc["text"].strip()
        assert doc["metadata"]["topic"] and doc["metadata"]["title"]


def test_document_names_bare_and_unique() -> None:
    names = [doc["name"] for doc in DOCUMENTS]
    assert len(names) == len(set(names))
    for name in names:
        assert BARE_TXT_NAME.match(name), name
        assert "/" not in name and "\\" not in name


def test_counts() -> None:
    assert 70 <= len(DOCUMENTS) <= 90
    assert 85 <= len(CASES) <= 100


def test_document_word_counts() -> None:
    counts = {doc["document_id"]: _words(doc["text"]) for doc in DOCUMENTS}
    out_of_range = {k: v for k, v in counts.items() if not 60 <= v <= 180}
    assert not out_of_range
    assert sum(v >= 150 for v in counts.values()) >= 20


def test_case_keys_and_ids() -> None:
    ids = [case["case_id"] for case in CASES]
    assert len(ids) == len(set(ids))
    queries = [_norm(case["query"]) for case in CASES]
    assert len(queries) == len(set(queries))
    for case in CASES:
        assert {"case_id", "query", "expected", "labels", "metadata"} <= case.keys()
        assert CASE_ID.match(case["case_id"])
        assert case["query"].strip().endswith("?")
        assert {"answers", "evidence"} <= case["expected"].keys()
        assert {"hops", "question_type"} <= case["labels"].keys()
        answers = case["expected"]["answers"]
        assert isinstance(answers, list) and len(answers) <= 3
        assert all(isinstance(a, str) and a.strip() for a in answers)


def test_evidence_locators() -> None:
    for case in CASES:
        for item in case["expected"]["evidence"]:
            ref = item["reference_id"]
            assert ref in DOCS_BY_ID, (case["case_id"], ref)
            assert item["locator"]["source_key_prefix"] == f"raw/benchmarks/{BENCHMARK}/{SPLIT}/{ref}/"
        refs = [item["reference_id"] for item in case["expected"]["evidence"]]
        assert len(refs) == len(set(refs)), case["case_id"]


def test_labels_vocabulary_and_consistency() -> None:
    for case in CASES:
        labels = case["labels"]
        qtype, hops = labels["question_type"], labels["hops"]
        answers, evidence = case["expected"]["answers"], case["expected"]["evidence"]
        cid = case["case_id"]
        assert qtype in QUESTION_TYPES, cid
        assert hops in (0, 1, 2, 3), cid
        assert labels.get("difficulty", "easy") in DIFFICULTIES, cid
        unanswerable = qtype == "unanswerable"
        assert unanswerable == (hops == 0) == (not answers) == (not evidence), cid
        if not unanswerable:
            assert len(evidence) == hops, cid
            assert 1 <= len(answers) <= 3, cid
        if qtype == "bridge":
            assert hops >= 2 and len(evidence) >= 2, cid
        if qtype == "factoid":
            assert hops == 1 and len(evidence) == 1, cid
        if qtype == "comparison":
            assert len(evidence) == 2, cid


def test_question_type_mix() -> None:
    counts = Counter(case["labels"]["question_type"] for case in CASES)
    for qtype, (low, high) in TYPE_RANGES.items():
        assert low <= counts[qtype] <= high, (qtype, counts[qtype])
    bridges = [c for c in CASES if c["labels"]["question_type"] == "bridge"]
    assert any(c["labels"]["hops"] == 3 for c in bridges)


def test_answers_occur_in_evidence_text() -> None:
    missing = []
    for case in CASES:
        texts = [_norm(DOCS_BY_ID[item["reference_id"]]["text"]) for item in case["expected"]["evidence"]]
        for answer in case["expected"]["answers"]:
            if not any(_norm(answer) in text for text in texts):
                missing.append((case["case_id"], answer))
    assert not missing


def test_comparison_answer_is_named_in_query() -> None:
    for case in CASES:
        if case["labels"]["question_type"] == "comparison":
            query = _norm(case["query"])
            assert any(_norm(a) in query for a in case["expected"]["answers"]), case["case_id"]


def test_hard_cases() -> None:
    assert sum(case["labels"].get("difficulty") == "hard" for case in CASES) >= 10
