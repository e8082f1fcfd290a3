"""power: how many pairs a study needs to detect an effect between two arms, from a pilot run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

COLUMNS = [
    "criterion",
    "n_pairs",
    "mean_difference",
    "sd_difference",
    "correlation",
    "observed_d_z",
    "effect_d_z",
    "power_now",
    "pairs_needed_t",
    "pairs_needed_wilcoxon",
]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    rows: list[list[object]] = []
    for crit, r in result["criteria"].items():
        rows.append([crit, *(r.get(c) for c in COLUMNS[1:])])
        for k, proj in (r.get("by_jury_size") or {}).items() if summary else ():
            rows.append(
                [
                    f"  with {k} juror(s)",
                    None,
                    None,
                    proj["sd_difference"],
                    None,
                    None,
                    proj["effect_d_z"],
                    None,
                    proj["pairs_needed_t"],
                    None,
                ]
            )
    return list(COLUMNS), rows


@statistic("power", table=table)
def power(
    con: Connection,
    run: params.Run,
    *,
    arm: params.Arm,
    arms: params.Arms,
    pair_on: Annotated[
        str, param("SQL expression pairing the arms' subjects (default: prompt).", http=params.EXPR)
    ] = "prompt",
    where: params.Where = None,
    d: Annotated[
        float | None, param("Effect to detect, standardised: mean difference / SD of the differences (d_z).")
    ] = None,
    shift: Annotated[float | None, param("Effect to detect in score units (instead of --d).")] = None,
    power: Annotated[float, param("Power wanted.", http={"gt": 0, "lt": 1})] = 0.8,
    alpha: Annotated[float, param("Two-sided significance level.", http={"gt": 0, "lt": 1})] = 0.05,
) -> dict[str, Any]:
    """Pairs (prompts) needed to detect an effect between two arms, from a pilot run: paired
    t-test (and Wilcoxon by its efficiency), the pilot's own power, and other jury sizes."""
    from jurybench.stats._store_power import stat_power

    return stat_power(
        con,
        run,
        arm=arm,
        arms=two_values(arms, "arms"),
        pair_on=pair_on,
        where=where,
        d=d,
        shift=shift,
        power=power,
        alpha=alpha,
    )
