"""``%load_ext heta_nb``: rich reprs for Heta's own objects, and the ``%heta_*`` magics.

Formatters for heta-framework classes are registered **by module and name**
(``for_type_by_name``), so heta is never imported here: a Heta user's existing
``EvaluationReport``, ``EvaluationCaseResult``, ``EvaluationScore``, ``QueryResponse``
and ``BenchmarkRunResult`` objects render as heta_nb's views. Loading twice is
harmless; unloading removes everything that was registered.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from typing import Any

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from heta_nb._util.text import describe_error

__all__ = ["HetaMagics", "load_ipython_extension", "unload_ipython_extension"]

HETA_TYPES: tuple[tuple[str, str, str], ...] = (
    ("heta_framework.evaluation.types", "EvaluationReport", "report"),
    ("heta_framework.evaluation.types", "EvaluationCaseResult", "case"),
    ("heta_framework.evaluation.types", "EvaluationScore", "score"),
    ("heta_framework.kb.search.types", "QueryResponse", "response"),
    ("heta_framework.evaluation.runner", "BenchmarkRunResult", "run_result"),
)
_STATE: dict[int, dict[str, Any]] = {}


def _as_model(kind: str, obj: Any) -> Any:
    from heta_nb.model import EvaluationCaseResult, EvaluationScore, QueryResponse, load_report

    if kind == "report":
        return load_report(obj)
    if kind == "run_result":
        return load_report(obj.report)
    if kind == "case":
        return EvaluationCaseResult.coerce(obj)
    if kind == "score":
        return EvaluationScore.coerce(obj)
    return QueryResponse.coerce(obj)


def _html_formatter(kind: str) -> Callable[[Any], str | None]:
    def format_html(obj: Any) -> str | None:
        bundle = _as_model(kind, obj)._repr_mimebundle_(include=["text/html"])
        return bundle.get("text/html") if isinstance(bundle, dict) else None

    return format_html


def _text_formatter(kind: str) -> Callable[[Any, Any, bool], None]:
    def format_text(obj: Any, printer: Any, cycle: bool) -> None:
        try:
            printer.text(repr(_as_model(kind, obj)))
        except Exception:  # noqa: BLE001 - fall back to a minimal, safe description
            printer.text(f"<{type(obj).__module__}.{type(obj).__name__}>")

    return format_text


def load_ipython_extension(ipython: Any) -> None:
    """Register the formatters and magics (idempotent)."""
    key = id(ipython)
    if key in _STATE:
        return
    formatters = ipython.display_formatter.formatters
    previous: list[tuple[str, str, str, Any]] = []
    for module, name, kind in HETA_TYPES:
        previous.append(
            ("text/html", module, name, formatters["text/html"].for_type_by_name(module, name, _html_formatter(kind)))
        )
        previous.append(
            ("text/plain", module, name, formatters["text/plain"].for_type_by_name(module, name, _text_formatter(kind)))
        )
    ipython.register_magics(HetaMagics)
    _STATE[key] = {"previous": previous, "custom": _show_user_errors(ipython)}


def unload_ipython_extension(ipython: Any) -> None:
    """Remove what :func:`load_ipython_extension` registered."""
    state = _STATE.pop(id(ipython), None)
    if state is None:
        return
    formatters = ipython.display_formatter.formatters
    for mime, module, name, old in state["previous"]:
        formatters[mime].pop(f"{module}.{name}", None)
        if old is not None:
            formatters[mime].for_type_by_name(module, name, old)
    ipython.custom_exceptions, ipython.CustomTB = state["custom"]
    magics = ipython.magics_manager.magics["line"]
    for name in ("heta_report", "heta_runs", "heta_compare", "heta_export", "heta_explore"):
        magics.pop(name, None)


def _show_user_errors(ipython: Any) -> tuple[tuple[type[BaseException], ...], Any]:
    """Show a :class:`~heta_nb.errors.HetaNbUserError` as its one line, not a traceback.

    Other custom handlers already registered keep their exceptions. Returns what to
    restore on unload.
    """
    from heta_nb.errors import HetaNbUserError

    before = (tuple(ipython.custom_exceptions), ipython.CustomTB)
    others, handle_other = before

    def handler(shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None) -> Any:
        if not isinstance(value, HetaNbUserError):
            return handle_other(etype, value, tb, tb_offset=tb_offset)
        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # %tb, %debug
        if sys.version_info >= (3, 12):
            sys.last_exc = value
        lines = [f"{etype.__name__}: {_one_line(str(value))}"]
        show = getattr(shell, "_showtraceback", None)  # ipykernel: an error output with this one line
        if show is not None:
            show(etype, value, lines)
        else:  # pragma: no cover - every InteractiveShell has it
            print(lines[0], file=sys.stderr)
        return lines

    ipython.set_custom_exc((*others, HetaNbUserError), handler)
    return before


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _error(message: str) -> None:
    from IPython.core.error import UsageError

    raise UsageError(message)


@magics_class
class HetaMagics(Magics):
    """``%heta_report``, ``%heta_runs``, ``%heta_compare``, ``%heta_export`` and ``%heta_explore``."""

    @magic_arguments()
    @argument("source", help="report.json path or URL, STORE:KB/REPORT_ID, or KB/REPORT_ID with --store")
    @argument("--store", default=None, help="report store (folder or fsspec URL)")
    @line_magic
    def heta_report(self, line: str) -> Any:
        """Display a report from a path, URL or store."""
        if _wants_help(line):
            return _print_help(self.heta_report)
        args = _parse(self.heta_report, line)
        from heta_nb.errors import HetaNbError
        from heta_nb.store.locate import resolve_report

        try:
            return resolve_report(_unquote(args.source), store=args.store)
        except (HetaNbError, ValueError, OSError) as exc:
            _error(describe_error(exc))

    @magic_arguments()
    @argument("store", nargs="?", default=".", help="report store: a folder or fsspec URL (default: .)")
    @line_magic
    def heta_runs(self, line: str) -> Any:
        """List the reports in a store as a table."""
        if _wants_help(line):
            return _print_help(self.heta_runs)
        args = _parse(self.heta_runs, line)
        from heta_nb.errors import HetaNbError
        from heta_nb.store import ReportStore

        try:
            return ReportStore(_unquote(args.store)).list()
        except (HetaNbError, ValueError, OSError) as exc:
            _error(describe_error(exc))

    @magic_arguments()
    @argument("reports", nargs="+", help="reports (variables, paths, URLs or STORE:KB/ID) to compare")
    @argument("--names", default=None, help="comma-separated display names")
    @argument("--modes", default=None, help="comma-separated modes (compare modes of one report)")
    @argument("--metrics", default=None, help="comma-separated metrics")
    @line_magic
    def heta_compare(self, line: str) -> Any:
        """Compare recipes (or modes) with paired statistics."""
        if _wants_help(line):
            return _print_help(self.heta_compare)
        args = _parse(self.heta_compare, line)
        from heta_nb.comparison import compare
        from heta_nb.errors import HetaNbError

        try:
            reports = [self._report(item) for item in args.reports]
            return compare(*reports, names=_split(args.names), modes=_split(args.modes), metrics=_split(args.metrics))
        except (HetaNbError, ValueError, KeyError, OSError) as exc:
            _error(describe_error(exc))

    @magic_arguments()
    @argument("obj", help="a report or comparison (variable name, path or STORE:KB/ID)")
    @argument("-o", "--output", default=None, help="file to write: .html (standalone) or .ipynb (notebook)")
    @argument("--insert", action="store_true", help="show the notebook sections here and queue the reload cell")
    @line_magic
    def heta_export(self, line: str) -> Any:
        """Export a report or comparison as standalone HTML, a notebook, or sections here."""
        if _wants_help(line):
            return _print_help(self.heta_export)
        args = _parse(self.heta_export, line)
        from heta_nb.errors import HetaNbError

        if not args.output and not args.insert:
            _error("give -o FILE.html / FILE.ipynb, or --insert")
        try:
            obj = self._report(args.obj)
            if args.insert:
                return self._insert_sections(obj)
            from heta_nb.export import export

            path = export(obj, args.output)
            print(f"wrote {path}")
            return None
        except (HetaNbError, ValueError, OSError) as exc:
            _error(describe_error(exc))

    @magic_arguments()
    @argument("source", help="a report or comparison (variable), a path or URL, STORE:KB/ID, or a store with --store")
    @argument("--store", action="store_true", help="SOURCE is a report store (folder or URL): pick a report")
    @argument("--benchmark", default=None, help="benchmark (variable or folder) for labels, gold data and judgements")
    @line_magic
    def heta_explore(self, line: str) -> Any:
        """Explore a report's, comparison's or store's cases: search, filter, sort, open."""
        if _wants_help(line):
            return _print_help(self.heta_explore)
        args = _parse(self.heta_explore, line)
        from heta_nb.errors import HetaNbError
        from heta_nb.explorer import explore

        try:
            if args.store:
                from heta_nb.store import ReportStore

                obj: Any = ReportStore(_unquote(args.source))
            else:
                obj = self._report(args.source)
            benchmark = None
            if args.benchmark:
                name = _unquote(args.benchmark)
                namespace = self.shell.user_ns if self.shell is not None else {}
                if name.isidentifier() and name in namespace:
                    benchmark = namespace[name]
                else:
                    from heta_nb.benchmark.load import load_benchmark

                    benchmark = load_benchmark(name)
            return explore(obj, benchmark=benchmark)
        except (HetaNbError, ValueError, KeyError, TypeError, OSError) as exc:
            _error(describe_error(exc))

    # -- helpers -----------------------------------------------------------------------
    def _report(self, text: str) -> Any:
        name = _unquote(text)
        namespace = self.shell.user_ns if self.shell is not None else {}
        if name.isidentifier() and name in namespace:
            return namespace[name]
        from heta_nb.store.locate import resolve_report

        return resolve_report(name)

    def _insert_sections(self, obj: Any) -> None:
        from IPython.display import Markdown, display

        from heta_nb.notebook import sections

        code_cells = []
        for cell in sections(obj):
            if cell.cell_type == "markdown":
                display(Markdown(cell.source))
                continue
            for output in cell.get("outputs", []):
                if output.get("output_type") in ("display_data", "execute_result"):
                    display(dict(output["data"]), raw=True)
            code_cells.append(cell.source)
        if code_cells and self.shell is not None:
            self.shell.set_next_input(code_cells[-1], replace=False)


def _parse(magic: Any, line: str) -> Any:
    """``parse_argstring``, with a line that cannot be split (an unclosed quote) a usage error."""
    try:
        return parse_argstring(magic, line)
    except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
        _error(f"cannot read the arguments {line.strip()!r}: {exc}")


def _wants_help(line: str) -> bool:
    return line.strip() in ("-h", "--help")


def _print_help(magic: Any) -> None:
    """Print a magic's usage (what ``%magic?`` shows) for ``%magic --help``."""
    print(magic.__doc__)


def _unquote(text: str) -> str:
    parts = shlex.split(text) if text and text[0] in "'\"" else [text]
    return parts[0] if parts else text


def _split(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None
