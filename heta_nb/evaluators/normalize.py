"""Heta's text normalisation, shared by the evidence and answer evaluators."""

from __future__ import annotations

__all__ = ["normalize_text"]


def normalize_text(value: str) -> str:
    """Casefold and collapse whitespace (Heta's evidence and answer normalisation)."""
    return " ".join(value.casefold().split())
