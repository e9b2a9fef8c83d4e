"""Heta's JSONL benchmark format: fields, documents, errors with file, line and field."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from heta_nb.benchmark import (
    Benchmark,
    load_benchmark,
    load_jsonl_benchmark,
)
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model import BenchmarkManifest

SMALL = BenchmarkManifest(name="small", version="1", split="dev", task_type="qa")


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def jsonl_folder(tmp_path: Path, documents: list[Any] | None = None, cases: list[Any] | None = None) -> Path:
    folder = tmp_path / "bench"
    write_jsonl(
        folder / "documents.jsonl",
        documents
        if documents is not None
        else [{"document_id": "d1", "name": "d1.txt", "media_type": "text/plain", "text": "x"}],
    )
    write_jsonl(folder / "cases.jsonl", cases if cases is not None else [{"case_id": "c1", "query": "q?"}])
    return folder


def load_folder(folder: Path, **kwargs: Any) -> Benchmark:
    return load_jsonl_benchmark(folder / "documents.jsonl", folder / "cases.jsonl", manifest=SMALL, **kwargs)


def doc_row(**extra: Any) -> dict[str, Any]:
    return {"document_id": "d1", "name": "d1.txt", "media_type": "text/plain", **extra}


def outside_setup(tmp_path: Path) -> tuple[Path, Path]:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret", encoding="utf-8")
    folder = jsonl_folder(tmp_path)
    return folder, secret


MANIFEST = {"name": "m", "version": "1", "split": "test", "task_type": "qa"}


DOC = {"document_id": "d1", "name": "d1.txt", "media_type": "text/plain", "text": "x"}


LIMIT = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


needs_limit = pytest.mark.skipif(not LIMIT, reason="this Python has no int-string conversion limit")


HUGE = "1" + "0" * 5000


DEEP = "[" * 100_000 + "]" * 100_000


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl_folder_from_text(tmp_path: Path, cases: str, manifest: Any = MANIFEST, documents: str | None = None) -> Path:
    folder = tmp_path / "bench"
    write(folder / "documents.jsonl", documents if documents is not None else json.dumps(DOC) + "\n")
    write(folder / "cases.jsonl", cases)
    if manifest is not None:
        write(folder / "manifest.json", json.dumps(manifest))
    return folder


# --------------------------------------------------------------------------------------
# JSONL: the traps Heta falls into, fixed
# --------------------------------------------------------------------------------------
def test_string_answers_are_one_answer(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q", "expected": {"answers": "Harrow"}}])
    assert load_folder(folder).case("c1").expected.answers == ("Harrow",)
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q", "expected": {"answers": [1934, " x "]}}])
    assert load_folder(folder).case("c1").expected.answers == ("1934", "x")
    folder = jsonl_folder(tmp_path, cases=['{"case_id": "c1", "query": "q", "expected": {"answers": [NaN]}}'])
    with pytest.raises(
        BenchmarkFormatError, match=r"^cases\.jsonl:1: expected\.answers\[0\]: must be a string, got nan"
    ):
        load_folder(folder)


def test_nulls_mean_none(tmp_path: Path) -> None:
    cases = [
        {"case_id": "c1", "query": "q", "expected": None, "labels": None, "metadata": None},
        {"case_id": "c2", "query": "q", "expected": {"answers": None, "evidence": None, "metadata": None}},
        {
            "case_id": "c3",
            "query": "q",
            "expected": {"evidence": [{"reference_id": "d1", "locator": None, "metadata": None}]},
        },
    ]
    bench = load_folder(
        jsonl_folder(tmp_path, documents=[doc_row(text="x", metadata=None, source_uri=None)], cases=cases)
    )
    for case in bench.cases[:2]:
        assert case.expected.answers == () and case.expected.evidence == ()
        assert dict(case.labels) == {} and dict(case.metadata) == {}
    assert bench.case("c3").expected.evidence[0].to_dict() == {
        "reference_id": "d1",
        "locator": {},
        "text": None,
        "metadata": {},
    }


def test_text_null_is_an_error(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, documents=[doc_row(text="ok"), doc_row(document_id="d2", text=None)])
    with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:2: text: must be a string, got null$"):
        load_folder(folder)
    folder = jsonl_folder(tmp_path, documents=[doc_row(text=42)])
    with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:1: text: must be a string, got number"):
        load_folder(folder)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {},
            r"^documents\.jsonl:1: text: a document needs exactly one of text, data_base64, path or "
            r"source_uri",
        ),
        (
            {"text": "a", "data_base64": "YQ=="},
            r"^documents\.jsonl:1: text, data_base64: a document must set only one",
        ),
        ({"text": "a", "path": "x.txt"}, r"^documents\.jsonl:1: text, path: "),
        ({"data_base64": "not base64!"}, r"^documents\.jsonl:1: data_base64: is not valid base64"),
        ({"data_base64": "YWJj="}, r"^documents\.jsonl:1: data_base64: is not valid base64"),
        ({"data_base64": "-_-_"}, r"^documents\.jsonl:1: data_base64: is not valid base64"),
        ({"data_base64": None}, r"^documents\.jsonl:1: data_base64: is required"),
        ({"data_base64": ""}, r"^documents\.jsonl:1: data_base64: must not be empty"),
        ({"path": None}, r"^documents\.jsonl:1: path: is required"),
        ({"path": "missing.txt"}, r"^documents\.jsonl:1: path: 'missing.txt' does not exist"),
        ({"path": "."}, r"^documents\.jsonl:1: path: '\.' is not a file"),
        ({"source_uri": ""}, r"^documents\.jsonl:1: source_uri: must not be empty"),
        ({"text": "a", "metadata": [1]}, r"^documents\.jsonl:1: metadata: must be an object, got array"),
    ],
)
def test_document_source_errors(tmp_path: Path, extra: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(jsonl_folder(tmp_path, documents=[doc_row(**extra)]))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"name": "d.txt", "media_type": "text/plain", "text": "x"},
            r"^documents\.jsonl:1: document_id: is required$",
        ),
        (
            doc_row(document_id=None, text="x"),
            r"^documents\.jsonl:1: document_id: must be a string, got null",
        ),
        (doc_row(document_id="  ", text="x"), r"^documents\.jsonl:1: document_id: must not be empty"),
        (
            doc_row(document_id="a/b", text="x"),
            r"^documents\.jsonl:1: document_id: 'a/b' cannot be used in an object key",
        ),
        (doc_row(name="..", text="x"), r"^documents\.jsonl:1: name: '\.\.' cannot be used"),
        (
            doc_row(media_type=["text"], text="x"),
            r"^documents\.jsonl:1: media_type: must be a string, got array",
        ),
    ],
)
def test_document_field_errors(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(jsonl_folder(tmp_path, documents=[row]))


def test_data_base64_decodes_and_allows_line_wrapping(tmp_path: Path) -> None:
    payload = bytes(range(256)) * 3
    wrapped = base64.encodebytes(payload).decode()  # MIME style, with newlines
    bench = load_folder(jsonl_folder(tmp_path, documents=[doc_row(data_base64=wrapped)]))
    assert bench.documents[0].read_bytes() == payload


def test_integer_ids_are_accepted_like_heta(tmp_path: Path) -> None:
    bench = load_folder(
        jsonl_folder(tmp_path, documents=[doc_row(document_id=7, text="x")], cases=[{"case_id": 1, "query": "q"}])
    )
    assert bench.documents[0].document_id == "7" and bench.cases[0].case_id == "1"


@pytest.mark.hostile
def test_path_parent_escape_is_refused(tmp_path: Path) -> None:
    folder, _ = outside_setup(tmp_path)
    write_jsonl(folder / "documents.jsonl", [doc_row(text="a"), doc_row(document_id="d2", path="../secret.txt")])
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^documents\.jsonl:2: path: '\.\./secret\.txt' is outside the benchmark folder",
    ):
        load_folder(folder)
    bench = load_folder(folder, allow_outside_paths=True)
    assert bench.document("d2").read_bytes() == b"secret"
    with pytest.raises(BenchmarkFormatError, match="outside the benchmark folder"):
        load_benchmark(folder, manifest=SMALL)
    assert load_benchmark(folder, manifest=SMALL, allow_outside_paths=True).document("d2").read_bytes() == b"secret"


@pytest.mark.hostile
def test_path_absolute_is_refused(tmp_path: Path) -> None:
    folder, secret = outside_setup(tmp_path)
    for value in ("/etc/hostname", str(secret), str(folder / "documents.jsonl")):
        write_jsonl(folder / "documents.jsonl", [doc_row(path=value)])
        with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:1: path: '.*' is an absolute path"):
            load_folder(folder)
    write_jsonl(folder / "documents.jsonl", [doc_row(path=str(secret))])
    assert load_folder(folder, allow_outside_paths=True).documents[0].read_bytes() == b"secret"


@pytest.mark.hostile
@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_path_symlink_pointing_outside_is_refused(tmp_path: Path) -> None:
    folder, secret = outside_setup(tmp_path)
    (folder / "files").mkdir()
    (folder / "files" / "link.txt").symlink_to(secret)
    (folder / "files" / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    (folder / "inside.txt").write_text("inside", encoding="utf-8")
    (folder / "files" / "good.txt").symlink_to(folder / "inside.txt")
    for value in ("files/link.txt", "files/dirlink/secret.txt"):
        write_jsonl(folder / "documents.jsonl", [doc_row(path=value)])
        with pytest.raises(
            BenchmarkFormatError, match=r"^documents\.jsonl:1: path: '.*' is outside the benchmark folder"
        ):
            load_folder(folder)
    write_jsonl(
        folder / "documents.jsonl",
        [doc_row(path="files/good.txt"), doc_row(document_id="d2", path="files/../inside.txt")],
    )
    bench = load_folder(folder)
    assert [d.read_bytes() for d in bench.documents] == [b"inside", b"inside"]


@pytest.mark.hostile
def test_root_dir_is_the_containment_boundary(tmp_path: Path) -> None:
    folder, _ = outside_setup(tmp_path)
    write_jsonl(folder / "documents.jsonl", [doc_row(path="secret.txt")])
    bench = load_folder(folder, root_dir=tmp_path)  # tmp_path holds secret.txt
    assert bench.documents[0].read_bytes() == b"secret"


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, '{"case_id": "c2", "query": }'])
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl:2:28: invalid JSON: Expecting value"):
        load_folder(folder)


def test_blank_lines_are_skipped_and_lines_counted(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, "", "   ", {"case_id": "c2"}])
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl:4: query: is required$"):
        load_folder(folder)


@pytest.mark.parametrize(
    ("row", "kind"), [("[1, 2]", "array"), ('"text"', "string"), ("3", "number"), ("null", "null")]
)
def test_non_object_rows(tmp_path: Path, row: str, kind: str) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, row])
    with pytest.raises(BenchmarkFormatError, match=rf"^cases\.jsonl:2: a JSONL row must be a JSON object, got {kind}$"):
        load_folder(folder)


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    folder = jsonl_folder(
        tmp_path,
        documents=[doc_row(text="a"), doc_row(document_id="d2", text="b"), "", doc_row(text="c")],
    )
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^documents\.jsonl:4: document_id: duplicate document_id 'd1' \(first on line 1\)",
    ):
        load_folder(folder)
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, {"case_id": " c1 ", "query": "q2"}])
    with pytest.raises(
        BenchmarkFormatError, match=r"^cases\.jsonl:2: case_id: duplicate case_id 'c1' \(first on line 1\)"
    ):
        load_folder(folder)


@pytest.mark.parametrize(
    ("expected", "message"),
    [
        (
            {"evidence": [{"metadata": {"a": 1}}]},
            r"^cases\.jsonl:1: expected\.evidence\[0\]: "
            r"evidence must set at least one of reference_id, locator, or text$",
        ),
        (
            {"evidence": [{"reference_id": "d1"}, {"locator": {}}]},
            r"^cases\.jsonl:1: expected\.evidence\[1\]: evidence must set",
        ),
        ({"evidence": ["d1"]}, r"^cases\.jsonl:1: expected\.evidence\[0\]: must be an object, got string"),
        (
            {"evidence": {"reference_id": "d1"}},
            r"^cases\.jsonl:1: expected\.evidence: must be a list of evidence objects, got object",
        ),
        ({"evidence": [{"text": ""}]}, r"^cases\.jsonl:1: expected\.evidence\[0\]\.text: must not be empty"),
        (
            {"evidence": [{"locator": "raw/x"}]},
            r"^cases\.jsonl:1: expected\.evidence\[0\]\.locator: must be an object, got string",
        ),
        ({"answers": ["a", None]}, r"^cases\.jsonl:1: expected\.answers\[1\]: is required"),
        ({"answers": ["a", " "]}, r"^cases\.jsonl:1: expected\.answers\[1\]: must not be empty"),
        (
            {"answers": {"a": 1}},
            r"^cases\.jsonl:1: expected\.answers: must be a list of strings or one string, got object",
        ),
        ({"metadata": 3}, r"^cases\.jsonl:1: expected\.metadata: must be an object, got number"),
    ],
)
def test_case_expected_errors(tmp_path: Path, expected: dict[str, Any], message: str) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q", "expected": expected}])
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(folder)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"case_id": "c1", "query": "q", "expected": []},
            r"^cases\.jsonl:1: expected: must be an object, got array",
        ),
        (
            {"case_id": "c1", "query": "q", "labels": "x"},
            r"^cases\.jsonl:1: labels: must be an object, got string",
        ),
        ({"case_id": "c1", "query": True}, r"^cases\.jsonl:1: query: must be a string, got boolean"),
        (
            {"case_id": 1.5, "query": "q"},
            r"^cases\.jsonl:1: case_id: must be a string or integer, got number",
        ),
    ],
)
def test_case_field_errors(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(jsonl_folder(tmp_path, cases=[row]))


def test_unknown_keys_ignored_and_unicode_line_separators_kept(tmp_path: Path) -> None:
    text = "first\u2028second\u0085third"
    folder = jsonl_folder(
        tmp_path,
        documents=[{**doc_row(text=text), "extra": 1}],
        cases=[{"case_id": "c1", "query": "q", "whatever": [1], "expected": {"answers": ["a"], "bonus": True}}],
    )
    path = folder / "documents.jsonl"
    path.write_text(
        path.read_text(encoding="utf-8").replace("\\u2028", "\u2028").replace("\\u0085", "\u0085"),
        encoding="utf-8",
    )
    assert "\u2028" in path.read_text(encoding="utf-8")
    bench = load_folder(folder)
    assert bench.documents[0].read_bytes().decode() == text
    assert bench.case("c1").expected.answers == ("a",)


def test_invalid_utf8_and_bom(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path)
    (folder / "cases.jsonl").write_bytes(
        b'\xef\xbb\xbf{"case_id": "c1", "query": "q"}\n{"case_id": "c2", "query": "\xff"}\n'
    )
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl:2: not valid UTF-8"):
        load_folder(folder)
    (folder / "cases.jsonl").write_bytes(b'\xef\xbb\xbf{"case_id": "c1", "query": "q"}\n')
    assert load_folder(folder).cases[0].case_id == "c1"


def test_empty_files_and_missing_files(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[])
    (folder / "cases.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl: no cases"):
        load_folder(folder)
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_jsonl_benchmark(folder / "documents.jsonl", folder / "nope.jsonl", manifest=SMALL)
    with pytest.raises(BenchmarkFormatError, match=r"^manifest: .*name is required"):
        load_jsonl_benchmark(folder / "documents.jsonl", folder / "cases.jsonl", manifest={"version": "1"})


def test_jsonl_labels_value_and_metadata_kept(tmp_path: Path) -> None:
    case = {
        "case_id": "c1",
        "query": " Where? ",
        "expected": {"answers": ["a"], "value": {"year": 1901}, "metadata": {"m": 1}},
        "labels": {"hops": 2},
        "metadata": {"note": "n"},
    }
    bench = load_folder(jsonl_folder(tmp_path, cases=[case]), evaluators=("answer_exact_match",))
    got = bench.case("c1")
    assert got.query == "Where?"
    assert got.expected.value == {"year": 1901} and dict(got.expected.metadata) == {"m": 1}
    assert dict(got.labels) == {"hops": 2} and dict(got.metadata) == {"note": "n"}
    assert bench.evaluators() == ("answer_exact_match",)
    assert [u.unit_id for u in bench.units] == ["corpus"]


# --------------------------------------------------------------------------------------
# 1. integers over Python's digit limit, and very deep nesting
# --------------------------------------------------------------------------------------
@pytest.mark.hostile
@needs_limit
def test_jsonl_huge_integer_names_file_line_and_column(tmp_path: Path) -> None:
    second = '{"case_id": "c2", "query": "q", "labels": {"n": ' + HUGE + "}}"
    folder = jsonl_folder_from_text(tmp_path, '{"case_id": "c1", "query": "q"}\n' + second + "\n")
    column = second.index(HUGE) + 1
    with pytest.raises(
        BenchmarkFormatError,
        match=rf"^cases\.jsonl:2:{column}: invalid JSON: an integer with more than {LIMIT} digits$",
    ):
        load_benchmark(folder)


@pytest.mark.hostile
def test_jsonl_deep_nesting_names_file_and_line(tmp_path: Path) -> None:
    folder = jsonl_folder_from_text(tmp_path, "\n" + '{"case_id": "c", "query": "q", "labels": {"n": ' + DEEP + "}}\n")
    with pytest.raises(
        BenchmarkFormatError,
        match=rf"^cases\.jsonl:2: invalid JSON: nested more than {sys.getrecursionlimit()} levels deep "
        r"\(100002 levels\)$",
    ):
        load_benchmark(folder)


@pytest.mark.hostile
@needs_limit
def test_jsonl_documents_huge_integer(tmp_path: Path) -> None:
    folder = jsonl_folder_from_text(
        tmp_path, '{"case_id": "c", "query": "q"}\n', documents='{"document_id": ' + HUGE + "}\n"
    )
    with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:1:17: invalid JSON: an integer with more"):
        load_jsonl_benchmark(folder / "documents.jsonl", folder / "cases.jsonl", manifest=MANIFEST)


@pytest.mark.hostile
@needs_limit
def test_digits_inside_strings_do_not_mislead_the_position(tmp_path: Path) -> None:
    long_string = '"' + "9" * 5000 + '"'
    cases = '{"case_id": "c", "query": ' + long_string + ', "labels": {"n": ' + HUGE + "}}"
    column = cases.index(HUGE) + 1
    with pytest.raises(BenchmarkFormatError, match=rf"^cases\.jsonl:1:{column}: invalid JSON: an integer with more"):
        load_benchmark(jsonl_folder_from_text(tmp_path, cases + "\n"))
