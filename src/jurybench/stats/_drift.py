"""Did the judge move between two runs? ``stats drift --from A --to B`` on pointwise runs.

Anchors are the subjects both runs judged with byte-identical content: the same prompt,
response and language (the same item, or one imported again under another id). On them the
system judged did not change, so the mean of (score in B - score in A) is the judge's shift:
a new model snapshot, a changed rubric or prompt. The headline change is the mean score of
everything B judged minus that of everything A judged; the rest (headline - shift) is what the
judged system's change accounts for. All three come with cluster-robust intervals over prompts
(each a ratio of sums per prompt, linearised; Student's t on prompts - 1), computed together. Per rater (each juror present in both runs by its label, and the jury) and
criterion, with the anchors' agreement between the runs: exact, within one point, mean
absolute difference.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray

    from jurybench.rubric import AnyRubric

    Array = NDArray[np.float64]


def contents(con: Connection, run_id: str) -> dict[str, tuple[str, str]]:
    """item -> (its prompt, a digest of what a judge is shown of it: prompt, response, language)."""
    rows = con.execute(
        "SELECT item_id, coalesce(prompt, item_id), md5(coalesce(prompt, '') || chr(31) || coalesce(response, '') "
        "|| chr(31) || coalesce(language, '')) FROM items "
        "WHERE item_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)",
        [run_id],
    ).fetchall()
    return {str(item): (str(prompt), str(digest)) for item, prompt, digest in rows}


def pair_contents(con: Connection, run_id: str) -> dict[str, tuple[str, str]]:
    """pair -> (its first response's prompt, a digest of both responses as a judge is shown them)."""
    rows = con.execute(
        "SELECT p.pair_id, coalesce(a.prompt, p.pair_id), md5(concat_ws(chr(31), coalesce(a.prompt, ''), "
        "coalesce(a.response, ''), coalesce(a.language, ''), coalesce(b.prompt, ''), coalesce(b.response, ''), "
        "coalesce(b.language, ''))) FROM pairs p JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b "
        "WHERE p.pair_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)",
        [run_id],
    ).fetchall()
    return {str(pair): (str(prompt), str(digest)) for pair, prompt, digest in rows}


def anchors(before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """(item in the earlier run, item in the later run) whose judged content is identical; an
    item itself first, else the first (by id) of the same content."""
    by_digest: dict[str, str] = {}
    for item in sorted(before):
        by_digest.setdefault(before[item][1], item)
    out = []
    for item in sorted(after):
        if item in before:
            out.append((item, item))
        elif after[item][1] in by_digest:
            out.append((by_digest[after[item][1]], item))
    return out


@dataclass
class Parts:
    """Per prompt (cluster), the sums and counts the three figures are made of."""

    clusters: list[str]
    shift_sum: Array
    shift_n: Array
    before_sum: Array
    before_n: Array
    after_sum: Array
    after_n: Array

    def intervals(self, level: float) -> dict[str, tuple[float, float, float, float]]:
        """Each figure's (value, low, high, standard error): a ratio of cluster sums linearised
        (its influence per cluster, u_g), V = G/(G-1) sum u_g^2, and Student's t on G - 1
        degrees of freedom, as a cluster-robust mean is (the percentile bootstrap covered 92.7 %
        at 40 clusters)."""
        from scipy import stats as st

        def ratio(total: Array, count: Array) -> tuple[float, Array]:
            n = float(count.sum())
            value = float(total.sum()) / n
            return value, (total - value * count) / n

        shift, u_shift = ratio(self.shift_sum, self.shift_n)
        after, u_after = ratio(self.after_sum, self.after_n)
        before, u_before = ratio(self.before_sum, self.before_n)
        g = len(self.clusters)
        t = float(st.t.ppf(0.5 + level / 2, g - 1)) if g > 1 else math.nan
        out = {}
        for name, value, u in (
            ("shift", shift, u_shift),
            ("headline", after - before, u_after - u_before),
            ("rest", after - before - shift, u_after - u_before - u_shift),
        ):
            se = math.sqrt(g / (g - 1) * float(np.sum(u**2))) if g > 1 else math.nan
            out[name] = (value, value - t * se, value + t * se, se)
        return out


def parts(
    before: dict[str, float],
    after: dict[str, float],
    pairs: list[tuple[str, str]],
    prompt_of: dict[str, str],
) -> Parts:
    """Sums by prompt: the anchors' differences, and every score of each run."""
    clusters = sorted({prompt_of[i] for i in [*before, *after] if i in prompt_of})
    index = {c: k for k, c in enumerate(clusters)}
    arrays = [np.zeros(len(clusters)) for _ in range(6)]
    shift_sum, shift_n, before_sum, before_n, after_sum, after_n = arrays
    for a, b in pairs:
        if a in before and b in after:
            k = index[prompt_of[b]]
            shift_sum[k] += after[b] - before[a]
            shift_n[k] += 1
    for scores, total, count in ((before, before_sum, before_n), (after, after_sum, after_n)):
        for item, value in sorted(scores.items()):  # in id order: sums do not depend on storage order
            k = index[prompt_of[item]]
            total[k] += value
            count[k] += 1
    return Parts(clusters, *arrays)


FIGURES = ("shift", "headline", "rest")


MIN_ANCHOR_PROMPTS = 10  # below it a row's intervals are printed with a warning (make validity checks 10 and 40)


def figure_fields(p: Parts, alpha: float, beyond: float | None) -> dict[str, object]:
    """A row's three figures with their intervals, whether the shift is beyond chance, its
    ``p_beyond`` (when asked) and the counts they rest on.

    A figure whose clusters show no spread at all (every anchor prompt moved by the same amount,
    as six anchors scored half a point apart can) has no interval: a standard error of 0 would
    print +0.50 [0.50, 0.50], certainty from a handful of subjects. Its interval is left empty
    (None) and the shift is judged by the sign test over the anchor prompts instead (all of them
    moved the same way: p = 2 * 0.5^prompts, two-sided), given as ``p_sign``."""
    found = p.intervals(1 - alpha)
    prompts = int(np.count_nonzero(p.shift_n))
    row: dict[str, object] = {"n_anchor_prompts": prompts}
    for name, (value, low, high, se) in found.items():
        spread = se > 1e-12
        row |= {
            name: _exact(value),
            f"{name}_low": _exact(low) if spread else None,
            f"{name}_high": _exact(high) if spread else None,
        }
    shift, _, _, se = found["shift"]
    if se > 1e-12:
        row["shift_significant"] = bool(row["shift_low"] > 0 or row["shift_high"] < 0)  # type: ignore[operator]
    else:
        p_sign = 1.0 if _exact(shift) == 0 else min(1.0, 2 * 0.5**prompts)
        row["p_sign"] = p_sign
        row["shift_significant"] = p_sign <= alpha
    if beyond is not None:
        row["p_beyond"] = beyond_p(shift, se, beyond, len(p.clusters) - 1, prompts)
    return row


def few_anchor_prompts(row: dict[str, object]) -> str | None:
    """A row's warning when its anchors come from fewer than MIN_ANCHOR_PROMPTS prompts."""
    prompts = int(row["n_anchor_prompts"])  # type: ignore[call-overload]
    if prompts >= MIN_ANCHOR_PROMPTS:
        return None
    return (
        f"{row['rater']}, {row['criterion']}: its {row['n_anchors']} anchors come from {prompts} prompt(s), fewer "
        f"than {MIN_ANCHOR_PROMPTS}: the intervals' level is not assured with so few (prompts, not anchors, are "
        "what count); fix more anchors (jurybench anchors add)."
    )


def beyond_p(value: float, se: float, size: float, df: int, prompts: int | None = None) -> float:
    """One-sided p-value of |true value| > ``size`` in the estimate's direction (t on ``df``).
    With no spread (``se`` 0) the sign test over the ``prompts`` that moved: every one of them
    moved past ``size`` the same way, p = 0.5^prompts (not 0: so few cannot make it certain)."""
    from scipy import stats as st

    if se <= 1e-12:
        return min(1.0, 0.5 ** (prompts or df + 1)) if abs(value) > size else 1.0
    return float(st.t.sf((abs(value) - size) / se, df))


def _exact(value: float) -> float:
    """A figure with the rounding of a difference of sums taken off (the rest of a run whose
    every subject is an anchor is 0, not 3e-16)."""
    return 0.0 if abs(value) < 1e-9 else round(value, 12)


def drift_figures(
    before: dict[str, float],
    after: dict[str, float],
    pairs: list[tuple[str, str]],
    prompt_of: dict[str, str],
    *,
    level: float = 0.95,
) -> dict[str, tuple[float, float, float]]:
    """The judge's shift, the headline change and the rest, each (value, low, high), from the
    two runs' scores (subject -> score), the anchors (subject before, subject after) and each
    subject's prompt: what ``stats drift`` gives per rater and criterion."""
    found = parts(before, after, pairs, prompt_of).intervals(level)
    return {name: (value, low, high) for name, (value, low, high, _) in found.items()}


def agreement(
    before: dict[str, float], after: dict[str, float], pairs: list[tuple[str, str]], *, verdicts: bool = False
) -> dict[str, float]:
    """The anchors' scores in the two runs: exact (equal when rounded), within one point, MAE;
    with ``verdicts`` (a pairwise run) also Cohen's kappa of the verdicts, the sign of each
    symmetrized score (A, B or a tie)."""
    both = [(before[a], after[b]) for a, b in pairs if a in before and b in after]
    if not both:
        return {"exact": math.nan, "within_one": math.nan, "mae": math.nan} | ({"kappa": math.nan} if verdicts else {})
    x, y = np.array(both).T
    out = {
        "exact": float(np.mean(np.round(x) == np.round(y))),
        "within_one": float(np.mean(np.abs(x - y) <= 1)),
        "mae": float(np.mean(np.abs(x - y))),
    }
    if verdicts:
        out["kappa"] = kappa(np.sign(x), np.sign(y))
    return out


def kappa(first: Array, second: Array) -> float:
    """Cohen's kappa of two raters' categories: (p_o - p_e) / (1 - p_e); nan when p_e is 1."""
    labels = np.union1d(first, second)
    p_o = float(np.mean(first == second))
    p_e = float(sum(np.mean(first == c) * np.mean(second == c) for c in labels))
    return (p_o - p_e) / (1 - p_e) if p_e < 1 else math.nan


def reading(row: dict[str, object]) -> str:
    """'jury, relevance: the judge moved +0.31 [0.20, 0.42] on 50 anchors; of the headline change
    +0.52 [...], the rest is +0.21 [...]: the judge's shift is the larger part'."""

    def num(key: str) -> float:
        return float(row[key])  # type: ignore[arg-type]

    def figure(key: str) -> str:
        if row.get(key + "_low") is None:  # no spread over the prompts: no interval
            return f"{num(key):+.2f} (no spread: no interval)"
        return f"{num(key):+.2f} [{num(key + '_low'):.2f}, {num(key + '_high'):.2f}]"

    head = f"{row['rater']}, {row['criterion']}: "
    on = f"on {row['n_anchors']} anchors"
    if "p_sign" in row and num("shift") != 0:
        on += f"; all {row['n_anchor_prompts']} anchor prompts moved alike, sign test p = {num('p_sign'):.2g}"
    if num("mae") == 0:
        moved = f"the judge gave each of the {row['n_anchors']} anchors the same score in both runs"
    elif row["shift_significant"]:
        moved = f"the judge moved {figure('shift')} {on}"
    else:
        moved = f"the judge did not move beyond chance ({figure('shift')} {on})"
    if row["n_anchors"] == row["n_before"] == row["n_after"]:  # nothing but anchors: no system changed
        return f"{head}{moved}; both runs judged the same subjects, so that is the whole change"
    changed = row.get("headline_low") is not None and (num("headline_low") > 0 or num("headline_high") < 0)
    if not changed and not row["shift_significant"]:
        return f"{head}{moved}; the headline change {figure('headline')} is within chance"
    if num("shift") * num("rest") < 0:  # parts of opposite signs: neither is a "part" of the change
        larger = "the judge's shift and the rest pull in opposite directions"
    else:
        larger = (
            "the judge's shift is the larger part"
            if abs(num("shift")) > abs(num("rest"))
            else "the rest is the larger part"
        )
    return f"{head}{moved}; of the headline change {figure('headline')}, the rest is {figure('rest')}: {larger}"


def drift(
    con: Connection,
    after_run: str,
    before_run: str,
    *,
    alpha: float,
    beyond: float | None = None,
) -> dict[str, object]:
    """The judge's shift on the anchors, the headline change and the rest (see the module).
    ``beyond``: each row's ``p_beyond``, the one-sided p-value of |shift| > beyond."""
    from jurybench.annotations import run_rubric
    from jurybench.rubric import is_pairwise
    from jurybench.stats._bias import read_scores
    from jurybench.stats._bias_pairs import read_pair_scores
    from jurybench.stats.sql import check_run

    if after_run == before_run:
        raise JurybenchError(f"--from and --to are both '{after_run}': drift compares two runs.")
    check_run(con, before_run)
    check_run(con, after_run)
    rubrics = {r: run_rubric(con, r) for r in (before_run, after_run)}
    for r, rubric in rubrics.items():
        if not (rubric.scores_items or is_pairwise(rubric) or rubric.categorical):
            raise JurybenchError(
                f"stats drift reads pointwise, pairwise and classification runs; run '{r}' used a {rubric.kind} rubric."
            )
    old, new = rubrics[before_run], rubrics[after_run]
    if old.name != new.name:
        raise JurybenchError(
            f"runs '{before_run}' and '{after_run}' used different rubrics ('{old.name}', '{new.name}'): their scores "
            "are not on one footing.",
            hint="Compare runs of one rubric (its versions may differ: a changed rubric is a drift to measure).",
        )
    pairwise = is_pairwise(new)
    if new.categorical and not pairwise:  # a label per item: its accuracy drifts, its labels agree or not
        return _label_drift(con, before_run, after_run, alpha=alpha, beyond=beyond, notes=_rubric_notes(old, new))
    read = pair_contents if pairwise else contents
    before_items, after_items = read(con, before_run), read(con, after_run)
    pairs = anchors(before_items, after_items)
    if not pairs:
        raise JurybenchError(
            f"runs '{before_run}' and '{after_run}' share no subject: no {'pair' if pairwise else 'item'} of one has "
            "the other's content.",
            hint="Drift is measured on anchors: subjects both runs judged, byte for byte.",
        )
    prompt_of = {i: p for i, (p, _) in {**before_items, **after_items}.items()}
    before_scores, after_scores = (
        (read_pair_scores(con, r)[0] if pairwise else read_scores(con, r)[0]) for r in (before_run, after_run)
    )
    criteria = (
        sorted({c for _, c in before_scores} & {c for _, c in after_scores})
        if pairwise
        else [c for c in new.dimensions if c in old.dimensions]
    )
    raters = sorted({r for r, _ in after_scores if r != "jury"} & {r for r, _ in before_scores if r != "jury"})
    raters.append("jury")
    rows = []
    for criterion in criteria:
        for rater in raters:
            before, after = before_scores.get((rater, criterion)), after_scores.get((rater, criterion))
            if not before or not after:
                continue
            p = parts(before, after, pairs, prompt_of)
            if not p.shift_n.sum():
                continue
            g = len(p.clusters)
            if g < 2:
                continue
            row: dict[str, object] = {"rater": rater, "criterion": criterion, "n_anchors": int(p.shift_n.sum())}
            row |= figure_fields(p, alpha, beyond)
            row |= agreement(before, after, pairs, verdicts=pairwise)
            row |= {"n_before": len(before), "n_after": len(after), "n_clusters": g}
            rows.append(row)
    if not rows:
        raise JurybenchError(
            f"runs '{before_run}' and '{after_run}': no rater has valid scores on an anchor in both.",
            hint="The jury needs scores on the shared subjects in both runs.",
        )
    notes = _rubric_notes(old, new)
    return {
        "kind": "pairwise" if pairwise else "pointwise",
        "from": before_run,
        "to": after_run,
        "alpha": alpha,
        "n_anchors": len(pairs),
        "criteria": criteria,
        "rows": rows,
        "readings": [reading(r) for r in rows if r["rater"] == "jury"],
        "notes": notes,
        "warnings": [w for r in rows if r["rater"] == "jury" and (w := few_anchor_prompts(r))],
    }


def _rubric_notes(old: AnyRubric, new: AnyRubric) -> list[str]:
    if old.version != new.version or old.content_hash != new.content_hash:
        return [f"the rubric changed between the runs ({old.name} {old.version} -> {new.version}): a shift includes it"]
    return []


def read_labels(con: Connection, run_id: str) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    """A classification run's jurors: item -> accuracy (the share of its valid samples naming the
    gold label; items with gold only) and item -> the label its first valid sample named."""
    accuracy: dict[str, dict[str, float]] = defaultdict(dict)
    labels: dict[str, dict[str, str]] = defaultdict(dict)
    for juror, item, acc, label in con.execute(
        "SELECT juror, item_id, avg(CAST(correct AS DOUBLE)), arg_min(predicted, sample_index) "
        "FROM classification_outcomes WHERE run_id = ? AND NOT invalid GROUP BY ALL",
        [run_id],
    ).fetchall():
        if acc is not None:
            accuracy[str(juror)][str(item)] = float(acc)
        labels[str(juror)][str(item)] = str(label)
    return dict(accuracy), dict(labels)


def _label_drift(
    con: Connection, before_run: str, after_run: str, *, alpha: float, beyond: float | None, notes: list[str]
) -> dict[str, object]:
    """Drift of a classification run, per juror: the shift of its accuracy on the anchors (gold
    labels needed), the headline change and the rest as for scores; and how far its labels on the
    anchors agree between the runs (exact, Cohen's kappa)."""
    before_items, after_items = contents(con, before_run), contents(con, after_run)
    pairs = anchors(before_items, after_items)
    if not pairs:
        raise JurybenchError(
            f"runs '{before_run}' and '{after_run}' share no subject: no item of one has the other's content.",
            hint="Drift is measured on anchors: subjects both runs judged, byte for byte.",
        )
    prompt_of = {i: p for i, (p, _) in {**before_items, **after_items}.items()}
    (acc_before, labels_before), (acc_after, labels_after) = read_labels(con, before_run), read_labels(con, after_run)
    rows: list[dict[str, object]] = []
    for juror in sorted(set(labels_before) & set(labels_after)):
        said = [
            (labels_before[juror][a], labels_after[juror][b])
            for a, b in pairs
            if a in labels_before[juror] and b in labels_after[juror]
        ]
        if not said:
            continue
        first, second = (np.array(v) for v in zip(*said, strict=True))
        row: dict[str, object] = {"rater": juror, "criterion": "accuracy", "n_anchors": len(said)}
        row |= {
            "exact": float(np.mean(first == second)),
            "within_one": None,
            "mae": None,
            "kappa": kappa(first, second),
        }
        before, after = acc_before.get(juror, {}), acc_after.get(juror, {})
        p = parts(before, after, pairs, prompt_of) if before and after else None
        if p is not None and p.shift_n.sum() and len(p.clusters) > 1:
            row |= figure_fields(p, alpha, beyond)
            row |= {"n_before": len(before), "n_after": len(after), "n_clusters": len(p.clusters)}
        else:  # no gold labels: the labels' agreement alone
            row |= dict.fromkeys(f + end for f in FIGURES for end in ("", "_low", "_high")) | {
                "shift_significant": False
            }
        rows.append(row)
    if not rows:
        raise JurybenchError(f"runs '{before_run}' and '{after_run}': no juror labelled an anchor in both.")
    if all(r["shift"] is None for r in rows):
        notes = [*notes, "no gold labels on the anchors: the runs' labels are compared, not their accuracy"]
    return {
        "kind": "classification",
        "from": before_run,
        "to": after_run,
        "alpha": alpha,
        "n_anchors": len(pairs),
        "criteria": ["accuracy"],
        "rows": rows,
        "readings": [
            f"{r['rater']}: the same label on {float(r['exact']):.0%} of {r['n_anchors']} anchors "  # type: ignore[arg-type]
            f"(kappa {float(r['kappa']):.2f})"  # type: ignore[arg-type]
            + (
                f"; its accuracy moved {float(r['shift']):+.2f} [{float(r['shift_low']):.2f}, {float(r['shift_high']):.2f}]"  # type: ignore[arg-type]
                if r["shift"] is not None
                else ""
            )
            for r in rows
        ],
        "notes": notes,
    }


def draw_anchors(con: Connection, run_id: str, *, n: int, seed: int, name: str | None) -> dict[str, object]:
    """Fix ``n`` of the run's subjects, drawn at random (seeded), as the anchor set ``name``
    (default RUN-anchors): later runs judge them again (``score --anchors NAME``)."""
    from jurybench.stats.sql import check_run

    check_run(con, run_id)
    name = name or f"{run_id}-anchors"
    if con.execute("SELECT count(*) FROM anchor_sets WHERE name = ?", [name]).fetchall()[0][0]:
        raise JurybenchError(f"an anchor set '{name}' exists already.", hint="Choose another --name.")
    subjects = [
        str(r[0])
        for r in con.execute(
            "SELECT subject_id FROM run_subjects WHERE run_id = ? ORDER BY subject_id", [run_id]
        ).fetchall()
    ]
    if not 1 <= n <= len(subjects):
        raise JurybenchError(
            f"--n {n}: run '{run_id}' has {len(subjects)} subjects; draw between 1 and {len(subjects)}."
        )
    drawn = sorted(np.random.default_rng(seed).choice(subjects, size=n, replace=False).tolist())
    con.executemany(
        "INSERT INTO anchor_sets (name, run_id, subject_id, seed, n_population) VALUES (?, ?, ?, ?, ?)",
        [[name, run_id, s, seed, len(subjects)] for s in drawn],
    )
    return {"name": name, "run": run_id, "n_drawn": n, "n_population": len(subjects), "seed": seed, "subjects": drawn}


def anchor_ids(con: Connection, name: str) -> list[str]:
    """The subjects of the anchor set ``name``, or one line naming the sets there are."""
    ids = [
        str(r[0])
        for r in con.execute("SELECT subject_id FROM anchor_sets WHERE name = ? ORDER BY 1", [name]).fetchall()
    ]
    if not ids:
        known = [str(r[0]) for r in con.execute("SELECT DISTINCT name FROM anchor_sets ORDER BY 1 LIMIT 8").fetchall()]
        raise JurybenchError(
            f"no anchor set '{name}'.",
            hint=f"Anchor sets: {', '.join(known)}."
            if known
            else "Fix one with: jurybench anchors add --run RUN --n N.",
        )
    return ids
