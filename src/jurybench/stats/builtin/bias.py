"""bias: what each juror's (and the jury's) scores lean on that they must not: length, formatting,
the responding model's family, the language, or a field a user names (stats/_bias.py)."""

from __future__ import annotations

from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

EACH_TEXT = {"max_length": 2000}  # each feature or family an HTTP body lists
COLUMNS = [
    "rater",
    "criterion",
    "feature",
    "unit",
    "estimate",
    "ci_low",
    "ci_high",
    "p",
    "p_adjusted",
    "significant",
    "n",
    "n_clusters",
]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    return list(COLUMNS), [[e[c] for c in COLUMNS] for e in result["effects"]]


FEATURES_HELP = (
    "A feature (repeatable): tokens (per 100), chars (per 1,000), headers, lists, bold, code, self "
    "(the responding model of the juror's family), language, meta.<field> or sql:<expression>; default "
    "tokens, headers, lists, bold, code, self and language, those that vary."
)


@statistic("bias", table=table, plots=("bias",), runs_sql=True)
def bias(
    con: Connection,
    run: params.Run,
    *,
    feature: Annotated[list[str] | None, param(FEATURES_HELP, http_each=EACH_TEXT)] = None,
    against: Annotated[
        str,
        param(
            "humans: the juror's error (score - human mean) on labelled items; prompts: responses to the "
            "same prompt compared (no labels); auto: humans where a criterion has 10 labelled items.",
            choices=("auto", "humans", "prompts"),
        ),
    ] = "auto",
    family: Annotated[
        list[str] | None,
        param(
            "NAME=FAMILY (repeatable): a juror's or a model's name, or the start of one, and its family "
            "(defaults: gpt=openai, claude=anthropic, gemini=google, llama=meta, ...).",
            http_each=EACH_TEXT,
        ),
    ] = None,
    where: params.Where = None,
    cluster: Annotated[
        str, param("Clusters of the intervals (SQL over the item's columns).", http={"max_length": 2000})
    ] = "prompt",
    correction: Annotated[
        str,
        param(
            "Multiplicity over jurors x criteria x features: holm (family-wise) or bh (false discovery).",
            choices=("holm", "bh"),
        ),
    ] = "holm",
    alpha: Annotated[float, param("Significance after the correction; intervals at 1 - alpha.", number="alpha")] = 0.05,
    raters: Annotated[
        str, param("Whose scores: all (jurors and jury), jurors or jury.", choices=("all", "jurors", "jury"))
    ] = "all",
) -> dict[str, object]:
    """The effect of each feature on each juror's and the jury's score, per criterion: a joint
    least-squares fit, cluster-robust (CR1, t on clusters - 1) by prompt, the p-values adjusted over
    every juror x criterion x feature (Holm or Benjamini-Hochberg). Against the humans, the
    outcome is the juror's error (a length humans reward as much is no bias); without labels,
    responses to the same prompt are compared."""
    from jurybench.stats._bias import parse_families
    from jurybench.stats._bias_run import bias as compute

    return compute(
        con,
        run,
        features=feature,
        against=against,
        families=parse_families(family),
        where=where,
        cluster=cluster,
        correction=correction,
        alpha=alpha,
        raters=raters,
    )
