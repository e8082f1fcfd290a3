"""winrate: win rates against a reference model, as AlpacaEval defines them."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

from jurybench.declare import NAME_HTTP, param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

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
    if result.get("length_controlled") == "glm":
        cols += ["lc_win_rate", "length_slope"]
    elif result.get("length_controlled") == "alpaca-eval":
        cols += ["length_controlled_winrate", "lc_standard_error", "lc_c"]
    rows: list[list[object]] = []
    for board, b in result["boards"].items():
        rows += [[board, *(m.get(c) for c in cols[1:])] for m in b["models"]]
    return cols, rows


@statistic("winrate", table=table)
def winrate(
    con: Connection,
    run: params.Run,
    *,
    reference: Annotated[str, param("The reference model (the items' model column).", http=NAME_HTTP)],
    category: Annotated[str | None, param("The category (a preference run has one).", http={"max_length": 256})] = None,
    level: params.Level = "jury",
    length_controlled: Annotated[
        str | None,
        param(
            "Also the win rate at the reference's length: glm (a logistic model of length alone) or "
            "alpaca-eval (AlpacaEval's length_controlled_v1, with --difficulty; docs/statistics.md).",
            choices=("glm", "alpaca-eval"),
        ),
    ] = None,
    difficulty: Annotated[
        Path | None,
        param(
            "AlpacaEval's per-instruction difficulty table (instruction_difficulty.csv, or df_gamed.csv, "
            "which also holds the gamed baselines' rows) for --length-controlled alpaca-eval.",
            faces="cli python",
        ),
    ] = None,
    solver_tol: Annotated[
        float | None,
        param(
            "For --length-controlled alpaca-eval: stop the fit as AlpacaEval does, liblinear at this "
            "tolerance (1e-4 gives the figures AlpacaEval publishes); without it, the exact optimum.",
            number="share",
            http={"gt": 0, "lt": 1},
        ),
    ] = None,
) -> dict[str, object]:
    """Win rates against a reference model as AlpacaEval defines them: wins, losses, draws, the
    mean preference (probabilistic where the jury's scores are) with its standard error, and the
    discrete win rate (ties as half); ``length_controlled``: ``glm``, the win rate a logistic
    model of length alone predicts at equal length, or ``alpaca-eval``, AlpacaEval's
    length-controlled win rate (needs ``difficulty``), at its exact optimum or, with
    ``solver_tol=1e-4``, as AlpacaEval's solver stops and publishes it."""
    # Per board (the jury, or each juror) and model: AlpacaEval's win-rate figures against
    # ``reference`` over the run's pairs that set the model against it.
    from collections import defaultdict

    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats._winrate import alpaca_length_controlled, alpaca_winrate
    from jurybench.stats._winrate import length_controlled as length_controlled_fit
    from jurybench.stats.sql import check_run, pairwise_category, query

    if level not in ("jury", "juror"):
        raise JurybenchError(f"--level {level!r} is not valid.", hint="Valid: jury, juror.")
    method = length_controlled or None
    if method not in (None, "glm", "alpaca-eval"):
        raise JurybenchError(f"--length-controlled {method!r} is not a method.", hint="Valid: glm, alpaca-eval.")
    if method == "alpaca-eval" and difficulty is None:
        raise JurybenchError(
            "--length-controlled alpaca-eval needs --difficulty FILE: AlpacaEval's instruction difficulty table.",
            hint="instruction_difficulty.csv or df_gamed.csv from AlpacaEval's dataset on the Hugging Face hub.",
        )
    if difficulty is not None and method != "alpaca-eval":
        raise JurybenchError("--difficulty is for --length-controlled alpaca-eval.")
    if solver_tol is not None and method != "alpaca-eval":
        raise JurybenchError("--solver-tol is for --length-controlled alpaca-eval.")
    table = read_difficulty(Path(difficulty)) if difficulty is not None else None
    check_run(con, run)
    chosen = pairwise_category(con, run, category)
    sql = (
        _ROWS.format(board="'jury'", value="s.jury_score", view="jury_pairwise")
        if level == "jury"
        else _ROWS.format(board="s.juror", value="s.juror_epsilon", view="juror_pairwise")
    )
    rows = query(con, sql, {"run": run, "category": chosen}, "reading pairs")
    models = {m for r in rows for m in (r[3], r[4])}
    if reference not in models:
        raise JurybenchError(
            f"--reference {reference!r} is not a model of run '{run}'.",
            hint=f"Models: {', '.join(sorted(str(m) for m in models if m is not None)) or 'none'} "
            "(the items' model column).",
        )
    # per board and model: (p or NaN, model's length minus the reference's, instruction key)
    by_board: dict[str, dict[str, list[tuple[float, float, object]]]] = defaultdict(lambda: defaultdict(list))
    without, missing = 0, 0
    for board, pair, score, model_a, model_b, len_a, len_b, meta_a, meta_b, prompt in rows:
        if (model_a == reference) == (model_b == reference):  # neither side, or both, is the reference
            without += 1
            continue
        missing += score is None
        s = math.nan if score is None else float(score)
        if model_a == reference:
            value = ((1 - s) / 2, float((len_b or 0) - (len_a or 0)), _key(meta_b, prompt, pair))
            by_board[str(board)][str(model_b)].append(value)
        else:
            value = ((1 + s) / 2, float((len_a or 0) - (len_b or 0)), _key(meta_a, prompt, pair))
            by_board[str(board)][str(model_a)].append(value)
    boards = {}
    for board, per_model in sorted(by_board.items()):
        entries = []
        for model, values in per_model.items():
            values.sort(key=_instruction_order)  # folds and sums by instruction, not by storage order
            every = np.array([v[0] for v in values])
            p = every[~np.isnan(every)]
            if not len(p):
                continue
            entry = {"model": model, **alpaca_winrate(p)}
            if method == "glm":
                entry.update(length_controlled_fit(p, np.array([v[1] for v in values if not math.isnan(v[0])])))
            elif method == "alpaca-eval" and table is not None:
                # AlpacaEval's delta is the reference's length minus the model's, over every instruction
                delta = -np.array([v[1] for v in values])
                entry.update(
                    alpaca_length_controlled(
                        every, delta, table.lookup(values, model), table.gamed, solver_tol=solver_tol
                    )
                )
            entries.append(entry)
        entries.sort(key=lambda e: (-(e["win_rate"] or 0), e["model"]))
        boards[board] = {"models": entries}
    return {
        "run": run,
        "reference": reference,
        "category": chosen,
        "level": level,
        "boards": boards,
        "n_pairs_without_reference": without,
        "n_pairs_without_value": missing,
        "length_controlled": method,
        **({"difficulty_file": str(difficulty), "regularized_to_gamed": table.gamed is not None} if table else {}),
    }


def _instruction_order(value: tuple[float, float, Any]) -> tuple[object, ...]:
    """AlpacaEval's instruction index first (its cross-validation folds follow it), then the
    instruction's text and the pair's id: an order that does not depend on how rows were stored."""
    index, prompt, pair = value[2]
    return (index is None, int(str(index)) if index is not None else 0, str(prompt), str(pair))


def _key(meta: object, prompt: object, pair: object) -> tuple[object, object, object]:
    """What finds an instruction's difficulty: AlpacaEval's index (the alpaca-eval reader keeps
    each record's position as ``alpaca_eval_index``), else the instruction's text."""
    import json

    index = None
    if isinstance(meta, str):
        try:
            index = json.loads(meta).get("alpaca_eval_index")
        except (ValueError, AttributeError):
            index = None
    return index, prompt, pair


class Difficulty:
    """AlpacaEval's instruction difficulty, by instruction index (and by instruction text where
    the table has an ``instruction`` column), and the gamed baselines' rows if the table holds them."""

    def __init__(self, path: Path, by_index: dict[int, float], by_text: dict[str, float], gamed: Any) -> None:
        self.path, self.by_index, self.by_text, self.gamed = path, by_index, by_text, gamed

    def lookup(self, values: list[tuple[float, float, Any]], model: str) -> Any:
        import numpy as np

        from jurybench.errors import JurybenchError

        out = []
        for _p, _d, (index, prompt, pair) in values:
            if index is not None and int(index) in self.by_index:
                out.append(self.by_index[int(index)])
            elif prompt is not None and str(prompt) in self.by_text:
                out.append(self.by_text[str(prompt)])
            else:
                raise JurybenchError(
                    f"{self.path}: no difficulty for pair {pair!r} of model {model!r} "
                    f"(instruction index {index if index is not None else 'unknown'}).",
                    hint="Import AlpacaEval's annotations with --format alpaca-eval (it keeps each instruction's "
                    "index), or give a table with an instruction column.",
                )
        return np.array(out, dtype=float)


def read_difficulty(path: Path) -> Difficulty:
    """instruction_difficulty.csv (index, instruction_difficulty) or df_gamed.csv (also
    preference, std_delta_len, not_gamed_baseline: the gamed baselines' annotations)."""
    import csv

    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats._winrate import GamedRows

    if not path.exists():
        raise JurybenchError(f"--difficulty {path}: no such file.")
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        columns = list(reader.fieldnames or [])
        rows = list(reader)
    if "instruction_difficulty" not in columns:
        raise JurybenchError(
            f"{path}: no instruction_difficulty column.",
            hint="Give AlpacaEval's instruction_difficulty.csv or df_gamed.csv.",
        )
    key = "index" if "index" in columns else columns[0] if columns and columns[0] in ("", "Unnamed: 0") else None
    by_index: dict[int, float] = {}
    by_text: dict[str, float] = {}
    gamed = []
    for number, row in enumerate(rows, start=2):

        def number_of(name: str, row: dict[str, str] = row, number: int = number) -> float:
            try:
                return float(row[name])
            except (TypeError, ValueError):
                raise JurybenchError(
                    f"{path} row {number}, field '{name}': {row.get(name)!r} is not a number."
                ) from None

        value = number_of("instruction_difficulty")
        if key is not None:
            by_index.setdefault(int(number_of(key)), value)
        if row.get("instruction"):
            by_text.setdefault(str(row["instruction"]), value)
        if {"preference", "std_delta_len", "not_gamed_baseline"} <= set(columns) and str(
            row["not_gamed_baseline"]
        ).strip().lower() in ("false", "0"):
            preference = row["preference"]
            gamed.append(
                (
                    float(preference) if preference not in ("", None) else float("nan"),
                    number_of("std_delta_len"),
                    value,
                )
            )
    if not by_index and not by_text:
        raise JurybenchError(f"{path}: no index or instruction column to find an instruction's difficulty by.")
    rows_gamed = None
    if gamed:
        arr = np.array(gamed, dtype=float)
        rows_gamed = GamedRows(arr[:, 0], arr[:, 1], arr[:, 2])
    return Difficulty(path, by_index, by_text, rows_gamed)


_ROWS = """
SELECT {board} AS board, s.pair_id, {value} AS score, a.model AS model_a, b.model AS model_b,
       length(a.response) AS len_a, length(b.response) AS len_b, a.metadata, b.metadata, coalesce(a.prompt, b.prompt)
FROM {view} s JOIN pairs p USING (pair_id) JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b
WHERE s.run_id = $run AND s.category = $category"""
