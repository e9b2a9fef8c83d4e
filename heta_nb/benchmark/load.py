"""``load_benchmark``: a benchmark folder's format found from the files it holds (with hints
for nested folders, compressed files and missing qrels splits), and its ``manifest.json``."""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_nb._util.fs import kind_of
from heta_nb.benchmark.formats.beir import load_beir
from heta_nb.benchmark.formats.jsonl import load_jsonl_benchmark
from heta_nb.benchmark.formats.multihop_rag import load_multihop_rag
from heta_nb.benchmark.formats.parsing import StrPath, parse_manifest, read_json
from heta_nb.benchmark.types import Benchmark
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.json import json_type_name
from heta_nb.model.report import BenchmarkManifest

__all__ = ["BENCHMARK_FORMATS", "load_benchmark"]

#: Formats :func:`load_benchmark` understands.
BENCHMARK_FORMATS: tuple[str, ...] = ("jsonl", "beir", "multihop_rag")
#: The keys a folder's ``manifest.json`` may hold (BenchmarkManifest's fields).
_MANIFEST_KEYS = frozenset(
    ("name", "version", "split", "task_type", "build_scope", "homepage", "license", "citation", "metadata")
)


def _layouts(split: str) -> dict[str, tuple[str, ...]]:
    """The files each format needs (BEIR's qrels file depends on the split)."""
    return {
        "jsonl": ("documents.jsonl", "cases.jsonl"),
        "beir": ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"),
        "multihop_rag": ("corpus.json", "MultiHopRAG.json"),
    }


_LAYOUT_TITLES = {"jsonl": "Heta JSONL", "beir": "BEIR", "multihop_rag": "MultiHop-RAG"}


_COMPRESSED = (".gz", ".zip", ".bz2", ".xz")
#: How many subfolders the "no benchmark found" message looks into.
_NESTED_LIMIT = 50


def _all_layout_files(layouts: Mapping[str, tuple[str, ...]]) -> list[str]:
    return list(dict.fromkeys(f for files in layouts.values() for f in files))


def _nested_benchmarks(folder: Path, layouts: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Subfolders (one level, e.g. an unzipped ``scifact/``) that match a layout (error path only)."""
    try:
        children = sorted(itertools.islice((c for c in folder.iterdir() if c.is_dir()), _NESTED_LIMIT))
    except OSError:
        return []
    found = []
    for child in children:
        for fmt, files in layouts.items():
            matches = all((child / f).is_file() for f in files)
            if not matches and fmt == "beir":  # any split will do here
                matches = all((child / f).is_file() for f in files[:2]) and any((child / "qrels").glob("*.tsv"))
            if matches:
                found.append(f"{child.name!r} ({_LAYOUT_TITLES[fmt]})")
                break
    return found


def _detect(folder: Path, split: str) -> str:
    layouts = _layouts(split)
    found = [fmt for fmt, files in layouts.items() if all((folder / f).is_file() for f in files)]
    if len(found) == 1:
        return found[0]
    if found:
        raise BenchmarkFormatError(
            f"{folder}: the folder matches several benchmark formats ({', '.join(found)}); pass format="
        )
    for files in layouts.values():  # every file there, but one is a FIFO, a device...: say which, on one line
        if all((folder / f).exists() for f in files):
            for name in files:
                mode = os.stat(folder / name).st_mode
                if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                    raise BenchmarkFormatError(f"{folder}: {name}: not a regular file: it is {kind_of(mode)}")
    lines = [f"{folder}: no benchmark found. Looked for:"]
    for fmt, files in layouts.items():
        missing = [f for f in files if not (folder / f).is_file()]
        lines.append(f"  - {_LAYOUT_TITLES[fmt]} (format={fmt!r}): {' + '.join(files)} (missing {', '.join(missing)})")
    compressed = [
        f"{f}{ext}" for f in _all_layout_files(layouts) for ext in _COMPRESSED if (folder / f"{f}{ext}").is_file()
    ]
    if compressed:
        lines.append(f"  found {', '.join(compressed)}: decompress first (the loaders read plain files only)")
    nested = _nested_benchmarks(folder, layouts)
    if nested:
        lines.append(f"  a subfolder holds a benchmark, load it instead: {', '.join(nested)}")
    qrels = folder / "qrels"
    if qrels.is_dir():
        splits = sorted(p.stem for p in qrels.glob("*.tsv"))
        if splits:
            lines.append(f"  qrels/ has the splits {splits}; pass split=")
    raise BenchmarkFormatError("\n".join(lines))


def _folder_manifest(folder: Path, manifest: Any) -> BenchmarkManifest:
    if manifest is not None:
        return parse_manifest(manifest, "manifest")
    path = folder / "manifest.json"
    if not path.exists():  # a FIFO or a device is there: read_json says what it is
        raise BenchmarkFormatError(
            f"{folder}: a JSONL benchmark needs a manifest: pass manifest=BenchmarkManifest(name=..., "
            "version=..., split=..., task_type=...) or add a manifest.json to the folder"
        )
    value = read_json(path, "manifest.json")
    if not isinstance(value, dict):
        raise BenchmarkFormatError(f"manifest.json: must contain a JSON object, got {json_type_name(value)}")
    unknown = sorted(set(value) - _MANIFEST_KEYS)
    if unknown:
        raise BenchmarkFormatError(
            f"manifest.json: unknown key(s) {unknown}; allowed: {', '.join(sorted(_MANIFEST_KEYS))}"
        )
    return parse_manifest(value, "manifest.json")


def load_benchmark(
    source: StrPath,
    *,
    format: str | None = None,  # noqa: A002 - the natural name
    manifest: BenchmarkManifest | Mapping[str, Any] | None = None,
    split: str = "test",
    evaluators: Sequence[Any] | None = None,
    allow_outside_paths: bool = False,
) -> Benchmark:
    """Load a benchmark folder, detecting its format from the files it holds.

    - Heta JSONL: ``documents.jsonl`` + ``cases.jsonl`` (+ optional ``manifest.json``
      with BenchmarkManifest fields; ``manifest=`` overrides it).
    - BEIR: ``corpus.jsonl`` + ``queries.jsonl`` + ``qrels/{split}.tsv``.
    - MultiHop-RAG: ``corpus.json`` + ``MultiHopRAG.json``.

    Args:
        source: the benchmark folder.
        format: ``"jsonl"``, ``"beir"`` or ``"multihop_rag"`` to skip detection.
        manifest: the manifest of a JSONL benchmark (BEIR and MultiHop-RAG have fixed ones).
        split: the BEIR qrels split (other formats ignore it).
        evaluators: default evaluators (default: the format's, see the module constants).
        allow_outside_paths: JSONL only, see :func:`load_jsonl_benchmark`.

    Raises:
        BenchmarkFormatError: no or several formats match, or the files are malformed.
        FileNotFoundError: the folder (or, with ``format=``, a file) does not exist.
    """
    folder = Path(source)
    if not folder.exists():
        raise FileNotFoundError(f"{folder}: no such benchmark folder")
    if not folder.is_dir():
        raise BenchmarkFormatError(f"{folder}: load_benchmark expects a benchmark folder, not a file")
    if format is None:
        fmt = _detect(folder, split.strip().lower())
    else:
        fmt = format.strip().lower().replace("-", "_")
        if fmt not in BENCHMARK_FORMATS:
            raise BenchmarkFormatError(f"format must be one of {', '.join(BENCHMARK_FORMATS)}, got {format!r}")
    if fmt == "jsonl":
        return load_jsonl_benchmark(
            folder / "documents.jsonl",
            folder / "cases.jsonl",
            manifest=_folder_manifest(folder, manifest),
            root_dir=folder,
            evaluators=evaluators,
            allow_outside_paths=allow_outside_paths,
        )
    if manifest is not None:
        raise BenchmarkFormatError(f"manifest= applies to JSONL benchmarks only; {fmt} has a fixed manifest")
    if fmt == "beir":
        return load_beir(folder, split=split, evaluators=evaluators)
    return load_multihop_rag(folder, evaluators=evaluators)
