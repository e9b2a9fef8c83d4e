"""Times as people read them: ISO-8601 text to ``2026-12-02 15:54 UTC`` (to the minute)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

__all__ = ["minute_utc"]


def minute_utc(value: Any) -> str | None:
    """``"2026-12-02T15:54:07.123456+00:00"`` -> ``"2026-12-02 15:54 UTC"`` (converted to UTC
    when it has an offset; a naive time keeps its clock and gets no suffix); None when
    ``value`` is not ISO-8601 text."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
