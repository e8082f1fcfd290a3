"""drift: did the judge move between two runs? Its shift on the anchors (subjects both runs
judged, byte for byte), the headline change and the rest (stats/_drift.py)."""

from __future__ import annotations

from typing import Annotated

from jurybench.declare import NAME_HTTP, param
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

COLUMNS = [
    "rater",
    "criterion",
    "n_anchors",
    "shift",
    "shift_low",
    "shift_high",
    "headline",
    "headline_low",
    "headline_high",
    "rest",
    "rest_low",
    "rest_high",
    "exact",
    "within_one",
    "mae",
]


def table(result: dict[str, object], summary: bool) -> tuple[list[str], list[list[object]]]:
    rows = result["rows"]
    assert isinstance(rows, list)
    columns = [*COLUMNS, "kappa"] if result.get("kind") != "pointwise" else list(COLUMNS)  # verdicts', labels' kappa
    return columns, [[row[c] for c in columns] for row in rows]


@statistic("drift", table=table)
def drift(
    con: Connection,
    run: Annotated[str, param("The later run: the judge as it is now.", cli_name="to", http=NAME_HTTP)],
    *,
    other_run: Annotated[str, param("The earlier run: the judge as it was.", cli_name="from_", http=NAME_HTTP)],
    alpha: Annotated[float, param("1 - the intervals' level.", number="alpha")] = 0.05,
) -> dict[str, object]:
    """The judge's shift between two pointwise or pairwise runs on the anchors (subjects both
    judged with identical content), the headline change of the mean score and the rest (headline - shift),
    each with a cluster-bootstrap interval over prompts, per juror (by label) and for the jury;
    and the anchors' agreement between the runs (exact, within one, MAE)."""
    from jurybench.stats._drift import drift as compute

    return compute(con, run, other_run, alpha=alpha)
