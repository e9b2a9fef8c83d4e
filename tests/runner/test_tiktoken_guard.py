"""Offline recipe builds ask tiktoken once per build."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, heta_available, heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb
from heta_nb.runner.tiktoken_guard import EncodingUnavailableError, fail_fast_encodings

try:
    import tiktoken
except ImportError:  # the core on Python 3.10 and 3.13: no [heta] extra, so no tiktoken
    tiktoken = None


needs_tiktoken = pytest.mark.skipif(tiktoken is None, reason="needs tiktoken (the [heta] extra)")


_lookups = {"on": False, "count": 0}


def _count_lookups(event: str, args: Any) -> None:
    if event == "socket.getaddrinfo" and _lookups["on"]:
        _lookups["count"] += 1


sys.addaudithook(_count_lookups)  # (audit hooks stay for the process; it counts only when asked)


def lookups_during(func: Any) -> tuple[Any, int]:
    """``func()`` and the DNS lookups the process made meanwhile (the runner queries in its own thread)."""
    _lookups.update(on=True, count=0)
    try:
        return func(), _lookups["count"]
    finally:
        _lookups["on"] = False


def _cl100k_loads() -> bool:
    if tiktoken is None:
        return False
    try:
        tiktoken.get_encoding("cl100k_base")
    except Exception:  # noqa: BLE001 - no network and no cached file: what this test is about
        return False
    return True


def await_kb(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def heta_alone(root: Path) -> Any:
    """Heta's own build of the same documents, as its BenchmarkRunner writes and builds them."""
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace

    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=heta_jsonl_benchmark(),
            recipe=heta_recipe(root),
            knowledge_base_name="lighthouse mini",
            query_modes=("full_text_search",),
            workspace=BenchmarkWorkspace(root_dir=root / "ws", cache_dir=root / "ws" / "cache"),
            config=BenchmarkRunConfig(top_k=3, report_id="heta", persist_report=False),
        )
    )
    return result.knowledge_bases[0]


@pytest.mark.skipif(tiktoken is not None, reason="tiktoken is installed")
def test_without_tiktoken_a_build_block_does_nothing() -> None:
    reasons: dict[str, str] = {}
    with fail_fast_encodings(reasons.setdefault):
        pass
    assert reasons == {} and "tiktoken" not in sys.modules


@needs_tiktoken
def test_an_encoding_that_failed_fails_at_once_until_the_last_block_ends() -> None:
    original = tiktoken.get_encoding
    reasons: dict[str, str] = {}
    with fail_fast_encodings(reasons.setdefault):
        with pytest.raises(ValueError, match="Unknown encoding"):  # tiktoken's own error, the first time
            tiktoken.get_encoding("no_such_encoding")
        with fail_fast_encodings():  # a second build at the same time shares what failed
            with pytest.raises(EncodingUnavailableError, match="'no_such_encoding' is unavailable .*ValueError"):
                tiktoken.get_encoding("no_such_encoding")
        assert tiktoken.get_encoding is not original  # the outer build still runs
        with pytest.raises(EncodingUnavailableError):
            tiktoken.get_encoding("no_such_encoding")
    assert tiktoken.get_encoding is original
    assert list(reasons) == ["no_such_encoding"] and reasons["no_such_encoding"].startswith("ValueError: ")
    with pytest.raises(ValueError, match="Unknown encoding"):  # after the build: tiktoken asks again
        tiktoken.get_encoding("no_such_encoding")


@needs_tiktoken
def test_the_wrapper_is_removed_when_the_build_fails() -> None:
    original = tiktoken.get_encoding
    with pytest.raises(RuntimeError, match="build failed"), fail_fast_encodings():
        raise RuntimeError("build failed")
    assert tiktoken.get_encoding is original


@requires_heta
@needs_tiktoken
@pytest.mark.skipif(heta_available() and _cl100k_loads(), reason="tiktoken's cl100k_base loads on this machine")
def test_an_offline_recipe_build_tries_the_download_once_and_keeps_hetas_fallback_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from heta_framework.kb import KnowledgeBase

    caplog.set_level(logging.DEBUG, logger="heta_nb.runner")

    # Importing LiteLLM (the judges' tests do) points TIKTOKEN_CACHE_DIR at its bundled files for the
    # whole process, and tiktoken keeps what it loaded: undo both here, as on a machine without LiteLLM.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    if _cl100k_loads():
        pytest.skip("tiktoken's cl100k_base loads on this machine")

    documents = (FIXTURES / "documents.jsonl").read_text(encoding="utf-8").count("\n")
    assert documents >= 5
    events: list[Any] = []
    report, lookups = lookups_during(
        lambda: heta_nb.evaluate(
            heta_jsonl_benchmark(),
            recipe=heta_recipe(tmp_path / "ours"),
            knowledge_base_name="lighthouse mini",
            query_modes=["full_text_search"],
            evaluators=["recall@3"],
            progress=False,
            on_event=events.append,
            store=None,
        )
    )
    assert 1 <= lookups <= 2  # one download attempt (requests may ask for IPv4 and IPv6), not one per document
    # not a warning (Heta's own fallback; the scores do not depend on it): a note on the build's line
    assert not [e for e in events if e.kind == "warning" and "tiktoken" in e.message]
    (note,) = [e.note for e in events if e.kind == "build_finished" and e.note]
    # one short line saying what was done instead; the exception's text only in the debug log
    assert (
        note == "document tokens counted as words, Heta's fallback: tiktoken's 'cl100k_base' is not available offline"
    )
    assert len(note) <= 160 and "Error" not in note
    (detail,) = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG and "tiktoken" in r.getMessage()]
    assert "'cl100k_base'" in detail and "Error" in detail and "TIKTOKEN_CACHE_DIR" in detail
    assert list(report.metadata["heta_nb"]["build_notes"]) == [note]
    assert "tiktoken" not in str(report.metadata["heta_nb"]["warnings"])
    assert tiktoken.get_encoding.__module__ == "tiktoken.registry"  # tiktoken's own again

    # The KB holds what Heta's own build computes (it falls back for every document, slowly).
    ours = await_kb(KnowledgeBase.load(recipe=heta_recipe(tmp_path / "ours"), name="lighthouse mini"))
    theirs, their_lookups = lookups_during(lambda: heta_alone(tmp_path / "heta"))
    assert their_lookups >= documents  # what heta_nb saves: Heta alone tries every document
    counts = ours.run_record.artifacts["document_token_counts"]
    assert counts == theirs.run_record.artifacts["document_token_counts"]
    assert counts and all(isinstance(n, int) and n > 0 for n in counts.values())
