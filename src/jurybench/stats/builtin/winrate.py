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
) -> dict[str, object]:
    """Win rates against a reference model as AlpacaEval defines them: wins, losses, draws, the
    mean preference (probabilistic where the jury's scores are) with its standard error, and the
    discrete win rate (ties as half); ``length_controlled``: the win rate a logistic model of
    length predicts at equal length (docs/statistics.md says where it differs from AlpacaEval's)."""

    return stat_winrate(
        con, run, reference=reference, category=category, level=level, length_controlled_too=length_controlled
    )


def stat_winrate(
    con: Connection,
    run_id: str,
    *,
    reference: str,
    category: str | None = None,
    level: str = "jury",
    length_controlled_too: bool = False,
) -> dict[str, Any]:
    """Per board (the jury, or each juror) and model: AlpacaEval's win-rate figures against
    ``reference`` over the run's pairs that set the model against it."""
    from collections import defaultdict

    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats._store import _check_run, _query, pairwise_category
    from jurybench.stats._winrate import alpaca_winrate, length_controlled

    if level not in ("jury", "juror"):
        raise JurybenchError(f"--level {level!r} is not valid.", hint="Valid: jury, juror.")
    _check_run(con, run_id)
    chosen = pairwise_category(con, run_id, category)
    sql = (
        _ROWS.format(board="'jury'", value="s.jury_score", view="jury_pairwise")
        if level == "jury"
        else _ROWS.format(board="s.juror", value="s.juror_epsilon", view="juror_pairwise")
    )
    rows = _query(con, sql, {"run": run_id, "category": chosen}, "reading pairs")
    models = {m for r in rows for m in (r[3], r[4])}
    if reference not in models:
        raise JurybenchError(
            f"--reference {reference!r} is not a model of run '{run_id}'.",
            hint=f"Models: {', '.join(sorted(str(m) for m in models if m is not None)) or 'none'} "
            "(the items' model column).",
        )
    by_board: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    without, missing = 0, 0
    for board, _pair, score, model_a, model_b, len_a, len_b in rows:
        if (model_a == reference) == (model_b == reference):  # neither side, or both, is the reference
            without += 1
            continue
        if score is None:
            missing += 1
            continue
        s = float(score)
        if model_a == reference:
            by_board[str(board)][str(model_b)].append(((1 - s) / 2, float((len_b or 0) - (len_a or 0))))
        else:
            by_board[str(board)][str(model_a)].append(((1 + s) / 2, float((len_a or 0) - (len_b or 0))))
    boards = {}
    for board, per_model in sorted(by_board.items()):
        entries = []
        for model, values in per_model.items():
            p = np.array([v[0] for v in values])
            entry = {"model": model, **alpaca_winrate(p)}
            if length_controlled_too:
                entry.update(length_controlled(p, np.array([v[1] for v in values])))
            entries.append(entry)
        entries.sort(key=lambda e: (-(e["win_rate"] or 0), e["model"]))
        boards[board] = {"models": entries}
    return {
        "run": run_id,
        "reference": reference,
        "category": chosen,
        "level": level,
        "boards": boards,
        "n_pairs_without_reference": without,
        "n_pairs_without_value": missing,
        "length_controlled": length_controlled_too,
    }


_ROWS = """
SELECT {board} AS board, s.pair_id, {value} AS score, a.model AS model_a, b.model AS model_b,
       length(a.response) AS len_a, length(b.response) AS len_b
FROM {view} s JOIN pairs p USING (pair_id) JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b
WHERE s.run_id = $run AND s.category = $category"""
