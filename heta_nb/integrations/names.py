"""Names and values an experiment tracker accepts: metric, param and tag keys, flattened manifests.

MLflow (``mlflow/utils/validation.py``) allows only letters, digits, ``_ - . : /`` and spaces
in a key (``ndcg@5`` is refused), no name that is not its own normalised path (``a//b``,
``x/``, ``/x``, a ``.`` or ``..`` segment, a key starting ``..``), 250 characters per key and
6,000 per param value. Every key heta_nb logs is made from the names a report carries
(metrics, modes, judges, manifest keys: untrusted) by :func:`tracker_key`, one path segment at
a time: ``@`` becomes ``_at_``, any other character MLflow refuses ``_``, a non-ASCII one its
ASCII letter (``é`` -> ``e``) with a short hash of the segment after it (``e_3f1c``, so ``é``
and ``ü`` stay apart), empty segments go, a segment of dots or starting ``..`` has its dots
written ``_``; a key too long is cut before its trusted suffix (``/ci_low``), which is kept
whole, and ends in a hash of the whole name (names differing only after the cut stay apart).

:class:`KeyBook` makes the keys of one logging call unique: names that normalise to the same
key (``ndcg@5`` and ``ndcg_at_5``; a flattened ``{"a.b": 1}`` and ``{"a": {"b": 2}}``) get
a short stable hash of their original name, except the one whose key is its name unchanged;
:func:`check_keys` refuses (``ValueError``) any key MLflow would, before anything is logged.
"""

from __future__ import annotations

import hashlib
import json
import math
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from heta_nb._util.text import shorten

__all__ = [
    "MAX_KEY",
    "MAX_VALUE",
    "STATUS_TAG",
    "KeyBook",
    "Name",
    "check_keys",
    "finite_metrics",
    "flatten",
    "is_number",
    "param_value",
    "renamed",
    "shorten_name",
    "status_key",
    "tracker_key",
]

MAX_KEY = 250
"""MLflow's ``MAX_ENTITY_KEY_LENGTH``: the longest metric, param or tag key."""
MAX_VALUE = 500
"""Characters kept of a param value: a value longer than this is not a setting anyone reads."""
MAX_ITEMS = 20
"""A list with more items is logged as ``"[N items]"``."""
STATUS_TAG = "heta_nb.status"
"""The tag a metric key gets instead of a number when there is none (``heta_nb.status/ndcg_at_5/full_text_search``)."""
_INVALID = re.compile(r"[^\w\-. :/]", re.ASCII)
_VALID = re.compile(r"^[/\w.\- :]*$", re.ASCII)
_HASH = 6
"""Hex digits of the hash that tells apart names sharing a key."""


def _digest(text: str, size: int = _HASH) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:size]


def _segment(text: str) -> str:
    """One path segment as MLflow takes it (never empty, never ``.``, never starting ``..``)."""
    out = text.replace("@", "_at_")
    if not out.isascii():
        folded = "".join(
            c if c.isascii() else (unicodedata.normalize("NFKD", c).encode("ascii", "ignore").decode() or "_")
            for c in out
        )
        out = f"{folded}_{_digest(text, 4)}"
    out = _INVALID.sub("_", out)
    if out.startswith(".."):
        out = "_" * (len(out) - len(out.lstrip("."))) + out.lstrip(".")
    return "_" if out == "." else out


def _path(parts: Iterable[str]) -> str:
    return "/".join(_segment(s) for p in parts for s in str(p).split("/") if s)


def _fit(head: str, tail: str, original: str, room: int | None = None) -> str:
    """``head + tail`` within :data:`MAX_KEY`: a head too long is cut and ends in a hash of ``original``."""
    room = MAX_KEY - len(tail) if room is None else room
    if len(head) <= room:
        return head + tail
    cut = _path([head[: room - _HASH - 3].rstrip("/")])
    return f"{cut}_{_digest(original, _HASH + 2)}{tail}"


def tracker_key(*parts: str, suffix: str = "") -> str:
    """``"ndcg@5", "full_text_search"`` -> ``"ndcg_at_5/full_text_search"``: a valid MLflow key.

    Args:
        *parts: The key's untrusted parts, joined with ``/`` (each ``/`` in them a path
            separator; empty parts and segments left out).
        suffix: A trusted ending (``"ci_low"``), kept whole after a ``/`` when the key is cut.

    Returns:
        The key, each segment normalised (see the module docstring), at most :data:`MAX_KEY`
        characters. Not unique by itself: :class:`KeyBook` makes a call's keys unique.
    """
    head = _path(parts) or "_"
    return _fit(head, f"/{suffix}" if suffix else "", json.dumps(parts))


def status_key(metric_key: str) -> str:
    """``"ndcg_at_5/full_text_search"`` -> ``"heta_nb.status/ndcg_at_5/full_text_search"``: the tag
    that says why a metric key has no number (``"n/a: full_text_search returns no answers"``).

    Args:
        metric_key: The metric's key (already made valid by :func:`tracker_key`, prefix included).

    Returns:
        A valid MLflow key.
    """
    return tracker_key(STATUS_TAG, metric_key)


def _refusal(key: str) -> str:
    """Why MLflow would refuse ``key`` as a metric, param or tag key (``""``: it would not)."""
    if not key:
        return "empty"
    if len(key) > MAX_KEY:
        return f"longer than {MAX_KEY} characters"
    if not _VALID.match(key):
        return "a character MLflow refuses"
    norm = posixpath.normpath(key)
    if norm != key or norm == "." or norm.startswith(("..", "/")):
        return "not its own normalised path"
    return ""


def check_keys(**groups: Iterable[str]) -> None:
    """Raise ``ValueError`` if MLflow would refuse one of the keys (``params=..., metrics=...``):
    called before anything is logged, so no run ends half-logged."""
    bad = [(kind, key, why) for kind, keys in groups.items() for key in keys if (why := _refusal(key))]
    if bad:
        shown = "; ".join(f"{kind} {key[:80]!r}: {why}" for kind, key, why in bad[:3])
        raise ValueError(f"{len(bad)} key(s) MLflow would refuse ({shown}); nothing was logged")


@dataclass(frozen=True)
class Name:
    """An untrusted name a key is made of: ``parts`` joined with ``sep`` under ``prefix``,
    then a trusted ``suffix`` (``n``, ``ci_low``) kept whole."""

    parts: tuple[str, ...]
    sep: str = "/"
    prefix: str = ""
    suffix: str = ""

    def __truediv__(self, child: str) -> Name:
        return replace(self, suffix=f"{self.suffix}/{child}" if self.suffix else child)

    @property
    def head(self) -> Name:
        return replace(self, suffix="")

    @property
    def text(self) -> str:
        """The name as given: parts that hold the separator are quoted (``recipe["a.b"]``)."""
        shown = "".join(
            (p if not i else f"{self.sep}{p}") if p and self.sep not in p and "/" not in p else f"[{json.dumps(p)}]"
            for i, p in enumerate(self.parts)
        )
        return "/".join(t for t in (self.prefix, shown, self.suffix) if t)

    def plain(self) -> str:
        """The head's key before any hash: its normalised text."""
        return _path([self.prefix, self.sep.join(self.parts)]) or "_"

    def exact(self) -> bool:
        """Its key is its name unchanged (no character mapped, no part holding a separator)."""
        joined = "/".join(t for t in (self.prefix, self.sep.join(self.parts)) if t)
        return all(p and self.sep not in p and "/" not in p for p in self.parts) and self.plain() == joined


@dataclass
class KeyBook:
    """The keys of one logging call, by :class:`Name`: valid, and unique."""

    prefix: str = ""
    names: dict[Name, None] = field(default_factory=dict)

    def __call__(self, *parts: str, sep: str = "/") -> Name:
        """A name under the book's prefix (registered: its key is kept apart from the others)."""
        name = Name(tuple(str(p) for p in parts), sep, self.prefix)
        self.names.setdefault(name, None)
        return name

    def dotted(self, text: str) -> Name:
        """A param name of heta_nb's own (``benchmark.name``), one part per level."""
        return self(*text.split("."), sep=".")

    def resolve(
        self, items: list[tuple[Name, Any]], status: list[tuple[Name, str]], metric_of: Mapping[Name, str]
    ) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
        """``(metrics, tags, names)`` from names, every key made once, all unique: the finite
        values by key, the status tags (:func:`status_key` of the metric key) by key, and the
        metric each ``metric_of`` name's key and status tag stands for."""
        keys = self.keys([name for name, _ in (*items, *status)])
        tags = {status_key(keys[name]): text for name, text in status}
        names = {keys[base]: metric for base, metric in metric_of.items()}
        names.update({status_key(keys[name]): metric_of[name] for name, _ in status if name in metric_of})
        return finite_metrics((keys[name], value) for name, value in items), tags, names

    def keys(self, extra: Iterable[Name] = ()) -> dict[Name, str]:
        """Every registered name and ``extra`` name -> its key, no two names sharing one.

        A name whose key another name also gets is given a hash of its original name, unless
        it is the first (registered) name of the clash whose key is its name unchanged; a family (a head and
        its suffixes) is hashed as one, so ``x/y/n`` stays ``x/y`` 's ``n``.
        """
        family: dict[Name, list[Name]] = {}
        for name in [*self.names, *extra]:
            members = family.setdefault(name.head, [])
            if name not in members:
                members.append(name)
        salt = dict.fromkeys(family, 0)
        for _ in range(50):
            keys = {m: self._key(head, m, salt[head], members) for head, members in family.items() for m in members}
            owners: dict[str, list[Name]] = {}
            for member, key in keys.items():
                heads = owners.setdefault(key, [])
                if member.head not in heads:
                    heads.append(member.head)
            clashes = [heads for heads in owners.values() if len(heads) > 1]
            if not clashes:
                return keys
            for heads in clashes:  # the first unchanged name keeps its key
                keep = next((h for h in heads if salt[h] == 0 and h.exact()), None)
                for head in heads:
                    if head != keep:
                        salt[head] += 1
        raise ValueError("could not make the tracker keys unique")  # pragma: no cover

    @staticmethod
    def _key(head: Name, member: Name, salt: int, members: list[Name]) -> str:
        text = head.plain()
        if salt:
            text = f"{text}_{_digest(json.dumps([head.prefix, head.sep, head.parts, salt]))}"
        room = MAX_KEY - max(len(m.suffix) + 1 if m.suffix else 0 for m in members)
        tail = f"/{member.suffix}" if member.suffix else ""
        return _fit(text, tail, json.dumps([head.prefix, head.sep, head.parts, salt]), room)


def renamed(keys: Mapping[Name, str]) -> dict[str, str]:
    """``{key: name as given}`` for every key that is not its name (a hash added, a character mapped)."""
    return {key: name.text for name, key in keys.items() if key != name.text}


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool): a value a metric can hold."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def finite_metrics(items: Iterable[tuple[str, Any]]) -> dict[str, float]:
    """``{key: float}`` of the items that are numbers (:func:`is_number`); the others are left out."""
    return {key: float(value) for key, value in items if is_number(value)}


def shorten_name(name: str) -> str:
    """A run name MLflow shows whole (at most 250 characters)."""
    return name if len(name) <= MAX_VALUE // 2 else name[: MAX_VALUE // 2 - 1] + "…"


def param_value(value: Any) -> str:
    """A param's text: scalars as written, lists of scalars joined with ``,``, long text shortened."""
    if value is None:
        return "None"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            return f"[{len(value)} items]"
        return shorten(",".join(param_value(v) for v in value), MAX_VALUE)
    return shorten(str(value), MAX_VALUE) or '""'


def flatten(
    value: Any, prefix: tuple[str, ...], *, skip: tuple[str, ...] = (), depth: int = 6
) -> Iterator[tuple[tuple[str, ...], str]]:
    """``(path, text)`` for every scalar in a nested manifest: ``("recipe", "steps", "0", "type"), "ParseDocuments"``.

    Args:
        value: A mapping, list or scalar.
        prefix: The path so far.
        skip: Keys left out at the top level (runtime records, long artifact lists).
        depth: Levels followed; deeper values are logged as one shortened text.

    Yields:
        Paths (one item per level, so ``{"a.b": 1}`` and ``{"a": {"b": 2}}`` differ: a
        :class:`KeyBook` makes them two keys) and param texts.
    """
    if isinstance(value, Mapping):
        if depth == 0:
            yield prefix, param_value(repr(dict(value)))
            return
        for key, item in value.items():
            if str(key) in skip:
                continue
            yield from flatten(item, (*prefix, str(key)), depth=depth - 1)
    elif isinstance(value, (list, tuple)) and any(isinstance(v, (Mapping, list, tuple)) for v in value):
        if len(value) > MAX_ITEMS or depth == 0:
            yield prefix, f"[{len(value)} items]"
            return
        for index, item in enumerate(value):
            yield from flatten(item, (*prefix, str(index)), depth=depth - 1)
    else:
        yield prefix, param_value(value)
