"""Argument types of the ``heta-nb`` commands: each refuses a bad value with exit code 2."""

from __future__ import annotations

import argparse

__all__ = ["UsageError", "names_arg", "seed_arg", "split_names", "text_arg"]


def split_names(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


def text_arg(value: str) -> str:
    """An argument that must not be empty (argparse turns the error into exit code 2)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value


def names_arg(value: str) -> list[str]:
    """A comma-separated list with at least one name."""
    names = split_names(value)
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {value!r}")
    return names


def seed_arg(value: str) -> int:
    """A non-negative integer."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {number}")
    return number


class UsageError(Exception):
    """Bad usage found after parsing: exit code 2, like argparse's own errors."""
