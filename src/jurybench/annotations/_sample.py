"""Drawing the subjects people label (``annotations sample``): a random sample of a run's
subjects, each drawn subject's inclusion probability recorded in ``label_samples``, so that
``stats ppi`` can weight the labels by it and its guarantee holds.

Designs: ``uniform`` (n of the N subjects, every subject equally likely, probability n / N);
``stratified`` (proportional allocation: n_h of each stratum's N_h, probability n_h / N_h, about
n / N everywhere); ``active`` (each subject drawn on its own, Poisson, with a probability half
uniform and half in proportion to the jury's uncertainty about it, the spread of its jurors'
scores, averaging n draws:
the labels go where the jury is least sure, and weighting by 1 / probability keeps the estimate
unbiased).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

DESIGNS = ("uniform", "stratified", "active")


def draw_sample(
    con: Connection,
    run_id: str,
    *,
    n: int,
    seed: int = 0,
    name: str | None = None,
    stratify: str | None = None,
    design: str = "uniform",
    cluster: str | None = None,
) -> dict[str, object]:
    """Draw and record a sample of the run's subjects; what was drawn (see the module's text).
    ``cluster`` (prompt, model, language, dataset or meta.<field>; uniform design only): whole
    clusters are drawn, at random, until at least n subjects are in; each subject's chance is
    then the share of clusters drawn, and the design is recorded as ``cluster:<column>``."""
    from jurybench.annotations._data import run_rubric

    if design not in DESIGNS:
        raise JurybenchError(f"--design {design!r} is not a sampling design.", hint=f"Valid: {', '.join(DESIGNS)}.")
    if (design == "stratified") != (stratify is not None):
        raise JurybenchError("--stratify and --design stratified go together.", hint="Give both, or neither.")
    if cluster is not None and design != "uniform":
        raise JurybenchError("--cluster draws whole clusters uniformly.", hint="Leave --design at uniform.")
    rubric = run_rubric(con, run_id)
    subjects = [
        r[0]
        for r in con.execute("SELECT subject_id FROM run_subjects WHERE run_id = ? ORDER BY 1", [run_id]).fetchall()
    ]
    big_n = len(subjects)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= big_n:
        raise JurybenchError(f"--n must be a whole number from 1 to the run's {big_n} subjects (got {n!r}).")
    name = name or f"{run_id}-sample"
    if con.execute("SELECT 1 FROM label_samples WHERE sample = ? LIMIT 1", [name]).fetchall():
        raise JurybenchError(f"a sample named {name!r} exists.", hint="Choose another --name.")
    check_seed(seed)
    rng = np.random.default_rng(seed)
    strata: dict[str, str] = {}
    if cluster is not None:
        strata = strata_of(con, rubric, subjects, cluster)
        drawn = _whole_clusters(rng, subjects, strata, n)
        design = f"cluster:{cluster}"
    elif design == "uniform":
        drawn = {subjects[i]: n / big_n for i in rng.choice(big_n, size=n, replace=False)}
    elif design == "stratified":
        strata = strata_of(con, rubric, subjects, str(stratify))
        drawn = proportional_draw(rng, subjects, strata, n)
    else:
        probability = _active_probabilities(con, rubric, run_id, subjects, n)
        drawn = {s: float(p) for s, p in zip(subjects, probability, strict=True) if rng.random() < p}
    rows = [(name, run_id, s, p, strata.get(s), design, seed, big_n) for s, p in sorted(drawn.items())]
    if not rows:
        raise JurybenchError("the draw came out empty.", hint="Raise --n, or draw again with another --seed.")
    con.executemany(
        "INSERT INTO label_samples (sample, run_id, subject_id, probability, stratum, design, seed, n_population) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return {
        "sample": name,
        "run": run_id,
        "design": design,
        "seed": seed,
        "n_population": big_n,
        "n_drawn": len(rows),
        "subjects": [r[2] for r in rows],
    }


def check_seed(seed: object, flag: str = "--seed") -> None:
    """A seed numpy takes and the store keeps: a whole number from 0 to 2^63 - 1."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise JurybenchError(f"{flag} must be a whole number from 0 to 2^63 - 1 (got {seed!r}).")


def strata_of(con: Connection, rubric: Any, subjects: list[str], stratify: str) -> dict[str, str]:
    """Each subject's stratum (or cluster): an item column (prompt, model, language, dataset)
    or meta.<field>; for pairs, response A's."""
    import re

    meta = re.fullmatch(r"meta\.([A-Za-z0-9_]+)", stratify)
    if stratify not in ("prompt", "model", "language", "dataset") and not meta:
        raise JurybenchError(
            f"{stratify!r} is not a column to group subjects by.",
            hint="Use prompt, model, language, dataset or meta.<field>.",
        )
    column = f"json_extract_string(i.metadata, '$.{meta.group(1)}')" if meta else f"i.{stratify}"
    if rubric.subject_table == "pairs":
        sql = f"SELECT p.pair_id, CAST({column} AS VARCHAR) FROM pairs p JOIN items i ON i.item_id = p.item_a"
    else:
        sql = f"SELECT i.item_id, CAST({column} AS VARCHAR) FROM items i"
    found = {k: v for k, v in con.execute(sql).fetchall() if v is not None}
    if subjects and not any(s in found for s in subjects):
        raise JurybenchError(
            f"no subject of the run has a value of {stratify!r}: every subject would fall in one group.",
            hint="Name a column or meta field the items carry (see: SELECT metadata FROM items LIMIT 5).",
        )
    return {s: str(found.get(s, "(missing)")) for s in subjects}


def _whole_clusters(
    rng: np.random.Generator, subjects: list[str], clusters: dict[str, str], n: int
) -> dict[str, float]:
    """Whole clusters in a random order until at least n subjects are drawn; each drawn
    subject's chance is the share of clusters drawn."""
    members: dict[str, list[str]] = {}
    for s in subjects:
        members.setdefault(clusters[s], []).append(s)
    keys = sorted(members)
    drawn: list[str] = []
    taken = 0
    for i in rng.permutation(len(keys)):
        if len(drawn) >= n:
            break
        drawn += members[keys[i]]
        taken += 1
    return dict.fromkeys(drawn, taken / len(keys))


def proportional_draw(
    rng: np.random.Generator, subjects: list[str], strata: dict[str, str], n: int
) -> dict[str, float]:
    """n_h of each stratum's N_h by proportional allocation (largest remainders), at random."""
    groups: dict[str, list[str]] = {}
    for s in subjects:
        groups.setdefault(strata[s], []).append(s)
    share = {h: n * len(m) / len(subjects) for h, m in groups.items()}
    alloc = {h: math.floor(v) for h, v in share.items()}
    for h in sorted(share, key=lambda h: (alloc[h] - share[h], h))[: n - sum(alloc.values())]:
        alloc[h] += 1
    drawn: dict[str, float] = {}
    for h, members in sorted(groups.items()):
        for i in rng.choice(len(members), size=alloc[h], replace=False):
            drawn[members[i]] = alloc[h] / len(members)
    return drawn


def _active_probabilities(con: Connection, rubric: Any, run_id: str, subjects: list[str], n: int) -> np.ndarray:
    """Each subject's chance from the spread of its jurors' scores (the mean over criteria of
    their SD): :func:`active_probabilities`."""
    key = rubric.subject_column
    score = "juror_epsilon" if rubric.subject_table == "pairs" else "juror_score"
    spread = dict(
        con.execute(
            f"""SELECT {key}, avg(sd) FROM (
                    SELECT {key}, {rubric.dimension_column}, coalesce(stddev_pop({score}), 0) AS sd
                    FROM {rubric.juror_view} WHERE run_id = ? AND {score} IS NOT NULL GROUP BY 1, 2)
                GROUP BY 1""",
            [run_id],
        ).fetchall()
    )
    return active_probabilities(np.array([float(spread.get(s) or 0.0) for s in subjects]), n)


ACTIVE_MIX = 0.5  # half uniform, half in proportion to the jury's uncertainty


def active_probabilities(uncertainty: np.ndarray, n: int) -> np.ndarray:
    """Inclusion probabilities averaging n / N: half uniform, half in proportion to each
    subject's uncertainty (the jurors' spread), at most 1. The uniform half keeps every chance
    at least n / (2N), so the weights 1 / probability stay bounded. With no spread at all (one
    juror), uniform."""
    base = n / len(uncertainty)
    mean = float(np.mean(uncertainty))
    if mean <= 0:
        return np.full(len(uncertainty), base)
    return np.asarray(np.clip(base * ((1 - ACTIVE_MIX) + ACTIVE_MIX * uncertainty / mean), 0.0, 1.0), dtype=float)


def newest_sample(con: Connection, run_id: object) -> str | None:
    """The name of the run's newest label sample (the one ``stats ppi`` and the viewer's sample
    queue use when none is named), or None when it has none."""
    found = con.execute(
        "SELECT sample FROM label_samples WHERE run_id = ? GROUP BY sample ORDER BY max(drawn_at) DESC, sample LIMIT 1",
        [run_id],
    ).fetchall()
    return str(found[0][0]) if found else None
