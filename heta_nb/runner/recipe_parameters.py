"""Each recipe step's settings, as a report records them (``metadata.heta_nb.recipe_parameters``).

Heta's ``recipe.manifest()`` lists each step's name, type, requirements and capabilities,
not its configuration: two recipes that differ only in ``chunk_size`` have the same
manifest. The runner therefore records, per step in the manifest's order (procedures
expanded), the fields of the step's ``config`` dataclass (or of the step itself when it is
a dataclass, else its public plain attributes):

* JSON values as they are (tuples and sets as lists, enums as their value, paths as text);
* a nested dataclass (``FullTextIndexNames``) as an object of its fields;
* any other object (a store, a client) as ``{"type": <class>}``, Heta's manifest convention;
* the value of a field or key whose name says it is a secret (``api_key``, ``hf_token``,
  ``password``, ``key``...) as ``"<redacted>"``, as ``query_options`` are recorded, and the
  password in a URL likewise;
* a text over :data:`LONG_TEXT` characters (a prompt) as its length and SHA-256, and a
  collection over :data:`MAX_ITEMS` items as its length, so the report stays small while a
  change still shows.

Nothing here imports Heta: any recipe-like object with ``expanded_steps()`` or ``steps`` works.

The same record guards the reuse of a built KB: Heta's stored KB manifest cannot tell two
recipes apart that differ only in a step's settings, so the recipe builder keeps the
settings beside it (:data:`SIDECAR`, under the KB's runtime prefix, deleted with the KB by
Heta's ``delete``) and refuses a KB built with other ones (:func:`parameter_differences`).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from heta_nb.runner.redaction import REDACTED, is_secret_key

__all__ = [
    "LONG_TEXT",
    "MAX_ITEMS",
    "RECIPE_PARAMETERS",
    "SIDECAR",
    "parameter_differences",
    "read_stored_parameters",
    "recipe_parameters",
    "sidecar_key",
    "step_parameters",
    "store_parameters",
]

RECIPE_PARAMETERS = "recipe_parameters"
"""The key of ``metadata.heta_nb`` that holds the steps' settings."""
LONG_TEXT = 2000
"""Texts longer than this are recorded as ``{"type": "str", "characters": n, "sha256": ...}``."""
MAX_ITEMS = 200
"""Lists and mappings with more items are recorded as ``{"type": <class>, "items": n}``."""
SIDECAR = "heta_nb_recipe_parameters.json"
"""The object beside a KB's ``manifest.json`` holding the settings of the recipe that built it."""
_MAX_DEPTH = 4
_WORDS = re.compile(r"[A-Za-z]+")
_URL_PASSWORD = re.compile(r"(?<=://)([^/@:\s]*):[^/@\s]*@")


def _is_secret(name: str) -> bool:
    """``api_key``, ``token``, ``password``... (see :func:`is_secret_key`) or a plain ``key``."""
    return is_secret_key(name) or "key" in (word.lower() for word in _WORDS.findall(name))


def _is_dataclass_object(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _text(value: str) -> Any:
    value = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@", value)
    if len(value) <= LONG_TEXT:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return {"type": "str", "characters": len(value), "sha256": digest}


def _fields(obj: Any, depth: int) -> dict[str, Any]:
    """A dataclass's fields as JSON values (secrets redacted)."""
    return {
        field.name: _guarded(field.name, getattr(obj, field.name, None), depth) for field in dataclasses.fields(obj)
    }


def _guarded(name: str, value: Any, depth: int) -> Any:
    """``value`` as a JSON value, or ``"<redacted>"`` under a secret-looking ``name``."""
    return REDACTED if _is_secret(name) else _value(value, depth)


def _value(value: Any, depth: int = 0) -> Any:
    """``value`` as a JSON value (see the module's docstring)."""
    if value is None or isinstance(value, (bool, int)) and not isinstance(value, enum.Enum):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str) and not isinstance(value, enum.Enum):
        return _text(str(value))
    if isinstance(value, enum.Enum):
        return _value(value.value, depth)
    if isinstance(value, PurePath):
        return _text(str(value))
    if depth >= _MAX_DEPTH:
        return {"type": type(value).__name__}
    if isinstance(value, Mapping):
        if len(value) > MAX_ITEMS:
            return {"type": type(value).__name__, "items": len(value)}
        return {str(k): _guarded(str(k), v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        if len(value) > MAX_ITEMS:
            return {"type": type(value).__name__, "items": len(value)}
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [_value(item, depth + 1) for item in items]
    if _is_dataclass_object(value):
        return _fields(value, depth + 1)
    return {"type": type(value).__name__}


def _is_plain(value: Any) -> bool:
    """A JSON scalar, or a list, tuple or dict of plain values (a step's simple attribute)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False


def step_parameters(step: Any) -> dict[str, Any]:
    """One step's settings: its ``config`` dataclass's (or mapping's) fields, the step's own
    fields when it is a dataclass, else its public plain attributes; ``{}`` when it has none."""
    config = getattr(step, "config", None)
    if _is_dataclass_object(config):
        return _fields(config, 0)
    if isinstance(config, Mapping):
        return {str(k): _guarded(str(k), v, 1) for k, v in config.items()}
    if _is_dataclass_object(step):
        return _fields(step, 0)
    attributes = getattr(step, "__dict__", None)
    if not isinstance(attributes, dict):
        return {}
    return {
        name: _guarded(name, value, 0)
        for name, value in attributes.items()
        if not name.startswith("_") and name != "name" and _is_plain(value)
    }


def _steps(recipe: Any) -> tuple[Any, ...] | None:
    expanded = getattr(recipe, "expanded_steps", None)
    steps = expanded() if callable(expanded) else getattr(recipe, "steps", None)
    return tuple(steps) if isinstance(steps, (list, tuple)) else None


def recipe_parameters(recipe: Any) -> list[dict[str, Any]] | None:
    """Each step's ``{"index", "name", "type", "parameters"}``, in the manifest's order.

    Args:
        recipe: a Heta ``KnowledgeRecipe`` (or any object with ``expanded_steps()`` or ``steps``).

    Returns:
        One entry per step (procedures expanded, as in Heta's manifest); None when
        ``recipe`` has no steps to read or reading them raised (a foreign object).
    """
    try:
        steps = _steps(recipe)
        if steps is None:
            return None
        return [
            {
                "index": index,
                "name": str(getattr(step, "name", type(step).__name__)),
                "type": type(step).__name__,
                "parameters": step_parameters(step),
            }
            for index, step in enumerate(steps)
        ]
    except (Exception, SystemExit, GeneratorExit):  # noqa: BLE001 - a foreign recipe object: nothing recorded
        return None


def sidecar_key(manifest_key: str) -> str:
    """The key of :data:`SIDECAR` beside a KB's ``manifest.json`` key."""
    return f"{manifest_key.rpartition('/')[0]}/{SIDECAR}"


def _flat(parameters: Any) -> dict[str, Any]:
    """``{"step.parameter": value}`` of a ``recipe_parameters`` record (malformed entries skipped)."""
    flat: dict[str, Any] = {}
    for step in parameters if isinstance(parameters, list) else ():
        if isinstance(step, dict) and isinstance(step.get("parameters"), dict):
            for name, value in step["parameters"].items():
                flat[f"{step.get('name')}.{name}"] = value
    return flat


def parameter_differences(stored: Any, current: Any) -> list[str]:
    """The ``step.parameter`` names whose values differ between two ``recipe_parameters`` records."""
    old, new = _flat(stored), _flat(current)
    return sorted(name for name in old.keys() | new.keys() if old.get(name, ...) != new.get(name, ...))


async def store_parameters(objects: Any, key: str, recipe: Any) -> None:
    """Write ``recipe``'s settings at ``key`` (best effort: a store that refuses it loses only the guard)."""
    parameters = recipe_parameters(recipe)
    if parameters is None:
        return
    try:
        await objects.put(key, json.dumps(parameters, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    except Exception:  # noqa: BLE001 - the guard is best effort
        return


async def read_stored_parameters(objects: Any, key: str) -> Any:
    """The settings stored at ``key``; None when there are none (a KB built by Heta) or they cannot be read."""
    try:
        return json.loads(await objects.get(key))
    except Exception:  # noqa: BLE001 - no sidecar, or a broken one: nothing to compare with
        return None
