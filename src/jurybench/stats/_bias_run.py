"""``stats bias`` as a whole: the features asked and checked, the run read, each rater fitted
(pointwise: stats/_bias.py; pairwise: stats/_bias_pairs.py), the family of tests adjusted and
the findings read out."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.stats._bias import (
    DEFAULT_FEATURES,
    OWN,
    TEXT_FEATURES,
    Effect,
    Subject,
    _whom,
    base_values,
    design,
    family_of,
    fit_effects,
    fitted_as,
    item_families,
    read_humans,
    read_scores,
    read_subjects,
    reading,
)
from jurybench.stats._bias_pairs import pair_reading, pairwise_effects
from jurybench.stats._held import Held, exact

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


PAIRWISE_DEFAULT = ("tokens", "headers", "lists", "bold", "code", "self", "position")


def bias(
    con: Connection,
    run_id: str,
    *,
    features: list[str] | None,
    against: str,
    families: Mapping[str, str],
    where: str | None,
    cluster: str,
    correction: str,
    alpha: float,
    raters: str = "all",
) -> dict[str, object]:
    """The effects of ``features`` on every rater's scores of a pointwise run (see the module) or
    on its symmetrized verdicts of a pairwise run (stats/_bias_pairs.py)."""
    from jurybench.annotations import run_rubric
    from jurybench.rubric import is_pairwise
    from jurybench.stats._multiple import benjamini_hochberg, holm
    from jurybench.stats.sql import check_run

    check_run(con, run_id)
    rubric = run_rubric(con, run_id)
    pairwise = is_pairwise(rubric)
    if not rubric.scores_items and not pairwise:
        raise JurybenchError(
            f"stats bias reads pointwise runs (points on a scale per item) and pairwise ones; run '{run_id}' used a "
            f"{rubric.kind} rubric."
        )
    named = features is not None
    wanted = list(dict.fromkeys(features or (PAIRWISE_DEFAULT if pairwise else DEFAULT_FEATURES)))
    own_kind = "position" if pairwise else "language"
    for f in wanted:
        if f not in TEXT_FEATURES and f not in ("self", own_kind) and not f.startswith(("meta.", "sql:")):
            other = {"position": "pairwise", "language": "pointwise"}.get(f)
            raise JurybenchError(
                f"--feature {f!r} is not known{f' on a {rubric.kind} run (it is asked of {other} runs)' if other else ''}.",
                hint=f"Valid: {', '.join([*TEXT_FEATURES, 'self', own_kind])}, meta.<field> or sql:<expression>.",
            )
    extras = [f for f in wanted if f.startswith(("meta.", "sql:"))]
    subjects = read_subjects(con, run_id, where=where, cluster=cluster, extras=extras, pairs=pairwise)
    if not subjects:
        raise JurybenchError(f"run '{run_id}' has no items{f' where {where}' if where else ''}.")
    said_of: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"raters": set(), "criteria": set()})
    languages = sorted(
        {s.language for s in subjects.values() if s.language},
        key=lambda lang: (-sum(1 for s in subjects.values() if s.language == lang), lang),
    )
    per_item = item_families(subjects, families)
    models = _juror_models(con, run_id)
    juror_family = {j: family_of(m, families) or family_of(j, families) for j, m in models.items()}
    _prune(wanted, named, run_id, subjects, languages, per_item, juror_family, extras)
    jurors = sorted(models)
    shared = [f for f in wanted if f not in ("self", "position")]
    base = base_values(subjects, shared, languages)
    binary = frozenset(
        f
        for f in extras
        if f in wanted and {v for s in subjects.values() if not math.isnan(v := s.extra[f])} <= {0.0, 1.0}
    )
    order = [*jurors, "jury"] if raters == "all" else (["jury"] if raters == "jury" else jurors)
    if pairwise:
        effects, modes, pair_notes = pairwise_effects(
            con,
            run_id,
            wanted=wanted,
            named=named,
            against=against,
            subjects=subjects,
            base=base,
            names=shared,
            binary=binary,
            family_of_item=per_item,
            juror_family=juror_family.get,
            raters=raters,
            alpha=alpha,
        )
        for note, rater, category in pair_notes:
            said_of[note]["raters"].add(rater)
            said_of[note]["criteria"].add(category)
        dimensions = sorted(modes)
    else:
        effects, modes = _pointwise_effects(
            rubric.dimensions,
            order,
            read_scores(con, run_id)[0],
            read_humans(con, run_id) if against in ("humans", "auto") else {},
            against,
            run_id,
            base,
            wanted,
            languages,
            binary,
            subjects,
            alpha,
            said_of,
            juror_family,
            per_item,
            jurors,
        )
        dimensions = list(rubric.dimensions)
    if not effects:
        raise JurybenchError(
            f"run '{run_id}': no effect could be estimated.",
            hint=f"It needs valid scores on {'pairs' if pairwise else 'items'} from at least two prompts, and "
            "features that vary.",
        )
    adjust = holm if correction == "holm" else benjamini_hochberg
    adjusted = adjust([e.p for e in effects])
    for e, q in zip(effects, adjusted, strict=True):
        e.p_adjusted, e.significant = float(q), bool(q <= alpha)
    name = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[correction]
    notes = [note + _whom(who, order, dimensions) for note, who in said_of.items()]
    held = _held_summary(con, run_id, modes, pairwise)
    notes += [
        f"{c}: the humans' mean is mostly their noise (reliability {h['reliability']:.2f}, from their disagreement on "
        f"{h['labelled_twice']} subjects labelled twice or more): holding it fixed leaves wide intervals; more "
        "annotators a subject narrow them"
        for c, h in held.items()
        if isinstance(h["reliability"], float) and h["reliability"] < 0.5
    ]
    say = pair_reading if pairwise else reading
    readings = [say(e, modes[e.criterion], name) for e in effects if e.significant]
    if not readings:
        readings = [f"no effect beyond chance at alpha {alpha:g} after {name}'s correction over {len(effects)} tests"]
    return {
        "kind": "pairwise" if pairwise else "pointwise",
        "against": modes,
        "correction": correction,
        "alpha": alpha,
        "level": 1 - alpha,
        "cluster": cluster,
        "features": wanted,
        "languages": languages,
        "families": {"jurors": juror_family, "responses": sorted({f for f in per_item.values() if f})},
        "held": held,  # per criterion fitted against the humans: what was held fixed, and how reliable it is
        "effects": [e.as_dict() for e in effects],
        "readings": readings,
        "notes": notes,
    }


def _prune(
    wanted: list[str],
    named: bool,
    run_id: str,
    subjects: Mapping[str, Subject],
    languages: list[str],
    per_item: Mapping[str, str | None],
    juror_family: Mapping[str, str | None],
    extras: list[str],
) -> None:
    """Drop from ``wanted`` (in place) what cannot be estimated on this run: one language, no
    response from a juror's family, a feature that never varies; refused in one line when the
    user named the features."""
    if "language" in wanted and len(languages) < 2:
        if named:
            raise JurybenchError(f"--feature language: run '{run_id}' has one language; nothing to compare.")
        wanted.remove("language")
    if "self" in wanted and not any(f and f in per_item.values() for f in juror_family.values()):
        if named:
            raise JurybenchError(
                "--feature self: no response comes from a juror's family.",
                hint="Name families with --family NAME=FAMILY (a juror's or a model's name, or its start).",
            )
        wanted.remove("self")
    for f in list(wanted):  # a feature the user named that never varies is a mistake worth one line
        if f in TEXT_FEATURES or f in extras:
            values = {v[0] for v in base_values(subjects, [f], languages).values() if not math.isnan(v[0])}
            if len(values) < 2:
                if named:
                    raise JurybenchError(
                        f"--feature {f}: it has one value ({next(iter(values), 'none')}) on every item of run "
                        f"'{run_id}'; nothing to estimate.",
                        hint="Leave it out, or choose items where it varies (--where).",
                    )
                wanted.remove(f)
    if not wanted:
        raise JurybenchError(f"run '{run_id}': none of the features varies over its items.")


def _held_summary(
    con: Connection, run_id: str, modes: Mapping[str, str], pairwise: bool
) -> dict[str, dict[str, object]]:
    """For each criterion fitted against the humans: what was held fixed (stats/_held.py)."""
    from jurybench.stats._bias_pairs import read_pair_humans

    wanted = [c for c, mode in modes.items() if mode == "humans"]
    if not wanted:
        return {}
    humans = read_pair_humans(con, run_id) if pairwise else read_humans(con, run_id)
    return {c: humans[c].summary() for c in wanted if c in humans}


def _juror_models(con: Connection, run_id: str) -> dict[str, str]:
    """Each juror of the run's panel (by its label) and its model."""
    return {
        str(j): str(m)
        for j, m in con.execute(
            "SELECT coalesce(rj.name, ju.name), ju.model FROM run_jurors rj JOIN jurors ju USING (juror_key) "
            "WHERE rj.run_id = ? ORDER BY 1",
            [run_id],
        ).fetchall()
    }


def _pointwise_effects(
    dimensions: list[str],
    order: list[str],
    scores: dict[tuple[str, str], dict[str, float]],
    humans: dict[str, Held],
    against: str,
    run_id: str,
    base: Mapping[str, list[float]],
    wanted: list[str],
    languages: list[str],
    binary: frozenset[str],
    subjects: dict[str, Subject],
    alpha: float,
    said_of: dict[str, dict[str, set[str]]],
    juror_family: Mapping[str, str | None],
    per_item: Mapping[str, str | None],
    jurors: list[str],
) -> tuple[list[Effect], dict[str, str]]:
    """Every rater x criterion fit of a pointwise run, and how each criterion was fitted."""

    def family_column(rater: str) -> Callable[[str], float] | None:
        if "self" not in wanted:
            return None
        if rater == "jury":
            fams = {juror_family[j] for j in jurors} - {None}
            return lambda item: 1.0 if per_item[item] in fams else 0.0
        own = juror_family.get(rater)
        if not own or own not in per_item.values():  # no response of its family: nothing to ask
            return None
        return lambda item: 1.0 if own == per_item[item] else 0.0

    effects: list[Effect] = []
    modes: dict[str, str] = {}
    for criterion in dimensions:
        labelled = humans.get(criterion) or exact({})
        mode = modes[criterion] = fitted_as(against, labelled, run_id, criterion)
        for rater in order:
            given = scores.get((rater, criterion))
            if not given:
                continue
            own = "on responses from the family of one of its jurors" if rater == "jury" else OWN
            d = design(
                base, wanted, rater_family=family_column(rater), languages=languages, own_unit=own, binary=binary
            )
            found, said = fit_effects(
                rater, criterion, given, labelled if mode == "humans" else None, d, subjects, 1 - alpha
            )
            effects.extend(found)
            for note in said:
                said_of[note]["raters"].add(rater)
                said_of[note]["criteria"].add(criterion)
    return effects, modes
