"""What differs between the recipes, knowledge bases and benchmarks of two reports.

Both reports store the recipe manifest and the KB manifest(s); :func:`recipe_changes`
lists only what differs between them:

* **recipe**: steps added, removed or reordered (by name), a step's type, its
  requirements and capabilities when they changed, the recipe's other fields
  (``component_refs``, ``capabilities_provided``, ``metadata.*``...), and each step's
  settings (``split_documents.chunk_size``) when heta_nb's runner recorded them
  (``metadata.heta_nb.recipe_parameters``: Heta's manifest has none);
* **knowledge base**: the settings of each KB (name, metadata), how its build went (status,
  each step's status, error and issues, capabilities) and how many items each list
  artifact holds (``chunk_keys``: the chunk count); never what always differs between
  two builds (ids, times, the keys themselves, token counts). The KB manifest's copy of
  the recipe is skipped (it is ``recipe_manifest``);
* **benchmark**: its name, version, split, task type and build scope; a different name,
  version, split or document set makes the reports *not comparable* (in plain words).

Values come from reports, which anyone may write: they are kept as data (never HTML),
and the text of a change shows each value as JSON, shortened.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from heta_nb._util.text import one_line, shorten
from heta_nb.model.json import thaw
from heta_nb.model.report import EvaluationReport
from heta_nb.runner.recipe_parameters import RECIPE_PARAMETERS

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["NOT_RECORDED", "SAME", "ManifestChange", "RecipeChanges", "recipe_changes"]

SAME = "recipes are identical in every recorded setting"
NOT_RECORDED = (
    "step parameters were not recorded (report written by Heta's runner): only steps, components and metadata compared"
)
VALUE_CHARS = 80
"""A value in a change's text is shortened to this many characters."""
RECORD_FIELDS = ("section", "path", "kind", "old", "new", "measure", "text")

_RECIPE_SKIPPED = frozenset(("steps", "artifacts_required"))
"""Recipe manifest keys not compared as values: the steps have their own comparison, and the
required artifacts follow from the steps."""
_KB_SETTINGS = ("schema_version", "name", "description", "metadata")
_STEP_OUTCOME = ("status", "error", "issues")
_BENCHMARK_FIELDS = ("name", "version", "split", "task_type", "build_scope")
_IDENTITY = ("name", "version", "split")
"""Benchmark fields that make two reports not comparable when they differ."""


@dataclass(frozen=True)
class ManifestChange:
    """One difference between two reports' manifests."""

    section: str
    """``"recipe"``, ``"knowledge base"`` or ``"benchmark"``."""
    path: str
    """What differs: ``"split_documents.chunk_size"``, ``"steps"``, ``"metadata.demo_recipe"``, ``"chunk_keys"``."""
    kind: str
    """``"added"``, ``"removed"``, ``"changed"`` or ``"reordered"``."""
    old: Any = None
    """The baseline's value (None when added); for a step, ``{"name", "index", "type"}``."""
    new: Any = None
    """The candidate's value (None when removed)."""
    measure: str = ""
    """What ``old`` and ``new`` count, when they are counts (``"items"`` of a list artifact)."""

    @property
    def text(self) -> str:
        """One line: ``"recipe: split_documents.chunk_size 400 → 200"``."""
        return one_line(self._text())

    def _text(self) -> str:
        head = f"{self.section}: "
        if self.path == "steps" and self.kind == "reordered":
            return f"{head}steps reordered: {_names(self.old)} → {_names(self.new)}"
        if self.path == "steps" and self.kind in ("added", "removed"):
            step = self.new if self.kind == "added" else self.old
            name, index = _shown_name(_get(step, "name")), _get(step, "index")
            where = f"at {index}" if self.kind == "added" else f"(was at {index})"
            return f"{head}step {name} {self.kind} {where}"
        path = shorten(self.path, 2 * VALUE_CHARS)
        if self.kind == "added":
            return f"{head}{path} added: {self._value(self.new)}"
        if self.kind == "removed":
            return f"{head}{path} removed (was {self._value(self.old)})"
        delta = _list_delta(self.old, self.new)
        if delta:
            return f"{head}{path}: {delta}"
        return f"{head}{path} {_shown(self.old)} → {self._value(self.new)}"

    def _value(self, value: Any) -> str:
        return f"{_shown(value)} {self.measure}" if self.measure else _shown(value)

    def record(self) -> dict[str, Any]:
        """A plain dict (JSON values) of this change, its text included."""
        return {
            "section": self.section,
            "path": self.path,
            "kind": self.kind,
            "old": thaw(self.old),
            "new": thaw(self.new),
            "measure": self.measure,
            "text": self.text,
        }


@dataclass(frozen=True)
class RecipeChanges:
    """What differs between two reports' recipes, KBs and benchmarks (see :func:`recipe_changes`)."""

    baseline: str
    candidate: str
    changes: tuple[ManifestChange, ...]
    not_comparable: tuple[str, ...]
    """Why the two reports' scores are not comparable (another benchmark or corpus), in plain words."""
    notes: tuple[str, ...] = ()
    """What could not be compared (step parameters a report did not record)."""

    def __bool__(self) -> bool:
        return bool(self.changes)

    def lines(self) -> list[str]:
        """Plain text: why not comparable, then one line per change (or :data:`SAME`), then the notes."""
        out = [f"not comparable: {why}" for why in self.not_comparable]
        out.extend(change.text for change in self.changes)
        if not self.changes:
            out.append(SAME)
        out.extend(self.notes)
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def records(self) -> list[dict[str, Any]]:
        """One plain dict per change (:data:`RECORD_FIELDS`), for JSON and exports."""
        return [change.record() for change in self.changes]

    def frame(self) -> pd.DataFrame:
        """The changes as a DataFrame (columns :data:`RECORD_FIELDS`)."""
        import pandas as pd

        return pd.DataFrame(self.records(), columns=list(RECORD_FIELDS))


def recipe_changes(
    baseline: EvaluationReport,
    candidate: EvaluationReport,
    *,
    baseline_name: str = "",
    candidate_name: str = "",
) -> RecipeChanges:
    """What differs between two reports' recipes, knowledge bases and benchmarks.

    Args:
        baseline: The report compared against.
        candidate: The report whose changes are listed (old values are the baseline's).
        baseline_name: The baseline's label (default: its report id).
        candidate_name: The candidate's label (default: its report id).

    Returns:
        The changes, in order: recipe, knowledge base, benchmark.
    """
    names = (baseline_name or baseline.report_id, candidate_name or candidate.report_id)
    old_parameters, new_parameters = _parameters(baseline), _parameters(candidate)
    # settings recorded on one side only are not compared: the other side's are unknown
    both = (old_parameters, new_parameters) if old_parameters is not None and new_parameters is not None else ({}, {})
    benchmark, reasons = _benchmark_changes(baseline, candidate, names)
    changes = [
        *_recipe_changes(thaw(baseline.recipe_manifest), thaw(candidate.recipe_manifest), *both),
        *_knowledge_base_changes(baseline, candidate),
        *benchmark,
    ]
    notes: tuple[str, ...] = ()
    if old_parameters is None and new_parameters is None:
        notes = (NOT_RECORDED,)
    elif old_parameters is None or new_parameters is None:
        without = names[0] if old_parameters is None else names[1]
        notes = (
            f"step parameters were recorded for one report only ({without!r} recorded none: written by Heta's "
            "runner or an earlier heta_nb): only steps, components and metadata compared",
        )
    return RecipeChanges(names[0], names[1], tuple(changes), tuple(reasons), notes)


# -- values ----------------------------------------------------------------------------


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _shown(value: Any) -> str:
    """A value as one line of JSON, shortened (a string in quotes; the text is data, not markup)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except ValueError:  # a circular value cannot come from a report; be safe anyway
        text = repr(value)
    return shorten(text, VALUE_CHARS)


def _shown_name(value: Any) -> str:
    """A name as it is (a non-string as JSON), shortened."""
    return shorten(value if isinstance(value, str) else _shown(value), VALUE_CHARS)


def _names(value: Any) -> str:
    names = value if isinstance(value, list) else []
    return shorten(", ".join(_shown_name(name) for name in names), 4 * VALUE_CHARS)


def _list_delta(old: Any, new: Any) -> str:
    """``"+ a, b; − c"``: the items of one list only (strings as they are, others as JSON);
    ``""`` when the values are not two lists, or the lists hold the same items."""
    if not (isinstance(old, list) and isinstance(new, list)):
        return ""
    added = [_shown_name(v) for v in new if v not in old]
    removed = [_shown_name(v) for v in old if v not in new]
    parts = [f"+ {', '.join(added)}"] if added else []
    parts += [f"− {', '.join(removed)}"] if removed else []
    return shorten("; ".join(parts), 4 * VALUE_CHARS)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _diff(section: str, path: str, old: Any, new: Any, measure: str = "") -> list[ManifestChange]:
    """The changes between two JSON values: objects key by key (dotted paths), anything else whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in [*old, *(k for k in new if k not in old)]:
            where = _join(path, key)
            if key not in new:
                out.append(ManifestChange(section, where, "removed", old[key], None, measure))
            elif key not in old:
                out.append(ManifestChange(section, where, "added", None, new[key], measure))
            else:
                out.extend(_diff(section, where, old[key], new[key], measure))
        return out
    if old == new and type(old) is type(new):
        return []
    return [ManifestChange(section, path, "changed", old, new, measure)]


def _keyed(items: Iterable[Any], name_field: str) -> dict[str, dict[str, Any]]:
    """Items by their name (a repeated name gets ``#2``, ``#3``...), in order."""
    keyed: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        name = item.get(name_field)
        key = name if isinstance(name, str) else f"#{index}"
        count = 2
        while key in keyed:
            key = f"{name}#{count}"
            count += 1
        keyed[key] = item
    return keyed


# -- the recipe ------------------------------------------------------------------------


def _parameters(report: EvaluationReport) -> dict[str, dict[str, Any]] | None:
    """Each step's recorded settings by step name; None when the report recorded none."""
    info = report.metadata.get("heta_nb")
    recorded = thaw(info.get(RECIPE_PARAMETERS)) if isinstance(info, Mapping) else None
    if not isinstance(recorded, list):
        return None
    steps = _keyed(recorded, "name")
    return {name: step["parameters"] for name, step in steps.items() if isinstance(step.get("parameters"), dict)}


def _step_summary(step: dict[str, Any], key: str) -> dict[str, Any]:
    return {"name": key, "index": step.get("index"), "type": step.get("type")}


def _recipe_changes(
    old: Any, new: Any, old_parameters: dict[str, Any], new_parameters: dict[str, Any]
) -> list[ManifestChange]:
    """Steps, each common step's type, settings, requirements and capabilities, then the other fields."""
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    old_steps = _keyed(old.get("steps") or [], "name")
    new_steps = _keyed(new.get("steps") or [], "name")
    out = [
        ManifestChange("recipe", "steps", "removed", _step_summary(step, key), None)
        for key, step in old_steps.items()
        if key not in new_steps
    ]
    out += [
        ManifestChange("recipe", "steps", "added", None, _step_summary(step, key))
        for key, step in new_steps.items()
        if key not in old_steps
    ]
    common_old = [key for key in old_steps if key in new_steps]
    common_new = [key for key in new_steps if key in old_steps]
    if common_old != common_new:
        out.append(ManifestChange("recipe", "steps", "reordered", common_old, common_new))
    for key in common_new:
        before, after = old_steps[key], new_steps[key]
        out += _diff("recipe", f"{key}.type", before.get("type"), after.get("type"))
        if key in old_parameters and key in new_parameters:
            out += _diff("recipe", key, old_parameters[key], new_parameters[key])
        for part in ("requirements", "capabilities"):
            out += _diff("recipe", f"{key}.{part}", before.get(part), after.get(part))
    rest_old = {k: v for k, v in old.items() if k not in _RECIPE_SKIPPED}
    rest_new = {k: v for k, v in new.items() if k not in _RECIPE_SKIPPED}
    return out + _diff("recipe", "", rest_old, rest_new)


# -- the knowledge bases ---------------------------------------------------------------


def _run_record(manifest: Any) -> dict[str, Any]:
    record = manifest.get("run_record") if isinstance(manifest, dict) else None
    return record if isinstance(record, dict) else {}


def _kb_settings(manifest: Any) -> dict[str, Any]:
    """What is compared of one KB manifest as values: its settings and how its build went."""
    settings: dict[str, Any] = {key: manifest[key] for key in _KB_SETTINGS if key in manifest}
    record = _run_record(manifest)
    settings.update((key, record[key]) for key in ("status", "capabilities", "issues") if key in record)
    return settings


def _step_outcomes(manifest: Any) -> dict[str, dict[str, Any]]:
    """Each build step's status, error and issues, by step name."""
    steps = _keyed(_run_record(manifest).get("step_records") or [], "step_name")
    return {name: {key: step.get(key) for key in _STEP_OUTCOME} for name, step in steps.items()}


def _artifact_sizes(manifest: Any) -> dict[str, int]:
    """How many items each list artifact holds (``chunk_keys``: the chunks); other artifacts left out."""
    artifacts = _run_record(manifest).get("artifacts")
    items = artifacts.items() if isinstance(artifacts, dict) else ()
    return {key: len(value) for key, value in items if isinstance(value, list)}


def _pairs(old: list[Any], new: list[Any]) -> tuple[list[tuple[str, Any, Any]], list[ManifestChange]]:
    """The KB manifests of the two reports, paired by name (by position when no name matches)."""
    if len(old) == 1 and len(new) == 1:
        return [("", old[0], new[0])], []
    old_named, new_named = _keyed(old, "name"), _keyed(new, "name")
    if len(old) == len(new) and not old_named.keys() & new_named.keys():
        return [(f"knowledge_bases[{i}]", a, b) for i, (a, b) in enumerate(zip(old, new))], []
    pairs = [(f"knowledge_bases[{name}]", old_named[name], new_named[name]) for name in new_named if name in old_named]
    alone = [
        ManifestChange("knowledge base", "knowledge_bases", "removed", n, None) for n in old_named if n not in new_named
    ]
    alone += [
        ManifestChange("knowledge base", "knowledge_bases", "added", None, n) for n in new_named if n not in old_named
    ]
    return pairs, alone


def _knowledge_base_changes(baseline: EvaluationReport, candidate: EvaluationReport) -> list[ManifestChange]:
    old = [thaw(m) for m in baseline.knowledge_base_manifests]
    new = [thaw(m) for m in candidate.knowledge_base_manifests]
    pairs, out = _pairs(old, new)
    for prefix, before, after in pairs:
        out += _diff("knowledge base", prefix, _kb_settings(before), _kb_settings(after))
        old_steps, new_steps = _step_outcomes(before), _step_outcomes(after)
        for name in (n for n in new_steps if n in old_steps):  # steps added or removed: see the recipe
            out += _diff("knowledge base", _join(prefix, f"steps.{name}"), old_steps[name], new_steps[name])
        out += _diff("knowledge base", prefix, _artifact_sizes(before), _artifact_sizes(after), "items")
    return out


# -- the benchmark ---------------------------------------------------------------------


def _benchmark_changes(
    baseline: EvaluationReport, candidate: EvaluationReport, names: tuple[str, str]
) -> tuple[list[ManifestChange], list[str]]:
    """Benchmark fields that differ, and why the reports are then not comparable."""
    changes, reasons = [], []
    for field in _BENCHMARK_FIELDS:
        old, new = getattr(baseline.benchmark, field), getattr(candidate.benchmark, field)
        if old != new:
            changes.append(ManifestChange("benchmark", field, "changed", old, new))
            if field in _IDENTITY:
                reasons.append(
                    f"the benchmark {field} differs: {_shown(old)} in {_shown(names[0])}, "
                    f"{_shown(new)} in {_shown(names[1])}"
                )
    keys = [r.metadata.get("benchmark_document_keys") for r in (baseline, candidate)]
    if all(isinstance(k, tuple) and k for k in keys):
        old_keys, new_keys = (frozenset(k) for k in keys)  # type: ignore[arg-type]
        if old_keys != new_keys:
            reasons.append(
                f"the benchmark's documents differ: {len(old_keys):,} in {_shown(names[0])}, "
                f"{len(new_keys):,} in {_shown(names[1])}, {len(old_keys & new_keys):,} in both"
            )
    return changes, reasons
