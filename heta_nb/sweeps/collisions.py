"""Names of a sweep that would share one store folder (or one recipe folder): refused before any work.

The store keys every report by Heta's slug of its names (:func:`heta_nb.store.names.heta_slug`:
stripped, lowercased, whitespace runs joined by ``_``), so ``"Run 1"`` and ``"run_1"`` are one
knowledge-base folder, and two benchmarks whose report ids slug alike are one report folder.
``ReportStore.save`` refuses the second report of a key; a sweep would otherwise show both
names on its board while the store keeps one report. :func:`refuse_colliding` checks every
path a sweep's cells would write, with the store's own slug, and names both names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from heta_nb.store.names import KB_ROOT, heta_slug

__all__ = ["CellPaths", "refuse_colliding", "store_folder"]


@dataclass(frozen=True)
class CellPaths:
    """What one cell (system x benchmark) of a sweep writes, with the names it comes from."""

    system: str
    """The recipe's or KB's name (the report's knowledge-base name)."""
    benchmark: str
    """The benchmark's name in the sweep."""
    report_id: str
    folder: str | None = None
    """A factory's working folder for this cell (None: the cell builds nothing)."""


def _kb_folder(system: str) -> str:
    return f"{KB_ROOT}/{heta_slug(system)}"


def store_folder(system: str, report_id: str) -> str:
    """The report folder the store gives these names (its slug, unvalidated)."""
    return f"{_kb_folder(system)}/evaluations/{heta_slug(report_id)}"


def _report_folder(cell: CellPaths) -> str:
    return store_folder(cell.system, cell.report_id)


def refuse_colliding(cells: Iterable[CellPaths], error: type[Exception]) -> None:
    """Raise ``error`` (one line, naming both names and the shared folder) when two cells would share a path.

    Checked, with the store's slug: knowledge-base folders (two systems), report folders (two
    cells) and, for recipe factories, working folders (compared as a case-insensitive file
    system would).
    """
    systems: dict[str, str] = {}
    reports: dict[str, CellPaths] = {}
    folders: dict[str, CellPaths] = {}
    for cell in cells:
        kb_folder = _kb_folder(cell.system)
        other_system = systems.setdefault(kb_folder, cell.system)
        if other_system != cell.system:
            raise error(
                f"names {other_system!r} and {cell.system!r} would share one store folder {kb_folder!r} "
                "(the store lowercases names and joins spaces with '_'); rename one"
            )
        report_folder = _report_folder(cell)
        other = reports.setdefault(report_folder, cell)
        if other != cell:
            raise error(
                f"benchmarks {other.benchmark!r} and {cell.benchmark!r} would share one report folder "
                f"{report_folder!r} (report ids {other.report_id!r} and {cell.report_id!r}); rename one"
            )
        if cell.folder is not None:
            folder_key = heta_slug(cell.folder)
            mate = folders.setdefault(folder_key, cell)
            if mate != cell:
                raise error(
                    f"{mate.system!r} x {mate.benchmark!r} and {cell.system!r} x {cell.benchmark!r} would build "
                    f"in one folder {cell.folder!r}; rename one"
                )
