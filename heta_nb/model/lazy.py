"""Case results kept as their JSON bytes until opened: a report read from a file holds one
compact JSON document per case result (:class:`LazyResults`) beside the
:class:`~heta_nb.model.collect.RowCollector` every view reads, not the parsed tree.

A large report then takes about the memory of its file (the parsed tree takes three
times that). A case result is parsed when it is first opened (``report.case_results[i]``'s
response, scores or metadata), and ``report.raw`` parses every one once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from heta_nb.model.case import EvaluationCaseResult
from heta_nb.model.collect import RowCollector
from heta_nb.model.json import dumps_compact, utf8_json
from heta_nb.model.parse import paused_gc

__all__ = ["LazyResults", "encode_report_text", "encode_report_utf8", "lazify"]


class LazyResults:
    """The case results of a report read from a file, each as its compact JSON (orjson's).

    Args:
        blobs: One JSON document per case result, in report order. orjson wrote them from
            values orjson read, so parsing one gives the values the file held, exactly.
        rows: What the views read of every case result (collected while reading).
    """

    __slots__ = ("_names", "blobs", "rows")

    def __init__(self, blobs: list[bytes], rows: RowCollector) -> None:
        self.blobs = blobs
        self.rows = rows
        self._names: dict[str, list[Any]] = {}

    def __len__(self) -> int:
        return len(self.blobs)

    def __reduce__(self) -> tuple[Any, ...]:
        return (LazyResults, (self.blobs, self.rows))

    def load(self, index: int) -> dict[str, Any]:
        """A fresh parse of case result ``index`` (its JSON object)."""
        import orjson

        loaded: dict[str, Any] = orjson.loads(self.blobs[index])
        return loaded

    def records(self) -> tuple[EvaluationCaseResult, ...]:
        """One case result per row, each parsed when it is first opened."""
        make = EvaluationCaseResult._lazy
        return tuple(make(self, row) for row in range(len(self.blobs)))

    def _names_of(self, name: str, index: dict[Any, int]) -> list[Any]:
        """The keys of one of :attr:`rows`' code indexes, by code (code ``i`` is the ``i``-th key)."""
        names = self._names.get(name)
        if names is None:
            names = self._names[name] = list(index)
        return names

    def light(self, row: int, key: str) -> Any:
        """What row ``row`` holds for ``key`` (``case_id``, ``query``, ``query_mode``,
        ``ok`` or ``unit_id``), read from :attr:`rows` without parsing the row."""
        rows = self.rows
        if key == "case_id":
            return self._names_of("case", rows.case_index)[rows.case_code[row]]
        if key == "query":
            return rows.queries[row]
        if key == "query_mode":
            return self._names_of("mode", rows.mode_index)[rows.mode_code[row]]
        if key == "ok":
            return rows.error_code[row] < 0
        if key == "unit_id":
            return self._names_of("unit", rows.unit_index)[rows.unit_code[row]]
        raise KeyError(key)


def lazify(top: dict[str, Any]) -> LazyResults:
    """Turn a validated report's ``case_results`` (a list orjson read) into :class:`LazyResults`.

    Each result is collected for the views, encoded once with orjson, and dropped from
    the list as soon as it is encoded, so the parsed tree is freed while it is read.

    Args:
        top: The report's JSON object; its ``case_results`` list is emptied here.

    Returns:
        The lazy results (the caller puts them in place of the list).
    """
    import orjson

    results: list[Any] = top["case_results"]
    rows = RowCollector()
    add = rows.add
    dumps = orjson.dumps
    blobs: list[bytes] = []
    append = blobs.append
    for index, result in enumerate(results):
        add(result)
        # a copy of exactly its size: orjson's own buffer keeps about a quarter more
        append(bytes(memoryview(dumps(result))))
        results[index] = None
    results.clear()
    return LazyResults(blobs, rows)


def _report_pieces(top: dict[str, Any], count: int, case_json: Callable[[int], Any]) -> Iterator[str]:
    """The JSON text of a report, piece by piece: ``{``, each member and case result, separators, ``}``."""
    yield "{"
    for position, (key, value) in enumerate(top.items()):
        yield f"{',' if position else ''}{dumps_compact(key)}:"
        if key == "case_results":
            yield "["
            for index in range(count):
                yield ("," if index else "") + dumps_compact(case_json(index))
            yield "]"
        else:
            yield dumps_compact(value)
    yield "}"


def encode_report_text(top: dict[str, Any], count: int, case_json: Callable[[int], Any]) -> str:
    """``dumps_compact`` of a report whose case results are given one at a time.

    Args:
        top: The report's JSON object (its ``case_results`` value is not read).
        count: How many case results.
        case_json: Gives case result ``i``'s JSON object.

    Returns:
        The same text as ``dumps_compact`` of the whole report, without building it whole.
    """
    with paused_gc():  # each result is parsed and dropped again: nothing for the collector to find
        return "".join(_report_pieces(top, count, case_json))


def encode_report_utf8(top: dict[str, Any], count: int, case_json: Callable[[int], Any]) -> bytes:
    """:func:`encode_report_text` as UTF-8 (lone surrogates escaped, as :func:`utf8_json` does).

    Each piece is encoded on its own and the bytes joined once: no text of the whole report
    (up to 4 bytes a character in memory) is built, nor copied into one.
    """
    with paused_gc():
        return b"".join([utf8_json(piece) for piece in _report_pieces(top, count, case_json)])
