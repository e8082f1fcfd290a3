"""power: how many pairs a study needs to detect an effect between two arms, from a pilot run."""

from __future__ import annotations

from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values
from jurybench.stats.params import Connection

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
        float | None,
        param("Effect to detect, standardised: mean difference / SD of the differences (d_z).", number="value"),
    ] = None,
    shift: Annotated[float | None, param("Effect to detect in score units (instead of --d).", number="value")] = None,
    power: Annotated[float, param("Power wanted.", number="share", http={"gt": 0, "lt": 1})] = 0.8,
    alpha: Annotated[float, param("Two-sided significance level.", number="alpha")] = 0.05,
) -> dict[str, object]:
    """Pairs (prompts) needed to detect an effect between two arms, from a pilot run: paired
    t-test (and Wilcoxon by its efficiency), the pilot's own power, and other jury sizes."""
    # Per criterion: the pilot's paired differences between two arms (subjects paired on
    # ``pair_on``, several subjects of one arm and pair averaged), juror noise, and the pairs
    # needed to detect the effect (``d`` as d_z, ``shift`` in score units, else the pilot's own)
    # with ``power`` at ``alpha``, for the paired t-test and the Wilcoxon test.
    arm_values = two_values(arms, "arms")
    from jurybench.errors import JurybenchError
    from jurybench.stats._power import power_summary
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import item_frame, query

    if not 0 < power < 1 or not 0 < alpha < 1:
        raise JurybenchError("--power and --alpha must lie strictly between 0 and 1.")
    if d is not None and shift is not None:
        raise JurybenchError(
            "give --d or --shift, not both.", hint="--d is standardised (d_z); --shift is in score units."
        )
    frame = item_frame(con, run, where=where, by=pair_on, extra=arm)
    frame["extra"] = frame["extra"].astype(str)
    present = set(frame["extra"].unique())
    missing = [a for a in arm_values if a not in present]
    if missing:
        raise JurybenchError(f"no subjects in arm {missing[0]!r}.", hint=f"Arms present: {', '.join(sorted(present))}.")
    noise = {
        str(c): (float(v) if v is not None else None, int(k))
        for c, v, k in query(
            con,
            "SELECT criterion, avg(v), max(k) FROM (SELECT item_id, criterion, var_samp(juror_score) AS v, "
            "count(*) AS k FROM juror_pointwise WHERE run_id = $run GROUP BY ALL) GROUP BY criterion",
            {"run": run},
            "reading juror noise",
        )
    }
    if frame.empty or frame["grp"].isna().all():
        raise JurybenchError(
            f"no subject of run '{run}' has a value for --pair-on {pair_on!r}, so none pairs across the arms.",
            hint="Choose --pair-on as a column the arms share (e.g. --pair-on item_group), or give each item a prompt.",
        )
    out: dict[str, object] = {}
    for criterion, block in frame.groupby("criterion", sort=True):
        means = block[block["extra"].isin(arm_values)].groupby(["grp", "extra"])["score"].mean().unstack("extra")
        means = means.reindex(columns=list(arm_values)).dropna(subset=list(arm_values))
        if len(means) < 3:
            raise JurybenchError(
                f"criterion {criterion!r}: {len(means)} pairs with both arms; at least 3 are needed.",
                hint=f"Check --pair-on {pair_on!r} and --arm.",
            )
        variance, jurors = noise.get(str(criterion), (None, 0))
        out[str(criterion)] = power_summary(
            means[arm_values[0]].to_numpy(),
            means[arm_values[1]].to_numpy(),
            d=d,
            shift=shift,
            power=power,
            alpha=alpha,
            juror_variance=variance,
            jurors=jurors,
        )
    return {
        "arms": list(arm_values),
        "pair_on": pair_on,
        "criteria": out,
        "jury": jury_coverage(con, run, "jury_pointwise"),
    }
