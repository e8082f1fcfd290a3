"""winrate: win rates against a reference model, as AlpacaEval defines them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

COLUMNS = [
    "board",
    "model",
    "n_total",
    "n_wins",
    "n_wins_base",
    "n_draws",
    "win_rate",
    "standard_error",
    "discrete_win_rate",
]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = list(COLUMNS)
    if result.get("length_controlled"):
        cols += ["lc_win_rate", "length_slope"]
    rows: list[list[object]] = []
    for board, b in result["boards"].items():
        rows += [[board, *(m.get(c) for c in cols[1:])] for m in b["models"]]
    return cols, rows


@statistic("winrate", table=table)
def winrate(
    con: Connection,
    run: params.Run,
    *,
    reference: Annotated[
        str, param("The reference model (the items' model column).", http={"min_length": 1, "max_length": 256})
    ],
    category: Annotated[str | None, param("The category (a preference run has one).", http={"max_length": 256})] = None,
    level: params.Level = "jury",
    length_controlled: Annotated[
        bool, param("Also the win rate predicted at equal length (docs/statistics.md).", flag=True)
    ] = False,
) -> dict[str, Any]:
    """Win rates against a reference model as AlpacaEval defines them: wins, losses, draws, the
    mean preference (probabilistic where the jury's scores are) with its standard error, and the
    discrete win rate (ties as half); ``length_controlled``: the win rate a logistic model of
    length predicts at equal length (docs/statistics.md says where it differs from AlpacaEval's)."""
    from jurybench.stats._winrate import stat_winrate

    return stat_winrate(
        con, run, reference=reference, category=category, level=level, length_controlled_too=length_controlled
    )
