"""leaderboard: Bradley-Terry ratings of the run's models, win rates and ranks with intervals."""

from __future__ import annotations

from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

COLUMNS = [
    "board",
    "rank",
    "model",
    "rating",
    "ci_low",
    "ci_high",
    "win_rate_vs_baseline",
    "win_rate_low",
    "win_rate_high",
    "rank_low",
    "rank_high",
    "battles",
    "wins",
    "losses",
    "ties",
]
STYLED = [
    "rating_styled",
    "styled_low",
    "styled_high",
    "win_rate_styled",
    "win_rate_styled_low",
    "win_rate_styled_high",
]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = list(COLUMNS)
    styled = any("style_coefficients" in b for b in result["boards"].values())
    if styled:  # style control: the adjusted ratings and win rates beside the raw ones
        cols[6:6] = STYLED
    rows: list[list[object]] = []
    for board, b in result["boards"].items():
        rows += [[board, *(m.get(c) for c in cols[1:])] for m in b["models"]]
    if summary and styled:
        for board, b in result["boards"].items():
            coefs = b.get("style_coefficients") or {}
            left_out = f" (left out: {', '.join(b['style_left_out'])})" if b.get("style_left_out") else ""
            rows.append(
                [
                    board,
                    None,
                    "style: " + ", ".join(f"{k} {v['coefficient']:+.3f}" for k, v in coefs.items()) + left_out,
                    *([None] * (len(cols) - 3)),
                ]
            )
    return cols, rows


@statistic("leaderboard", table=table, plots=("leaderboard",))
def leaderboard(
    con: Connection,
    run: params.Run,
    *,
    category: Annotated[
        str | None, param("The category to rank by (a preference run has one).", http={"max_length": 256})
    ] = None,
    anchor: Annotated[
        str | None, param("The model rated 1000 (default: the first by name).", http={"max_length": 256})
    ] = None,
    baseline: Annotated[
        str | None, param("Win rates are against this model (default: the anchor).", http={"max_length": 256})
    ] = None,
    level: params.Level = "jury",
    boot: params.Boot = 1000,
    seed: params.Seed = 0,
    resample: Annotated[
        str,
        param(
            "Bootstrap unit: prompts, pairs, battles, or clusters:<expression over p, a, b>.",
            http={"min_length": 1, "max_length": 500},
        ),
    ] = "prompts",
    strong: Annotated[
        str | None, param("T:W - a verdict with |score| >= T counts as W battles (e.g. 2:3).", http={"max_length": 50})
    ] = None,
    control: Annotated[
        str | None, param("Style control: length, markdown or length,markdown.", http={"max_length": 50})
    ] = None,
    weighted: Annotated[
        bool, param("A battle's outcome is the probability its first model won, not the score's sign.", flag=True)
    ] = False,
) -> dict[str, object]:
    """Bradley-Terry ratings of the run's models (Elo scale, ``anchor`` at 1000), each model's
    predicted win rate against ``baseline``, and ranks, with intervals from a bootstrap that
    resamples ``resample`` units (prompts, pairs, battles, or clusters:<expression over p, a,
    b>); both presentation orders count as battles, ties as half a win. ``strong`` ('T:W'): a
    verdict with |score| >= T counts as W battles. ``control`` ('length', 'markdown' or both,
    comma-separated): style-adjusted ratings beside the raw ones, and the style coefficients.
    ``weighted``: each battle's outcome is the probability that its first-shown model won (from a
    probabilistic or mean score), not the sign of the score."""
    # Bradley–Terry ratings of the run's models, for the jury or each juror (``level``); the
    # bootstrap draws ``resample`` units (prompts by default) with all their battles. ``strong``
    # ('T:W'): a battle won with |score| >= T counts as W battles (Arena-Hard counts a 'much
    # better' verdict three times). ``control`` ('length,markdown'): style control, ratings
    # adjusted for the normalised differences in length and markdown between the two responses,
    # reported beside the raw ones with the covariates' coefficients. ``weighted``: a battle's outcome
    # is the probability that the first-shown model won, (1 + s / k) / 2 for a score s on -k..k (a
    # preference's k is 1), as AlpacaEval's and Arena-Hard's weighted modes do; otherwise its sign
    # decides (a tie is half).
    import json
    from collections import defaultdict

    from jurybench.errors import JurybenchError
    from jurybench.stats._leaderboard import NotIdentifiable, leaderboard
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import check_run, pairwise_category, query, resample_unit

    threshold, weight = _strong(strong)
    features = style_features(control)
    if level not in ("jury", "juror"):
        raise JurybenchError(f"--level {level!r} is not valid.", hint="Valid: jury, juror.")
    check_run(con, run)
    unit = resample_unit(resample, UNITS, UNIT_HINT)  # None: every battle is its own cluster
    chosen = pairwise_category(con, run, category)
    scale = 1.0
    if weighted:
        body = con.execute(
            "SELECT ru.body FROM runs r JOIN rubrics ru USING (rubric_hash) WHERE r.run_id = ?", [run]
        ).fetchall()
        scale = float(json.loads(body[0][0]).get("k") or 1) if body else 1.0
    texts = "a.response AS text_a, b.response AS text_b" if features else "NULL AS text_a, NULL AS text_b"
    sql = (JURY_BATTLES if level == "jury" else JUROR_BATTLES).format(cluster=unit or "NULL", texts=texts)
    rows = query(con, sql, {"run": run, "category": chosen}, "reading battles")
    if unit is None:  # battles: each its own cluster
        rows = [(*r[:6], f"battle-{i}", *r[7:]) for i, r in enumerate(rows)]
    by_board: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in rows:
        by_board[str(row[0])].append(row)
    boards = {}
    for board, battles in sorted(by_board.items()):
        first, second, outcome, clusters, style = [], [], [], [], []
        for _, _, order, score, model_a, model_b, cluster, text_a, text_b in battles:
            if model_a is None or model_b is None:
                raise JurybenchError(
                    f"run '{run}': pair items need a model to rank.", hint="Import items with a 'model' column."
                )
            if model_a == model_b:
                continue  # a model against itself says nothing about ratings
            shown = (model_a, model_b) if order == "AB" else (model_b, model_a)
            times = weight if threshold is not None and abs(score) >= threshold else 1
            first += [shown[0]] * times
            second += [shown[1]] * times
            if weighted:
                outcome += [min(1.0, max(0.0, (1 + float(score) / scale) / 2))] * times
            else:
                outcome += [1.0 if score > 0 else 0.0 if score < 0 else 0.5] * times
            clusters += [str(cluster)] * times
            if features:
                shown_texts = (text_a, text_b) if order == "AB" else (text_b, text_a)
                z = [_normalised(_style_of(shown_texts[0], f), _style_of(shown_texts[1], f)) for f in features]
                style += [z] * times
        names = sorted({*first, *second})
        if len(names) < 2:
            raise JurybenchError(f"run '{run}' compares fewer than two models: nothing to rank.")
        for option, value in (("--anchor", anchor), ("--baseline", baseline)):
            if value is not None and value not in names:
                raise JurybenchError(
                    f"{option} {value!r} is not a model of the run.", hint=f"Models: {', '.join(names)}."
                )
        index = {name: k for k, name in enumerate(names)}
        anchor_i = index[anchor] if anchor else 0
        baseline_i = index[baseline] if baseline else anchor_i
        z, used = _usable_style(style, features, [index[m] for m in first], [index[m] for m in second], len(names))
        try:
            boards[board] = leaderboard(
                [index[m] for m in first],
                [index[m] for m in second],
                outcome,
                clusters,
                names,
                anchor=anchor_i,
                baseline=baseline_i,
                n_boot=boot,
                seed=seed,
                style=z,
                style_names=used,
            )
            if features and len(used) < len(features):
                boards[board]["style_left_out"] = [f for f in features if f not in used]
        except NotIdentifiable as exc:
            raise JurybenchError(
                f"run '{run}' ({board}): the ratings cannot be estimated: {exc}.",
                hint="Bradley-Terry needs every model to win and lose some battles, "
                "and the models to be connected by battles.",
            ) from None
    out: dict[str, object] = {
        "level": level,
        "category": chosen,
        "resample": resample,
        "boards": boards,
        "weighted": weighted,
    }
    if features:
        out["control"] = features
    if threshold is not None:
        out["strong"] = {"threshold": threshold, "weight": weight}
    if level == "jury":
        out["jury"] = jury_coverage(con, run, "jury_pairwise")
    return out


_SIDES = """JOIN pairs p USING (pair_id) JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b"""


JURY_BATTLES = f"""
SELECT 'jury' AS board, o.pair_id, o.presented_order, o.jury_score AS score, a.model, b.model,
       CAST(({{cluster}}) AS VARCHAR) AS cluster, {{texts}}
FROM jury_pairwise_orders o {_SIDES}
WHERE o.run_id = $run AND o.category = $category AND o.jury_score IS NOT NULL
ORDER BY ALL"""


JUROR_BATTLES = f"""
SELECT ju.name AS board, j.pair_id, j.presented_order, avg(j.score) AS score, a.model, b.model,
       CAST(({{cluster}}) AS VARCHAR) AS cluster, {{texts}}
FROM pairwise_judgments j JOIN (SELECT DISTINCT call_key FROM run_calls WHERE run_id = $run) rc USING (call_key)
JOIN jurors ju USING (juror_key) {_SIDES}
WHERE j.category = $category AND j.status = 'valid'
GROUP BY ALL
ORDER BY ALL"""


# The bootstrap's unit: named units, or clusters:<expression over p (the pair), a and b (its items)>.
UNITS = {"prompts": "coalesce(a.prompt, p.pair_id)", "pairs": "p.pair_id", "battles": None}


UNIT_HINT = (
    "Valid: prompts (the default), pairs, battles, or clusters:<expression over p, a and b>, e.g. clusters:a.dataset."
)


STYLES = {"length": ("length",), "markdown": ("headers", "lists", "bold")}


_MARKDOWN = {
    "headers": r"(?m)^#{1,6}\s",
    "lists": r"(?m)^\s*(?:[-*+]|\d+[.)])\s",
    "bold": r"\*\*[^*\n]+\*\*|__[^_\n]+__",
}


def style_features(control: str | None) -> list[str]:
    """The covariates of ``--control length,markdown`` (markdown: headers, list items, bold)."""
    from jurybench.errors import JurybenchError

    if not control:
        return []
    names: list[str] = []
    for part in (p.strip() for p in control.split(",") if p.strip()):
        if part not in STYLES:
            raise JurybenchError(
                f"--control {part!r} is not a style.", hint="Valid: length, markdown (comma-separated)."
            )
        names += [n for n in STYLES[part] if n not in names]
    return names


def _style_of(text: str | None, feature: str) -> float:
    import re

    text = text or ""
    return float(len(text)) if feature == "length" else float(len(re.findall(_MARKDOWN[feature], text)))


def _normalised(first: float, second: float) -> float:
    """(first - second) / (first + second), 0 when both are 0 (Chatbot Arena's style features)."""
    return (first - second) / (first + second) if first + second else 0.0


def _strong(value: str | None) -> tuple[float | None, int]:
    """'T:W' -> (T, W): the |score| at which a verdict is strong, and how many battles it counts."""
    from jurybench.errors import JurybenchError

    if not value:
        return None, 1
    hint = "Write T:W, e.g. --strong 2:3 (a verdict with |score| >= 2 counts as 3 battles)."
    t, sep, w = value.partition(":")
    try:
        threshold, weight = float(t), int(w)
    except ValueError:
        raise JurybenchError(f"--strong {value!r} is not valid.", hint=hint) from None
    if not sep or threshold <= 0 or not 1 <= weight <= 10:
        raise JurybenchError(f"--strong {value!r} is not valid: T must be > 0 and W an integer 1-10.", hint=hint)
    return threshold, weight


def _usable_style(
    style: list[list[float]], features: list[str], first: list[int], second: list[int], n_models: int
) -> tuple[Any, list[str]]:
    """The style columns the fit can use, standardised to unit SD: a feature that never varies
    (no markdown anywhere) or that the models alone already explain (only one model ever uses
    headers) would make the fit singular, so it is left out and named in the result."""
    import numpy as np

    if not features:
        return None, []
    z = np.asarray(style, dtype=float).reshape(len(style), len(features))
    x = np.zeros((len(first), max(n_models - 1, 0)))
    for row, (a, b) in enumerate(zip(first, second, strict=True)):
        if a:
            x[row, a - 1] += 1.0
        if b:
            x[row, b - 1] -= 1.0
    keep: list[int] = []
    for k in range(len(features)):
        sd = float(z[:, k].std())
        if sd == 0:
            continue
        trial = np.hstack([x, z[:, [*keep, k]]])
        if np.linalg.matrix_rank(trial) == trial.shape[1]:
            keep.append(k)
    if not keep:
        return None, []
    return z[:, keep] / z[:, keep].std(axis=0), [features[k] for k in keep]
