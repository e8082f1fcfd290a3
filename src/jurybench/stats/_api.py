"""Statistics over a store, as the CLI, the service and Python users call them.

Each function reads the run through ``store`` (a path, an open :class:`jurybench.Store` or a
DuckDB connection), records the result in ``stats_results`` with its parameters and seed, and
returns it as a tidy pandas DataFrame. The DataFrame's ``attrs`` carry the rest:
``result_id`` (the recorded row), ``statistic``, ``run``, ``params`` and ``result`` (the whole
result as a dict, including what a table leaves out, such as the jury's coverage).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.stats import _store, _store_effects, _store_leaderboard, _store_power
from jurybench.stats._effects import AnchorThresholds
from jurybench.stats._tables import flatten
from jurybench.store import connect, reading, writing

ZERO_METHODS = ("wilcox", "pratt", "zsplit")


def two_values(value: str | tuple[str, str] | list[str], option: str) -> tuple[str, str]:
    """Two values from 'a,b' (or a pair), or one line naming ``option``."""
    parts = [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else [str(v) for v in value]
    if len(parts) != 2:
        raise JurybenchError(f"{option} needs two comma-separated values, got {value!r}.")
    return parts[0], parts[1]


def _recorded(
    store: Any,
    name: str,
    run: str | None,
    params: dict[str, Any],
    seed: int | None,
    compute: Callable[[Any], dict[str, Any]],
    *,
    capped: bool = False,
) -> Any:
    """Compute on a reading connection (closed before writing), record, and frame the result.

    ``capped`` (a statistic that reads a big run a slice at a time): a store given by path is
    read with DuckDB held to the engine's cap (``JURYBENCH_DUCKDB_MEMORY``) on one thread (two
    threads' buffers did not fit 64MB at 3 M rows), so memory does not grow with the run;
    should DuckDB still run out, the statistic is computed again under DuckDB's own limit:
    more memory, never a failed statistic."""
    import duckdb
    import pandas as pd

    from jurybench.config import duckdb_memory

    limit = duckdb_memory() if capped and (store is None or isinstance(store, str | Path)) else None

    def described(con: Any) -> dict[str, Any]:
        """The result, with what its figures rest on: the jury's discrete or expected scores, and
        the run's design (both orders or one), read on the same connection."""
        result = compute(con)
        if run is not None and isinstance(result, dict):
            found = con.execute(
                "SELECT ju.scores, r.orders FROM runs r LEFT JOIN juries ju ON ju.jury_id = r.jury_id "
                "WHERE r.run_id = ?", [run]
            ).fetchall()  # fmt: skip
            if found:
                result.setdefault("scores", found[0][0] or "discrete")
                result.setdefault("orders", found[0][1] or "both")
        return result

    try:
        with reading(store, memory_limit=limit, threads=1 if limit else None) as con:
            result = described(con)
    except duckdb.OutOfMemoryException:
        if limit is None:
            raise
        with reading(store) as con:
            result = described(con)
    with writing(store) as con:
        result_id = _store.record_result(con, name, run, params, seed, result)
    # Tidy: no summary line of text (gini, gaps and premium are in attrs["result"]).
    columns, rows = flatten(name, result, digits=None, summary=False)
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs.update(
        {"result_id": result_id, "statistic": name, "run": run, "params": params, "result": _store.jsonable(result)}
    )
    return frame


def directional(store: Any, run: str, *, where: str | None = None, by: str | None = None,
                zero_method: str = "wilcox", level: str = "jury") -> Any:  # fmt: skip
    """Per category: D_j (mean symmetrized score) and the Wilcoxon signed-rank test, Holm and BH corrected."""
    if zero_method not in ZERO_METHODS:
        raise JurybenchError(f"zero_method {zero_method!r} is not valid.", hint=f"Valid: {', '.join(ZERO_METHODS)}.")
    params = {"run": run, "where": where, "by": by, "zero_method": zero_method, "level": level}
    return _recorded(store, "directional", run, params, None,
                     lambda con: _store.stat_directional(con, run, where=where, by=by, zero_method=zero_method,
                                                         level=level))  # fmt: skip


def gap(store: Any, run: str, *, where: str | None = None, by: str | None = None, boot: int = 2000, seed: int = 0,
        level: str = "jury", resample: str = "pairs") -> Any:  # fmt: skip
    """Treatment gap G = sum |D_j| per group with bootstrap CIs, and pairwise bootstrap p-values.
    ``resample``: the bootstrap unit, ``pairs`` or ``clusters:<expression>`` (e.g. ``clusters:prompt``:
    each drawn prompt brings all its pairs)."""
    params = {"run": run, "where": where, "by": by, "boot": boot, "level": level, "resample": resample}
    return _recorded(store, "gap", run, params, seed,
                     lambda con: _store.stat_gap(con, run, where=where, by=by, n_boot=boot, seed=seed, level=level,
                                                 resample=resample))  # fmt: skip


def consistency(store: Any, run: str, *, where: str | None = None, by: str | None = None) -> Any:
    """Positional consistency per juror (or ``by``) and the share of pairs with no difference in any category."""
    return _recorded(store, "consistency", run, {"run": run, "where": where, "by": by}, None,
                     lambda con: _store.stat_consistency(con, run, where=where, by=by))  # fmt: skip


def robustness(store: Any, run: str, *, other_run: str, where: str | None = None) -> Any:
    """Spearman correlation between the D vectors of two runs."""
    return _recorded(store, "robustness", run, {"run": run, "other_run": other_run, "where": where}, None,
                     lambda con: _store.stat_robustness(con, run, other_run=other_run, where=where))  # fmt: skip


def friedman(store: Any, run: str, *, where: str | None = None, by: str = "model", block: str = "prompt",
             level: str = "jury") -> Any:  # fmt: skip
    """Friedman test per criterion across groups (blocks = prompts), Holm-corrected post-hoc Wilcoxon matrix."""
    params = {"run": run, "where": where, "by": by, "block": block, "level": level}
    return _recorded(store, "friedman", run, params, None,
                     lambda con: _store.stat_friedman(con, run, where=where, by=by, block=block, level=level),
                     capped=True)  # fmt: skip


def ttest(store: Any, run: str, *, where: str | None = None, by: str = "model", baseline: float | None = None,
          baseline_file: Path | None = None, baselines: str | None = None, level: str = "jury") -> Any:  # fmt: skip
    """One-sample t-test of each group's mean score against a human baseline (a value, a file or stored)."""

    def compute(con: Any) -> dict[str, Any]:
        stored = _store_effects.stored_baselines(con, baselines, "mean") if baselines else None
        return _store.stat_ttest(con, run, where=where, by=by, baseline=baseline, baseline_file=baseline_file,
                                 stored=stored, level=level)  # fmt: skip

    params = {"run": run, "where": where, "by": by, "baseline": baseline, "baseline_file": baseline_file,
              "baselines": baselines, "level": level}  # fmt: skip
    return _recorded(store, "ttest", run, params, None, compute)


def _compare(test: str, store: Any, run: str, groups: Any, where: str | None, by: str, level: str) -> Any:
    pair = two_values(groups, "groups")
    params = {"run": run, "where": where, "by": by, "groups": ",".join(pair), "level": level}
    return _recorded(store, test, run, params, None,
                     lambda con: _store.stat_compare(con, run, test=test, groups=pair, where=where, by=by, level=level))  # fmt: skip


def welch(store: Any, run: str, *, groups: str | tuple[str, str], where: str | None = None, by: str = "model",
          level: str = "jury") -> Any:  # fmt: skip
    """Welch two-sample t-test between two groups (``groups="a,b"`` or a pair)."""
    return _compare("welch", store, run, groups, where, by, level)


def mannwhitney(store: Any, run: str, *, groups: str | tuple[str, str], where: str | None = None, by: str = "model",
                level: str = "jury") -> Any:  # fmt: skip
    """Mann-Whitney U test between two groups."""
    return _compare("mannwhitney", store, run, groups, where, by, level)


def kendall(store: Any, run: str, *, baseline_file: Path | None = None, reference: dict[str, float] | None = None,
            where: str | None = None, by: str = "model", level: str = "jury") -> Any:  # fmt: skip
    """Kendall tau between the groups' mean scores and a reference ranking: a CSV group,value
    (``baseline_file``) or the values themselves (``reference``, group -> value)."""
    params: dict[str, Any] = {"run": run, "where": where, "by": by, "baseline_file": baseline_file, "level": level}
    if reference is not None:
        params["reference"] = reference
    path = Path(baseline_file) if baseline_file is not None else None
    return _recorded(store, "kendall", run, params, None,
                     lambda con: _store.stat_kendall(con, run, baseline_file=path, reference=reference, where=where,
                                                     by=by, level=level))  # fmt: skip


def cohens_d(store: Any, run: str, *, arm: str, arms: str | tuple[str, str], where: str | None = None,
             by: str | None = None, baseline_file: Path | None = None, factor_file: Path | None = None,
             baselines: str | None = None, factors: dict[str, str] | None = None, min_gap: float = 0.0, reorganization_gap: float = 0.2, boot: int = 2000,
             seed: int = 0, level: str = "jury", resample: str = "instances") -> Any:  # fmt: skip
    """Cohen's d (three forms) with bootstrap CIs per cell and criterion, anchored to human baselines.
    ``resample``: ``instances`` (each arm's items, the default) or ``clusters:<expression over the
    item's columns>`` (e.g. ``clusters:prompt``: a drawn prompt brings its items in both arms)."""
    pair = two_values(arms, "arms")

    def compute(con: Any) -> dict[str, Any]:
        stored = _store_effects.stored_baselines(con, baselines, "d") if baselines else None
        return _store_effects.stat_cohens_d(
            con, run, arm=arm, arms=pair, where=where, by=by, baseline_file=baseline_file, factor_file=factor_file,
            factors=factors, baselines=stored, n_boot=boot, seed=seed, thresholds=AnchorThresholds(min_gap, reorganization_gap),
            level=level, resample=resample,
        )  # fmt: skip

    params: dict[str, Any] = {"run": run, "arm": arm, "arms": ",".join(pair), "where": where, "by": by, "baseline_file": baseline_file,
              "baselines": baselines, "factor_file": factor_file, "min_gap": min_gap,
              "reorganization_gap": reorganization_gap, "boot": boot, "level": level, "resample": resample}  # fmt: skip
    if factors is not None:
        params["factors"] = factors
    return _recorded(store, "cohens-d", run, params, seed, compute)


def item_spearman(store: Any, run: str, *, arm: str, arms: str | tuple[str, str], by: str,
                  key_file: Path | None = None, keys: dict[str, float] | None = None, where: str | None = None,
                  level: str = "jury") -> Any:  # fmt: skip
    """Spearman correlation between conditions of per-item keyed differences between the arms
    (reverse-keyed items from ``key_file``, CSV criterion,key, or ``keys``, criterion -> +1/-1)."""
    pair = two_values(arms, "arms")
    params: dict[str, Any] = {"run": run, "arm": arm, "arms": ",".join(pair), "by": by, "key_file": key_file, "where": where,
              "level": level}  # fmt: skip
    if keys is not None:
        params["keys"] = keys
    return _recorded(store, "item-spearman", run, params, None,
                     lambda con: _store_effects.stat_item_spearman(con, run, arm=arm, arms=pair, by=by, where=where,
                                                           key_file=key_file, keys=keys, level=level))  # fmt: skip


def disparity(store: Any, *, sql: str | None = None, file: Path | None = None, max_invalid_rate: float | None = 0.10,
              reference: str | None = None, boot: int = 2000, seed: int = 0, resample: str = "instances") -> Any:  # fmt: skip
    """Accuracy by group x category (invalid = wrong), Gini inequity with CI, max-min gaps, reference premium.
    ``max_invalid_rate=None`` (or a negative value) keeps every group."""
    if max_invalid_rate is not None and max_invalid_rate < 0:
        max_invalid_rate = None
    if file is not None and (store is None or isinstance(store, str | Path)):
        connect(store).close()  # a statistic over a file records into the store, created if need be
    params = {"sql": sql, "file": file, "max_invalid_rate": -1.0 if max_invalid_rate is None else max_invalid_rate,
              "reference": reference, "boot": boot, "resample": resample}  # fmt: skip
    return _recorded(store, "disparity", None, params, seed,
                     lambda con: _store_effects.stat_disparity(con, sql=sql, file=file, max_invalid_rate=max_invalid_rate,
                                                       reference=reference, n_boot=boot, seed=seed,
                                                       resample=resample))  # fmt: skip


def leaderboard(store: Any, run: str, *, category: str | None = None, anchor: str | None = None,
                baseline: str | None = None, level: str = "jury", boot: int = 1000, seed: int = 0,
                resample: str = "prompts", strong: str | None = None, control: str | None = None,
                weighted: bool = False) -> Any:  # fmt: skip
    """Bradley–Terry ratings of the run's models (Elo scale, ``anchor`` at 1000), each model's
    predicted win rate against ``baseline``, and ranks, with intervals from a bootstrap that
    resamples ``resample`` units (prompts, pairs, battles, or clusters:<expression over p, a,
    b>); both presentation orders count as battles, ties as half a win. ``strong`` ('T:W'): a
    verdict with |score| >= T counts as W battles. ``control`` ('length', 'markdown' or both,
    comma-separated): style-adjusted ratings beside the raw ones, and the style coefficients.
    ``weighted``: each battle's outcome is the probability that its first-shown model won (from a
    probabilistic or mean score), not the sign of the score."""
    params = {"run": run, "category": category, "anchor": anchor, "baseline": baseline, "level": level, "boot": boot,
              "resample": resample, "strong": strong, "control": control, "weighted": weighted}  # fmt: skip
    return _recorded(store, "leaderboard", run, params, seed,
                     lambda con: _store_leaderboard.stat_leaderboard(con, run, category=category, anchor=anchor,
                                                                     baseline=baseline, level=level, n_boot=boot,
                                                                     seed=seed, resample=resample,
                                                                     strong=strong, control=control,
                                                                     weighted=weighted))  # fmt: skip


def winrate(store: Any, run: str, *, reference: str, category: str | None = None, level: str = "jury",
            length_controlled: bool = False) -> Any:  # fmt: skip
    """Win rates of the run's models against ``reference``, as AlpacaEval defines them: per model
    n_total, n_wins, n_wins_base, n_draws, win_rate (100 x the mean preference for the model,
    probabilistic where the jury's scores are), standard_error and discrete_win_rate (ties as
    half); ``length_controlled``: the win rate a logistic model of length predicts at equal length
    (docs/statistics.md says where it differs from AlpacaEval's)."""
    from jurybench.stats import _winrate

    params = {"run": run, "reference": reference, "category": category, "level": level,
              "length_controlled": length_controlled}  # fmt: skip
    return _recorded(store, "winrate", run, params, None,
                     lambda con: _winrate.stat_winrate(con, run, reference=reference, category=category, level=level,
                                                       length_controlled_too=length_controlled))  # fmt: skip


def power(store: Any, run: str, *, arm: str, arms: str | tuple[str, str], pair_on: str = "prompt",
          where: str | None = None, d: float | None = None, shift: float | None = None, power: float = 0.8,
          alpha: float = 0.05) -> Any:  # fmt: skip
    """Power analysis from a pilot run: per criterion, the paired difference between two arms
    (subjects paired on ``pair_on``), the pairs needed to detect ``d`` (d_z), ``shift`` (score
    units) or the pilot's own effect with ``power`` at ``alpha`` (paired t-test; Wilcoxon by its
    efficiency), the power of the pilot's n, and the pairs needed with other jury sizes."""
    pair = two_values(arms, "arms")
    params = {"run": run, "arm": arm, "arms": ",".join(pair), "pair_on": pair_on, "where": where, "d": d,
              "shift": shift, "power": power, "alpha": alpha}  # fmt: skip
    return _recorded(store, "power", run, params, None,
                     lambda con: _store_power.stat_power(con, run, arm=arm, arms=pair, pair_on=pair_on, where=where,
                                                         d=d, shift=shift, power=power, alpha=alpha))  # fmt: skip


def results(store: Any, *, name: str | None = None) -> Any:
    """Recorded statistics (id, name, run, seed, parameters, time) as a DataFrame, oldest first."""
    with reading(store) as con:
        return con.execute(
            "SELECT result_id, name, run_id, seed, params, created_at FROM stats_results "
            + ("WHERE name = ? " if name else "")
            + "ORDER BY created_at",
            [name] if name else [],
        ).df()
