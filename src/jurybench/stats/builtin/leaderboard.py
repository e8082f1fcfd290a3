"""leaderboard: Bradley-Terry ratings of the run's models, win rates and ranks with intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

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
) -> dict[str, Any]:
    """Bradley-Terry ratings of the run's models (Elo scale, ``anchor`` at 1000), each model's
    predicted win rate against ``baseline``, and ranks, with intervals from a bootstrap that
    resamples ``resample`` units (prompts, pairs, battles, or clusters:<expression over p, a,
    b>); both presentation orders count as battles, ties as half a win. ``strong`` ('T:W'): a
    verdict with |score| >= T counts as W battles. ``control`` ('length', 'markdown' or both,
    comma-separated): style-adjusted ratings beside the raw ones, and the style coefficients.
    ``weighted``: each battle's outcome is the probability that its first-shown model won (from a
    probabilistic or mean score), not the sign of the score."""
    from jurybench.stats._store_leaderboard import stat_leaderboard

    return stat_leaderboard(
        con,
        run,
        category=category,
        anchor=anchor,
        baseline=baseline,
        level=level,
        n_boot=boot,
        seed=seed,
        resample=resample,
        strong=strong,
        control=control,
        weighted=weighted,
    )
