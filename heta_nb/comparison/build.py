"""``compare(*reports)``: check the arguments, align the systems, run the tests, build the Comparison."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from heta_nb.comparison.align import align_scores
from heta_nb.comparison.groups import as_cluster_labels, case_groups, grouping_name
from heta_nb.comparison.notes import (
    HetaComparisonWarning,
    completeness_warnings,
    interval_notes,
    overlap_warnings,
    report_warnings,
    skipped_notes,
)
from heta_nb.comparison.result import Comparison
from heta_nb.comparison.sensitivity import Clustering, clustering_note, sensitivities
from heta_nb.comparison.significance import Family, run_paired_tests, untested
from heta_nb.comparison.systems import System, baselines_of, name_systems, resolve_systems, unique_labels
from heta_nb.errors import HetaNbUserError
from heta_nb.llm_judges.binding import judge_difference
from heta_nb.model.io import load_report

__all__ = ["compare"]


def compare(
    *reports: Any,
    names: Sequence[str] | None = None,
    metrics: Sequence[str] | str | None = None,
    modes: Sequence[str] | str | None = None,
    baseline: int | str = 0,
    across_modes: bool = False,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    include_skipped: bool = False,
    alpha: float = 0.05,
    tie_tolerance: float = 1e-9,
    correction: Literal["holm", "none"] = "holm",
    reviews: Any = None,
    benchmark: Any = None,
    cluster_by: Any = None,
    cluster_method: Literal["robust", "bootstrap"] = "robust",
) -> Comparison:
    """Compare recipes (reports) or query modes case by case against a baseline.

    The per-case scores of several *systems* are lined up and each is tested against its
    baseline system, case by case. A system is one report × one query mode:

    * several reports (recipes) on one benchmark: every report × every query mode they all
      share (or the ``modes`` chosen), each **paired with the baseline report's same mode**
      (``compare(recipe_a, recipe_b)`` tests b's ``extractive_answer`` against a's
      ``extractive_answer``, b's ``full_text_search`` against a's ``full_text_search``);
      ``across_modes=True`` asks for one baseline system that every other system, of any
      mode, is tested against;
    * several modes of one report: ``compare(report)`` or ``compare(report, modes=[...])``
      (each mode against the baseline mode).

    **Alignment.** Within a compared mode, case results are matched by
    ``(benchmark run unit, case_id)`` (by ``case_id`` alone when the reports' run units differ
    but each case id is unique, with a warning). A case counts for a metric only when *every*
    system has a usable score for it: a finite number or a bool (1.0/0.0). Left out, and
    counted per system in :attr:`Comparison.overlap`:

    * cases some system has no result for (different case sets);
    * cases some system errored on (errors have no scores; leaving them out is the only
      paired choice, but it can flatter a system that fails on hard cases, hence a warning);
    * scores marked ``metadata.skipped`` (the evaluator had no gold data; Heta averages them
      in as 0), unless ``include_skipped=True``;
    * text scores (an evaluator error is recorded as ``"error"``), non-finite numbers and
      missing scores (left out for every system like errors, hence a warning).

    A system is aligned with its own baseline only: a pair's cases (and so its numbers)
    do not depend on the other systems compared. Anything that makes the systems less comparable (different
    benchmark name/version/split, case sets, query modes, evaluators or ``top_k``, corpus
    documents, errors, incomplete or sharded reports) is reported in plain words in
    :attr:`Comparison.warnings` and issued as :class:`HetaComparisonWarning`; never silently.
    Remarks that do not threaten the comparison (skipped scores left out or counted, text-only
    metrics) go to :attr:`Comparison.notes`.

    **Statistics.** For each non-baseline system and metric, the per-case deltas
    ``system - baseline`` go to :func:`heta_nb.stats.paired.paired_test`: a two-sided paired
    sign-flip permutation test of "mean delta = 0" (exact when few cases differ), a paired
    bootstrap expanded-percentile CI of the mean delta, and win/tie/loss counts (``|delta| <=
    tie_tolerance`` counts as a tie; the tolerance changes the counts only). Ties stay in
    ``n`` and the mean; a zero delta flips to itself, so it cannot move the test.
    Every test uses the same ``seed``: a test depends only on its two aligned score arrays
    (adding a system changes it only by narrowing the aligned cases), and equal inputs give
    bit-identical results.

    **Multiple comparisons.** One convention everywhere (``compare``, ``check``, the
    leaderboard): a *family* is the metrics one system is tested on against its baseline
    (one pair, one mode), Holm–Bonferroni adjusted together; metrics that are n/a in a
    mode are not tested and not in the family, and a test without aligned cases has no
    p-value and is not counted. :meth:`Comparison.family` names it ("Holm over the 6
    metrics of extractive_answer"), and every output shows it with the unadjusted p beside
    the adjusted one. Holm controls the family-wise error rate under any dependence
    between the tests (metrics of one case are strongly correlated). ``significant`` and
    the ``verdict`` use the adjusted p-value at ``alpha``; confidence intervals are per
    comparison, not adjusted. To test one primary metric without paying for the others,
    pass ``metrics=[...]``. Only comparisons against a baseline are tested, not every
    pair. Every metric is taken as higher-is-better.

    **Clustering.** Questions written about one document (or topic) move together, so
    ``n`` such cases hold less information than ``n`` independent ones. With ``cluster_by``
    (``"document"``: cases sharing an expected evidence document; a label or metadata field of
    the benchmark's cases; a ``{case_id: group}`` mapping or a function) every interval and
    p-value treats the clusters as the units (``cluster_method="robust"``, the default: CR1
    standard errors and a t test on ``G - 1`` df, statsmodels' cluster-robust OLS; ``"bootstrap"``:
    whole clusters resampled, a cluster sign-flip test, slower but free of the normal shape),
    and the outputs say so (:attr:`Comparison.clustering`, ``clusters`` and ``design_effect``
    in the summary).

    **What a test can see.** Every tested row carries its ``min_detectable_difference``: the
    smallest difference detected with 80 % power at the family's level, from the observed
    paired spread (clustered when clustering). A test that finds nothing while that difference
    is larger than the change it saw is **underpowered**, never "no detectable difference".
    For a metric whose compared scores are all 0/1 the exact McNemar test on the discordant
    pairs stands beside it (``mcnemar_p``).

    Args:
        *reports: Two or more reports of one benchmark (recipes), or one report with two
            or more modes. Each may be an ``EvaluationReport`` or anything
            :func:`heta_nb.load_report` accepts; a single list of them works too.
        names: System names. Default: report ids (``report_id/mode`` when several modes
            are compared per report), or the modes within one report; duplicates get
            ``#2``, ``#3``. With several reports, one name per report is also accepted.
        metrics: Metrics to compare. Default: every metric with numeric scores in all
            systems (a system that errored on every case does not narrow the choice).
        modes: Query modes to compare. Default: with one report, all of its modes; with
            several, the modes every report has.
        baseline: The baseline; deltas are ``system - baseline``. Paired by mode (several
            reports), the baseline *report*: its index among the reports or its name (a
            system name picks its report). Otherwise the index or name of the baseline system.
        across_modes: With several reports, test every system against one baseline
            system (``baseline``: a system), modes mixed, instead of mode with mode.
        resamples: Bootstrap resamples, and permutation resamples when not exact.
        confidence: Confidence level of the intervals.
        seed: Seed of every test (``None``: fresh entropy, kept in ``Comparison.seed``).
        include_skipped: Count scores marked skipped (as the 0.0/False Heta recorded).
        alpha: Significance level for ``significant`` and the verdicts (after correction).
        tie_tolerance: ``|delta| <= tie_tolerance`` counts as a tie in wins/ties/losses.
        correction: ``"holm"`` (over each system's metrics against its baseline) or ``"none"``.
        reviews: People's reviews of both reports (prediction-powered estimates beside the tests).
        benchmark: The benchmark the reports ran (heta_nb's or Heta's): its case labels and
            evidence, for ``cluster_by`` and :meth:`Comparison.slices`.
        cluster_by: Cluster the cases: ``"document"``, a case label or metadata field, a
            ``{case_id: group}`` mapping or a function of the case (see above).
        cluster_method: ``"robust"`` (default) or ``"bootstrap"``.

    Returns:
        The :class:`Comparison`.

    Raises:
        ValueError: Fewer than two systems, unknown modes, metrics or baseline, bad names,
            or no numeric metric in common.
    """
    items = reports[0] if len(reports) == 1 and isinstance(reports[0], (list, tuple)) else reports
    loaded = [load_report(item) for item in items]
    if not loaded:
        raise ValueError("compare() needs two or more reports, or one report with two or more modes")
    if correction not in ("holm", "none"):
        raise ValueError(f"correction must be 'holm' or 'none', got {correction!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]

    found: list[str] = []
    report_labels = unique_labels([r.report_id for r in loaded])
    _check_names("mode", [modes] if isinstance(modes, str) else modes, [m for r in loaded for m in r.modes])
    known_metrics = [m for r in loaded for m in r.metric_names]
    _check_names("metric", [metrics] if isinstance(metrics, str) else metrics, known_metrics)
    found.extend(_same_report_warnings(loaded, report_labels))
    pairs, mode_names = resolve_systems(loaded, modes, report_labels, found)
    if len(pairs) < 2:
        raise ValueError(f"compare() needs two or more systems (reports × modes), got {len(pairs)}")
    systems = name_systems(loaded, pairs, mode_names, names, report_labels)
    paired_by_mode = len(loaded) > 1 and bool(mode_names) and not across_modes
    given = [names] if isinstance(names, str) else list(names or [])
    report_names = [str(n) for n in given] if len(loaded) > 1 and len(given) == len(loaded) else report_labels
    base_of, baseline_name = baselines_of(
        systems, baseline, reports=len(loaded), report_names=report_names, paired_by_mode=paired_by_mode
    )

    notes: list[str] = []
    aligned = align_scores(loaded, systems, base_of, metrics, include_skipped, found, notes)
    notes.extend(skipped_notes(aligned.overlap, include_skipped))
    found[:0] = completeness_warnings(loaded, report_labels)
    if len(loaded) > 1:
        found[:0] = report_warnings(loaded, report_labels, aligned.overlap)
    found.extend(overlap_warnings(aligned.overlap))

    clustering = None
    if cluster_by is not None:
        if cluster_method not in ("bootstrap", "robust"):
            raise ValueError(f"cluster_method must be 'bootstrap' or 'robust', got {cluster_method!r}")
        groups = case_groups(cluster_by, aligned.case_ids, benchmark)
        clustering = Clustering(grouping_name(cluster_by), tuple(as_cluster_labels(groups)), cluster_method)
    own = _own_reasons(loaded, systems, aligned.metrics)
    incomparable = _judges_differ(loaded, systems, base_of, aligned.metrics)
    not_applicable = {**untested(own, [s.mode for s in systems], base_of, len(aligned.metrics)), **incomparable}
    intervals: dict[tuple[int, int], Any] = {}
    tests = run_paired_tests(
        aligned,
        base_of,
        not_applicable,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        tie_tolerance=tie_tolerance,
        correction=correction,
        clustering=clustering,
        intervals=intervals,
    )
    if not_applicable:
        for word, untested_ones in (
            ("n/a", {key: why for key, why in not_applicable.items() if key not in incomparable}),
            ("not comparable", incomparable),
        ):
            if untested_ones:
                notes.append(
                    f"{word} (not tested, not in a Holm family): "
                    + "; ".join(
                        f"{systems[k].name} {aligned.metrics[j]}: {why}" for (k, j), why in untested_ones.items()
                    )
                )
    families = _families(systems, base_of, aligned.metrics, tests, not_applicable, correction, paired_by_mode)
    sizes = {k: family.size for k, family in families.items()}
    sensitivity = sensitivities(tests, aligned, base_of, sizes, intervals, alpha=alpha, skip=not_applicable)
    if clustering is not None:
        notes.append(clustering_note(clustering, intervals, systems, aligned.metrics))
    tested = {key: t for key, t in tests.items() if key not in not_applicable}
    notes.extend(interval_notes(tested, [s.name for s in systems], aligned.metrics, alpha, confidence, correction))
    human = None
    if reviews is not None:  # people's estimate of each difference, where they reviewed both reports
        from heta_nb.comparison.people import human_estimates, human_notes  # (pandas: only with reviews)

        human = human_estimates(loaded, report_names, systems, base_of, aligned.metrics, reviews, confidence)
        notes.extend(human_notes(human))

    for message in found:
        warnings.warn(message, HetaComparisonWarning, stacklevel=2)
    return Comparison(
        systems=systems,
        baseline=baseline_name,
        base_of=base_of,
        families=families,
        aligned=aligned,
        tests=tests,
        warnings=found,
        notes=notes,
        reports=tuple(loaded),
        not_applicable=own,
        incomparable=incomparable,
        human=human,
        sensitivity=sensitivity,
        clustering=clustering,
        benchmark=benchmark,
        arguments={
            "names": list(names) if names is not None else None,
            "metrics": [metrics] if isinstance(metrics, str) else (list(metrics) if metrics is not None else None),
            "modes": [modes] if isinstance(modes, str) else (list(modes) if modes is not None else None),
            "baseline": baseline,
            "across_modes": bool(across_modes),
            "resamples": int(resamples),
            "include_skipped": bool(include_skipped),
            "cluster_by": cluster_by,
            "cluster_method": cluster_method,
        },
        settings={
            "resamples": int(resamples),
            "confidence": float(confidence),
            "seed": seed,
            "alpha": float(alpha),
            "tie_tolerance": float(tie_tolerance),
            "correction": correction,
            "include_skipped": bool(include_skipped),
            "paired_by_mode": paired_by_mode,
        },
    )


def _families(
    systems: Sequence[System],
    base_of: dict[int, int],
    metrics: Sequence[str],
    tests: dict[tuple[int, int], Any],
    not_applicable: dict[tuple[int, int], str],
    correction: str,
    paired_by_mode: bool,
) -> dict[int, Family]:
    """The family of each tested system: its metrics with a p-value, named in words."""
    reports = len({s.report_index for s in systems})
    out = {}
    for k, b in base_of.items():
        system, base = systems[k], systems[b]
        if paired_by_mode or (system.mode == base.mode and reports > 1):
            label = system.name[: -len(system.mode) - 1] if system.name.endswith("/" + system.mode) else system.name
            base_label = base.name[: -len(base.mode) - 1] if base.name.endswith("/" + base.mode) else base.name
            subject = f"{system.mode} ({label} vs {base_label})"
        else:
            subject = f"{system.name} vs {base.name}"
        out[k] = Family(
            system=system.name,
            baseline=base.name,
            subject=subject,
            metrics=tuple(
                m
                for j, m in enumerate(metrics)
                if (k, j) not in not_applicable and not math.isnan(tests[(k, j)].p_value)
            ),
            untested=tuple(m for j, m in enumerate(metrics) if (k, j) in not_applicable),
            correction=correction,
        )
    return out


def _judges_differ(
    reports: Sequence[Any], systems: Sequence[Any], base_of: dict[int, int], metrics: Sequence[str]
) -> dict[tuple[int, int], str]:
    """``{(system, metric): "judge differs: ..."}`` where an LLM judge's model, template or settings
    differ between a system's report and its baseline's: the numbers mean different things."""
    found: dict[tuple[int, int], str] = {}
    for k, base in base_of.items():
        mine, theirs = reports[systems[k].report_index], reports[systems[base].report_index]
        if mine is theirs:
            continue
        for j, metric in enumerate(metrics):
            why = judge_difference(mine.metadata, theirs.metadata, metric)
            if why:
                found[(k, j)] = why
    return found


def _own_reasons(reports: Sequence[Any], systems: Sequence[Any], metrics: Sequence[str]) -> dict[tuple[int, int], str]:
    """``{(system, metric): reason}`` where the metric is n/a in the system's mode
    (:attr:`~heta_nb.model.summary.MetricSummary.not_applicable`), the baseline included."""
    reasons: dict[tuple[int, int], str] = {}
    for k, system in enumerate(systems):
        found = reports[system.report_index].columns.not_applicable()
        for j, metric in enumerate(metrics):
            why = found.get((system.mode, metric))
            if why:
                reasons[(k, j)] = why
    return reasons


def _check_names(kind: str, wanted: Sequence[str] | None, known: Sequence[str]) -> None:
    """Refuse a mode or metric no report has, naming the closest one (``did you mean 'ndcg@5'?``)."""
    import difflib

    choices = list(dict.fromkeys(known))
    for name in wanted or ():
        if name in choices:
            continue
        close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else f"the reports have {', '.join(map(repr, choices)) or 'none'}"
        raise HetaNbUserError(f"unknown {kind} {name!r}; {hint}")


def _same_report_warnings(reports: Sequence[Any], labels: Sequence[str]) -> list[str]:
    """A warning for each report given twice: every difference would be 0 by construction."""
    found = []
    for i, report in enumerate(reports):
        for j in range(i):
            other = reports[j]
            if report is other or (report.report_id == other.report_id and report == other):  # stops at a difference
                found.append(
                    f"{labels[j]!r} and {labels[i]!r} are the same report (identical results): every "
                    "difference is 0 by construction; pass the report of another recipe or run "
                    "(or one report alone to compare its modes)"
                )
                break
    return found
