"""What a report records of a run's query options: everything but the secrets.

``query_options`` go to every query, so they are part of what a report's numbers
mean; the runner records them (``metadata.heta_nb.query_options`` and the
checkpoint header) and refuses a resume or a shard merge with other options. Reports
are shared, so a value under a key whose name says it is a secret (``api_key``,
``hf_token``, ``password``...) is recorded as ``"<redacted>"``: it leaks nowhere, and a
run with a rotated key still matches.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REDACTED", "is_secret_key", "recorded_options"]

REDACTED = "<redacted>"
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS = frozenset(
    ("password", "passwd", "secret", "secrets", "credential", "credentials", "authorization", "token", "apikey")
)
_SECRET_PAIRS = frozenset((("api", "key"), ("access", "key"), ("private", "key")))
_MEASURES = frozenset(("count", "counts", "limit", "limits", "budget", "size", "usage", "encoding"))
"""Words after ``token`` that make it a measure, not a secret (``document_token_counts_artifact``)."""


def is_secret_key(name: str) -> bool:
    """Whether an option's name says its value is a secret (``api_key``, ``apiKey``, ``hf_token``...).

    Names are split into words at case changes, digits and punctuation; a secret word
    (``token``, ``password``, ``secret``...) or a pair such as ``api key`` marks a
    secret. ``max_tokens`` (``tokens``), ``token_count``, ``document_token_counts_artifact``,
    ``sort_key`` and ``author`` do not.
    """
    words = [w.lower() for w in _WORDS.findall(name)]
    after = [*words[1:], ""]
    secret = any(w in _SECRET_WORDS and not (w == "token" and nxt in _MEASURES) for w, nxt in zip(words, after))
    return secret or any(pair in _SECRET_PAIRS for pair in zip(words, words[1:]))


def recorded_options(options: Any) -> Any:
    """``options`` with the values under secret-looking keys, at any depth, replaced by
    ``"<redacted>"`` (see :func:`is_secret_key`)."""
    if isinstance(options, dict):
        return {k: REDACTED if is_secret_key(str(k)) else recorded_options(v) for k, v in options.items()}
    if isinstance(options, list):
        return [recorded_options(v) for v in options]
    return options
