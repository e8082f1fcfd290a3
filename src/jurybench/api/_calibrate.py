"""Calibration and agreement from Python."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from jurybench.declare import NAME_HTTP, param, python_signature
from jurybench.errors import user_facing

if TYPE_CHECKING:
    import pandas as pd

    from jurybench.api._store import StoreLike
    from jurybench.calibration import Selection


@dataclass
class Calibration:
    """A fitted calibration: juror weights per criterion against the human mean, validated on
    held-out groups. ``artifact`` is the whole file's content; ``path`` where it was written."""

    artifact: dict[str, Any]
    path: Path
    store: StoreLike | None = None

    @property
    def name(self) -> str:
        return str(self.artifact["name"])

    def _label(self, feature: str) -> str:
        labels = {j["key"]: j.get("label", j["name"]) for j in self.artifact["jurors"]}
        criterion, _, key = feature.rpartition(":")
        return f"{criterion}:{labels.get(key, key)}" if criterion else labels.get(feature, feature)

    @property
    def weights(self) -> pd.DataFrame:
        """One row per criterion x feature (a juror, a juror on another criterion, or a covariate)
        and kind: ``least squares``, the weights to read and report, with 95 % intervals (the
        leave-one-group-out jackknife over every labelled row; they cover the generating weights
        at their level), and ``applied``, the predictive winner's weights that scoring uses (the
        criterion's ``method`` and intercept; no interval: a variant chosen by cross-validation
        and perhaps shrunk is built to predict, not to be read)."""
        import pandas as pd

        rows = []
        for criterion, spec in self.artifact["criteria"].items():
            ls = (spec.get("report") or {}).get("least_squares") or {}
            for feature, weight in (ls.get("weights") or {}).items():
                ci = ls["ci"][feature]
                rows.append(
                    {
                        "criterion": criterion,
                        "kind": "least squares",
                        "feature": self._label(feature),
                        "weight": weight,
                        "ci_low": ci["low"],
                        "ci_high": ci["high"],
                        "method": "least squares",
                        "intercept": ls.get("intercept"),
                    }
                )
            for feature, weight in spec["weights"].items():
                rows.append(
                    {
                        "criterion": criterion,
                        "kind": "applied",
                        "feature": self._label(feature),
                        "weight": weight,
                        "ci_low": None,
                        "ci_high": None,
                        "method": spec.get("method"),
                        "intercept": spec.get("intercept"),
                    }
                )
        return pd.DataFrame(rows)

    @property
    def metrics(self) -> pd.DataFrame:
        """Held-out metrics per criterion: each calibrated variant and each rescaled baseline (the
        jury's rule, each juror alone), with the cross-validated RMSE on the training split. For a
        preference calibration: held-out accuracy per predictor."""
        import pandas as pd

        rows = []
        for criterion, spec in self.artifact["criteria"].items():
            report = spec["report"]
            if self.artifact["kind"] == "preference":
                rows += [
                    {"criterion": criterion, "model": who, "accuracy": acc, "n_test": report["n_test"]}
                    for who, acc in report["held_out_accuracy"].items()
                ]
                continue
            for kind, entries in (("calibrated", report["variants"]), ("rescaled", report["baselines"])):
                for label, entry in entries.items():
                    rows.append(
                        {
                            "criterion": criterion,
                            "model": f"{kind} {label}",
                            **entry["test"],
                            "cv_rmse": entry.get("cv_rmse_mean"),
                            "winner": kind == "calibrated" and label == report["winner"],
                            "n_train": report["n_train"],
                            "n_test": report["n_test"],
                        }
                    )
        return pd.DataFrame(rows)

    def save(self, folder: str | Path) -> Path:
        """Write the calibration file into ``folder`` too (it is already at ``path``)."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        out = target / self.path.name
        out.write_text(self.path.read_text(encoding="utf-8"), encoding="utf-8")
        return out

    def apply(self, run: str, store: StoreLike | None = None) -> pd.DataFrame:
        """Score a run with this calibration (table calibrated_scores); returns the run's
        calibrated scores (view calibrated_items) as a DataFrame."""
        from jurybench.store import reading

        target = store if store is not None else self.store
        apply_calibration(target, self.path, run=run)
        with reading(target) as con:
            return con.execute("SELECT * FROM calibrated_items WHERE run_id = ? ORDER BY ALL", [run]).df()

    def __repr__(self) -> str:
        return f"<jurybench.Calibration {self.name} ({self.artifact['kind']}, {len(self.artifact['criteria'])} criteria) at {self.path}>"


# -- calibrate: declared once; the command line, a study step and POST /v1/calibrations derive
# -- from these (jurybench.declare). Bounds the library checks itself, with messages of its own,
# -- are the HTTP body's alone (http_only), so the command line and Python say what they said.
GROUP_BY_HTTP = {"max_length": 128}
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"  # a name a server keeps a file by
EACH_NAME = {"max_length": 128}  # each criterion or covariate an HTTP body lists
LabelledRun = Annotated[str, param("Run with human labels to fit on.", http=NAME_HTTP, cli_default=None)]
CalibrationName = Annotated[
    str | None,
    param("Calibration name (file calibration/<name>.json).", required_in="http", http={"pattern": NAME_PATTERN}),
]
Criteria = Annotated[
    list[str] | None, param("Only these criteria (repeatable).", cli_name="criterion", http_each=EACH_NAME)
]
Covariates = Annotated[
    list[str] | None,
    param("language, length or meta.<field> (repeatable).", cli_name="covariate", http_each=EACH_NAME),
]
Methods = Annotated[
    list[str] | None,
    param(
        "Variants to compare: ols, ridge, nnls, cross, shrunk, mean (default all).",
        cli_name="method",
        http_type=list[Literal["ols", "ridge", "nnls", "cross"]] | None,
    ),
]
SplitGroups = Annotated[str, param("Split groups: prompt, item or meta.<field>.", http=GROUP_BY_HTTP)]
TestSize = Annotated[float, param("Share of groups held out for testing.", number="share", http={"gt": 0, "lt": 1})]
CalibrationFolds = Annotated[
    int,
    param(
        "Grouped k-fold cross-validation inside the training split.",
        number="count",
        at_least=2,
        http_only={"le": 50},
    ),
]
SplitSeed = Annotated[int, param("Split and bootstrap seed.", number="seed")]
Boot = Annotated[int, param("Bootstrap resamples for weight CIs.", number="count", http_only={"le": 5000})]
CalibrationOut = Annotated[
    str | Path | None,
    param("Folder for the calibration file (default ./calibration).", faces="cli python", cli_type=Path | None),
]


@user_facing
def calibrate(
    store: StoreLike | None,
    run: LabelledRun,
    *,
    name: CalibrationName = None,
    criteria: Criteria = None,
    covariates: Covariates = None,
    methods: Methods = None,
    group_by: SplitGroups = "prompt",
    test_size: TestSize = 0.2,
    folds: CalibrationFolds = 10,
    seed: SplitSeed = 0,
    boot: Boot = 200,
    out: CalibrationOut = None,
) -> Calibration:
    """Fit per-criterion juror weights by least squares against the human mean on a run with
    human labels, validated on held-out groups; written to ``out`` (default ./calibration)."""
    from jurybench.annotations import check_seed
    from jurybench.calibration import fit_calibration
    from jurybench.store import writing

    check_seed(seed)
    with writing(store) as con:
        artifact, path = fit_calibration(
            con,
            run,
            name=name,
            criteria=criteria,
            covariates=covariates,
            methods=methods,
            group_by=group_by,
            test_size=test_size,
            folds=folds,
            seed=seed,
            n_boot=boot,
            out_dir=Path(out) if out else None,
        )
    return Calibration(artifact, path, store)


# -- calibrate apply: declared once; the command line, a study step and the body of POST
# -- /v1/calibrations/{name}/apply (which names the file in its path) derive from these.
CalibrationFile = Annotated[
    str | Path,
    param("A calibration JSON (or its name under calibration/).", faces="cli python", argument=True, cli_type=Path),
]
ScoredRun = Annotated[str, param("The run to score with it.", http=NAME_HTTP)]
AllowNegative = Annotated[
    bool,
    param(
        "Apply it even though its weights invert the jury or lower the score as a juror's rises (named when "
        "it was fitted; refused otherwise).",
        flag=True,
    ),
]


@user_facing
def apply_calibration(
    store: StoreLike | None,
    calibration: CalibrationFile,
    *,
    run: ScoredRun,
    allow_negative_weights: AllowNegative = False,
) -> dict[str, Any]:
    """Score ``run`` with a calibration file (``calibrate apply``): its calibrated scores are
    written to ``calibrated_scores`` (view ``calibrated_items``); a run with other jurors, rubric
    or covariates is refused, and so is a calibration whose weights invert the jury (or weight a
    juror below 0) unless ``allow_negative_weights``. Returns the rows written, the run, the
    calibration's name and the juror votes imputed."""
    from jurybench.calibration import apply_calibration as apply
    from jurybench.store import writing

    with writing(store) as con:
        return apply(con, Path(calibration), run, allow_negative_weights=allow_negative_weights)


# -- agreement: declared once; the command line, a study step and POST /v1/agreement derive from
# -- these (jurybench.declare) --------------------------------------------------------------------
def _names(annotators: str | list[str] | None = None) -> list[str] | None:
    """The command line's comma-separated names (a study step may give a list)."""
    if annotators is None or isinstance(annotators, list):
        return annotators
    return [a.strip() for a in annotators.split(",") if a.strip()]


AgreementRun = Annotated[
    str,
    param(
        "A run whose subjects have human labels: pointwise (scores), or preference and classification "
        "(categorical: accuracy, kappas).",
        http=NAME_HTTP,
    ),
]
AgreementBoot = Annotated[int, param("Bootstrap resamples for the CIs.", number="count", http_only={"le": 5000})]
AgreementSeed = Annotated[int, param("Bootstrap seed.", number="seed")]
Unusable = Annotated[
    str,
    param(
        "A juror's unusable answers (preference, classification): drop (left out, counted), tie "
        "(a tie, PandaLM's rule), wrong (a verdict never right).",
        http_type=Literal["drop", "tie", "wrong"],
    ),
]
Annotators = Annotated[
    list[str] | None,
    param(
        "Only these annotators' labels (comma-separated names).",
        cli_type=str | None,
        from_cli=_names,
        http_each=EACH_NAME,
    ),
]


@user_facing
def agreement(
    store: StoreLike | None,
    run: AgreementRun,
    *,
    criteria: Criteria = None,
    boot: AgreementBoot = 1000,
    seed: AgreementSeed = 0,
    invalid: Unusable = "drop",
    annotators: Annotators = None,
) -> pd.DataFrame:
    """Each juror and the jury against the human mean, and the human ceiling, per criterion, as a
    DataFrame (one row per criterion x rater); ``attrs["report"]`` holds the whole report
    (alpha, Fleiss' kappa, the jury-beats-best-juror test). ``invalid``: drop, tie or wrong, a
    juror's unusable answers on a preference or classification run; ``annotators``: only their
    labels."""
    import pandas as pd

    from jurybench.annotations import agreement_report, check_seed, to_jsonable
    from jurybench.store import reading

    check_seed(seed)
    with reading(store) as con:
        report = agreement_report(
            con, run, criteria=criteria, n_boot=boot, seed=seed, invalid=invalid, annotators=annotators
        )
    rows = []
    for block in report:
        if block.get("kind") == "categorical":  # preference or classification: accuracy, kappa, F1
            for row in [*block["jurors"], block["jury"]]:
                rows.append(
                    {
                        "criterion": block["criterion"],
                        "rater": row["juror"],
                        "n": row["n"],
                        "accuracy": row["accuracy"],
                        "cohen_kappa": row["cohen_kappa"].value,
                        "cohen_kappa_low": row["cohen_kappa"].low,
                        "cohen_kappa_high": row["cohen_kappa"].high,
                        "gwet_ac1": row["gwet_ac1"],
                        "macro_precision": row["macro_precision"],
                        "macro_recall": row["macro_recall"],
                        "macro_f1": row["macro_f1"],
                        **{f"f1_{lab}": row["per_class"][lab]["f1"] for lab in block["labels"]},
                    }
                )
            continue
        for row in [*block["jurors"], block["jury"]]:
            ci = row.get("pearson_ci")  # an Estimate: value with its bootstrap CI
            rows.append(
                {
                    "criterion": block["criterion"],
                    "rater": row["juror"],
                    "pearson": ci.value if ci is not None else row.get("pearson"),
                    "pearson_low": ci.low if ci is not None else None,
                    "pearson_high": ci.high if ci is not None else None,
                    **{k: row.get(k) for k in ("spearman", "kendall", "mae", "exact", "within_one", "quadratic_kappa")},
                }
            )
        ceiling = block["human_ceiling"]["mean"]
        rows.append(
            {
                "criterion": block["criterion"],
                "rater": "human ceiling (one vs rest)",
                **{
                    k: ceiling.get(k)
                    for k in ("pearson", "spearman", "kendall", "mae", "exact", "within_one", "quadratic_kappa")
                },
            }
        )
    frame = pd.DataFrame(rows)
    frame.attrs["report"] = to_jsonable(report)
    return frame


# -- jury select: declared once; the command line, a study step and POST /v1/jury/select derive
# -- from these (jurybench.declare) ------------------------------------------------------------
PilotRun = Annotated[str, param("The pilot run, judged by every candidate juror.", http=NAME_HTTP)]
Target = Annotated[
    str,
    param(
        "human (the labels), jury (the full jury's score) or auto (human if labelled).",
        http_type=Literal["auto", "human", "jury"],
    ),
]
SelectMethod = Annotated[
    str,
    param(
        "mean (a sub-jury's mean, rescaled) or calibrated (least-squares weights).",
        http_type=Literal["mean", "calibrated"],
    ),
]
MaxError = Annotated[
    float | None, param("Choose the cheapest sub-jury with held-out RMSE at most this.", number="amount")
]
Budget = Annotated[
    float | None,
    param("Choose the most accurate sub-jury costing at most this (USD) for --subjects.", number="dollars"),
]
Subjects = Annotated[
    int | None, param("Subjects the study will judge (for --budget; default: the pilot's).", number="count", at_least=1)
]
SelectFolds = Annotated[
    int,
    param("Grouped k-fold cross-validation (groups: --group-by).", number="count", at_least=2, http_only={"le": 50}),
]
FoldSeed = Annotated[int, param("Fold seed.", number="seed")]
FoldGroups = Annotated[str, param("Fold groups: prompt, item or meta.<field>.", http=GROUP_BY_HTTP)]
Margin = Annotated[
    float | None,
    param(
        "Non-inferiority margin in squared-error units: a sub-jury must be shown within this of the "
        "full jury's held-out mean squared error (default: a fifth of the full jury's).",
        number="amount",
    ),
]
Alpha = Annotated[
    float,
    param("Level of the non-inferiority tests (split between the price path and Holm).", number="alpha"),
]
JuryFileOut = Annotated[
    str | Path | None,
    param("Write the chosen sub-jury as a jury file (YAML).", faces="cli python", cli_type=Path | None),
]


@user_facing
def select_jury(
    store: StoreLike | None,
    run: PilotRun,
    *,
    target: Target = "auto",
    method: SelectMethod = "mean",
    max_error: MaxError = None,
    budget: Budget = None,
    subjects: Subjects = None,
    folds: SelectFolds = 5,
    seed: FoldSeed = 0,
    group_by: FoldGroups = "prompt",
    margin: Margin = None,
    alpha: Alpha = 0.05,
    out: JuryFileOut = None,
) -> Selection:
    """The cheapest sub-jury of a pilot run's jurors that is good enough (``jurybench jury
    select``): every sub-jury's held-out error against the human labels (``target="human"``)
    or the full jury (``"jury"``; ``"auto"``: humans when there are labels), its cost and latency
    per subject from the stored calls, the Pareto front, and the chosen one (the cheapest shown
    non-inferior to the full jury within ``margin`` (held-out mean squared error, default a fifth
    of the full jury's) by a one-sided test, ``alpha`` split between the price path and Holm over
    the sub-juries; or ``max_error``, or ``budget`` USD
    for ``subjects`` subjects). ``out``: write the chosen sub-jury as a jury file. Returns a
    :class:`jurybench.calibration.Selection` (``as_dict()``, ``pareto``, ``chosen``, ``full``)."""
    from jurybench.annotations import check_seed
    from jurybench.calibration import select_jury as select
    from jurybench.calibration import write_jury_file
    from jurybench.store import reading

    check_seed(seed)
    with reading(store) as con:
        selection = select(
            con,
            run,
            target=target,
            method=method,
            max_error=max_error,
            budget=budget,
            subjects=subjects,
            folds=folds,
            seed=seed,
            group_by=group_by,
            margin=margin,
            alpha=alpha,
        )
    if out is not None:
        write_jury_file(selection, Path(out))
    return selection


calibrate.__signature__ = python_signature(calibrate)  # type: ignore[attr-defined]
apply_calibration.__signature__ = python_signature(apply_calibration)  # type: ignore[attr-defined]
select_jury.__signature__ = python_signature(select_jury)  # type: ignore[attr-defined]
agreement.__signature__ = python_signature(agreement)  # type: ignore[attr-defined]
