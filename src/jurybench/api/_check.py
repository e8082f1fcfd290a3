"""A gate for builds: does a run meet its thresholds, and did it not drop against a baseline run?

``check(store, run, min=["coherence>=3.5"], baseline_run="B", max_drop=0.2)`` reads the run's
jury scores (``jury_pointwise``, or ``jury_pairwise`` for pairwise rubrics) and fails a
criterion when

- its mean jury score misses a threshold (``criterion>=value`` or ``criterion<=value``), or
- against the baseline run, on the subjects both runs scored (paired by item or pair id, or by
  prompt when the runs judged different items), the mean drop baseline - run is larger than
  ``max_drop`` and significantly so: a one-sided paired t-test of H0 "drop <= max_drop" rejects at
  ``alpha`` (so a noisy drop on a handful of items does not fail a build, and a real one does).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param, python_signature
from jurybench.errors import JurybenchError, user_facing

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.api._store import StoreLike

_RULE = re.compile(r"^\s*([^<>=\s]+)\s*(>=|<=)\s*(-?[0-9]+(?:\.[0-9]*)?|-?\.[0-9]+)\s*$")


def parse_rule(text: str) -> tuple[str, str, float]:
    match = _RULE.match(text)
    if not match:
        raise JurybenchError(
            f"--min {text!r} is not a rule.", hint="Write CRITERION>=VALUE or CRITERION<=VALUE, e.g. 'coherence>=3.5'."
        )
    return match.group(1), match.group(2), float(match.group(3))


@dataclass
class CheckResult:
    """``passed`` is False when any criterion failed; ``table`` has one row per criterion checked."""

    run: str
    passed: bool
    table: Any
    failures: list[str] = field(default_factory=list)
    result_id: str | None = None
    without_valid_answers: list[dict[str, Any]] = field(default_factory=list)  # jurors in no score

    def lines(self) -> list[str]:
        """A one-screen report: a line per criterion, the failures, and the verdict."""
        out = [f"check of run {self.run}:"]
        for row in self.table.to_dict(orient="records"):
            parts = [f"  {row['criterion']:<24} mean {_num(row['mean'])} (n {row['n']})"]
            if not _nan(row.get("rule")):
                parts.append(f"rule {row['rule']}")
            if row.get("baseline_mean") is not None and not _nan(row.get("baseline_mean")):
                parts.append(
                    f"baseline {_num(row['baseline_mean'])}, drop {_num(row['drop'])} over {row['n_paired']} "
                    f"paired, p {_num(row['p_drop'], 4)}"
                )
            if not _nan(row.get("drift")):
                parts.append(f"judge drift {row['drift']:+.3f}, p {_num(row['p_drift'], 4)}")
            parts.append("ok" if row["ok"] else "FAIL")
            out.append("; ".join(parts))
        out += [f"  failed: {f}" for f in self.failures]
        from jurybench.stats import no_valid_answers_note

        silent = no_valid_answers_note({"without_valid_answers": self.without_valid_answers})
        if silent:
            out.append(f"  {silent}")
        out.append("PASSED" if self.passed else f"FAILED ({len(self.failures)} failure(s))")
        return out


def _nan(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _num(value: object, digits: int = 3) -> str:
    return "n/a" if _nan(value) else f"{value:.{digits}f}"


def _scores(con: Connection, run: str, pair_on: str) -> dict[str, dict[str, float]]:
    """criterion -> subject key -> jury score (subjects below quorum left out)."""
    from jurybench.store import first_row

    row = first_row(con, "SELECT mode FROM runs WHERE run_id = ?", [run])
    if row is None:
        raise JurybenchError(
            f"no run '{run}' in the store.", hint="See the runs with: jurybench sql 'FROM run_summary'."
        )
    if row[0] == "pairwise":
        sql = "SELECT category, pair_id, jury_score FROM jury_pairwise WHERE run_id = ? AND jury_score IS NOT NULL"
    elif pair_on == "prompt":
        sql = (
            "SELECT v.criterion, coalesce(i.prompt, v.item_id), avg(v.jury_score) FROM jury_pointwise v "
            "JOIN items i USING (item_id) WHERE v.run_id = ? AND v.jury_score IS NOT NULL GROUP BY ALL"
        )
    else:
        sql = "SELECT criterion, item_id, jury_score FROM jury_pointwise WHERE run_id = ? AND jury_score IS NOT NULL"
    out: dict[str, dict[str, float]] = {}
    for criterion, key, value in con.execute(sql, [run]).fetchall():
        out.setdefault(str(criterion), {})[str(key)] = float(value)
    return out


# -- check: declared once; the command line and a study step derive from these (jurybench.declare)
CheckedRun = Annotated[str, param("The run to check.", faces="cli python")]
Thresholds = Annotated[
    list[str] | None,
    param(
        "CRITERION>=VALUE or CRITERION<=VALUE on the run's mean jury score (repeatable).",
        faces="cli python",
    ),
]
BaselineRun = Annotated[str | None, param("A run to compare with, paired by subject (or prompt).", faces="cli python")]
MaxDrop = Annotated[
    float | None,
    param(
        "Fail when the mean drop against --baseline-run exceeds this, significantly.",
        faces="cli python",
        number="amount",
    ),
]
MaxDrift = Annotated[
    float | None,
    param(
        "Fail when the judge moved more than this on the subjects --baseline-run judged too (the jury's "
        "shift on the anchors, any criterion: stats drift), significantly.",
        faces="cli python",
        number="amount",
    ),
]
DropAlpha = Annotated[
    float, param("Significance level of the one-sided paired t-test on the drop.", faces="cli python", number="alpha")
]
PairOn = Annotated[
    str,
    param(
        "Pair runs by subject (item or pair id), by prompt, or auto (subject when they share any).",
        faces="cli python",
    ),
]


@user_facing
def check(
    store: StoreLike | None,
    run: CheckedRun,
    *,
    min: Thresholds = None,
    baseline_run: BaselineRun = None,
    max_drop: MaxDrop = None,
    max_drift: MaxDrift = None,
    alpha: DropAlpha = 0.05,
    pair_on: PairOn = "auto",
) -> CheckResult:
    """Check a run's jury scores against thresholds and a baseline run (see the module docs)."""
    import numpy as np
    import pandas as pd
    from scipy import stats as st

    from jurybench.stats import jurors_without_valid_answers, named_jurors, record_result
    from jurybench.store import reading, writing

    rules = [parse_rule(r) for r in (min or [])]
    if max_drift is not None and baseline_run is None:
        raise JurybenchError(
            "--max-drift needs --baseline-run (the run the judge is compared with on shared subjects)."
        )
    if not rules and baseline_run is None:
        raise JurybenchError("nothing to check.", hint="Give --min 'CRITERION>=VALUE' and/or --baseline-run RUN.")
    if baseline_run is not None and max_drop is None:
        max_drop = 0.0
    if max_drop is not None and baseline_run is None:
        raise JurybenchError("--max-drop needs --baseline-run (the run to compare with).")
    if pair_on not in ("auto", "subject", "prompt"):
        raise JurybenchError(f"pair_on {pair_on!r} is not valid.", hint="Valid: auto, subject, prompt.")
    if not 0 < alpha < 1:
        raise JurybenchError(f"alpha {alpha} must lie strictly between 0 and 1.")
    mode = pair_on if baseline_run is not None else "subject"
    with reading(store) as con:
        scores = _scores(con, run, "prompt" if mode == "prompt" else "subject")
        silent = jurors_without_valid_answers(con, run)
        if not scores:
            raise JurybenchError(
                f"run '{run}' has no jury scores to check.",
                hint=f"No valid answers from {named_jurors(silent)}."
                if silent
                else "Score it first, or check that its subjects reach the jury's quorum.",
            )
        base: dict[str, dict[str, float]] = {}
        if baseline_run is not None:
            base = _scores(con, baseline_run, "prompt" if mode == "prompt" else "subject")
            silent += jurors_without_valid_answers(con, baseline_run)
            if mode == "auto":  # by subject when the runs share any, else by prompt
                shared = any(set(scores.get(c, {})) & set(base.get(c, {})) for c in scores)
                mode = "subject" if shared else "prompt"
                if mode == "prompt":
                    scores, base = _scores(con, run, "prompt"), _scores(con, baseline_run, "prompt")
        moved: dict[str, dict[str, object]] = {}
        if max_drift is not None:
            from jurybench.stats import compute_drift as drift

            assert baseline_run is not None
            found = drift(con, run, baseline_run, alpha=alpha, beyond=max_drift)
            rows_ = found["rows"]
            assert isinstance(rows_, list)
            moved = {str(r["criterion"]): r for r in rows_ if r["rater"] == "jury"}
    for name, _, _ in rules:
        if name not in scores:
            raise JurybenchError(
                f"--min {name}: run '{run}' has no criterion '{name}'.",
                hint=f"Its criteria: {', '.join(sorted(scores))}.",
            )
    criteria = sorted({n for n, _, _ in rules} | (set(scores) & set(base) if baseline_run else set()))
    rows, failures = [], []
    for criterion in criteria:
        values = scores[criterion]
        mean = float(np.mean(list(values.values())))
        row: dict[str, Any] = {
            "criterion": criterion,
            "n": len(values),
            "mean": mean,
            "rule": None,
            "ok": True,
            "baseline_mean": None,
            "n_paired": 0,
            "drop": None,
            "p_drop": None,
        }
        for name, op, threshold in rules:
            if name != criterion:
                continue
            row["rule"] = f"{op} {threshold:g}"
            if (mean < threshold) if op == ">=" else (mean > threshold):
                row["ok"] = False
                failures.append(f"{criterion}: mean {mean:.3f} misses {op} {threshold:g}")
        if baseline_run is not None and criterion in base:
            keys = sorted(set(values) & set(base[criterion]))
            row["n_paired"] = len(keys)
            if keys:
                diff = np.array([base[criterion][k] - values[k] for k in keys])
                row["baseline_mean"] = float(np.mean([base[criterion][k] for k in keys]))
                row["drop"] = float(diff.mean())
                assert max_drop is not None
                if len(keys) >= 2 and float(np.std(diff)) > 0:
                    p = float(st.ttest_1samp(diff, max_drop, alternative="greater").pvalue)
                else:  # no spread: every pair dropped alike; the sign test, not a p of 0 from a few
                    p = 0.5 ** len(keys) if row["drop"] > max_drop else 1.0
                row["p_drop"] = p
                if row["drop"] > max_drop and p < alpha:
                    row["ok"] = False
                    failures.append(
                        f"{criterion}: dropped {row['drop']:.3f} against {baseline_run} "
                        f"(more than {max_drop:g}, p = {p:.4g} over {len(keys)} paired)"
                    )
        shifted = moved.get(criterion)
        row["drift"] = shifted["shift"] if shifted else None
        row["p_drift"] = shifted.get("p_beyond") if shifted else None
        if shifted is not None and max_drift is not None:
            shift, p_beyond = float(shifted["shift"]), float(shifted["p_beyond"])  # type: ignore[arg-type]
            if abs(shift) > max_drift and p_beyond < alpha:
                row["ok"] = False
                failures.append(
                    f"{criterion}: the judge moved {shift:+.3f} [{shifted['shift_low']:.3f}, {shifted['shift_high']:.3f}] "
                    f"against {baseline_run} on {shifted['n_anchors']} shared subjects (more than {max_drift:g}, "
                    f"p = {p_beyond:.4g})"
                )
        rows.append(row)
    table = pd.DataFrame(rows)
    result = CheckResult(run, not failures, table, failures, without_valid_answers=silent)
    params = {
        "run": run,
        "min": min or [],
        "baseline_run": baseline_run,
        "max_drop": max_drop,
        "max_drift": max_drift,
        "alpha": alpha,
        "pair_on": pair_on if baseline_run is None else mode,
    }
    with writing(store) as con:
        result.result_id = record_result(
            con,
            "check",
            run,
            params,
            None,
            {"passed": result.passed, "failures": failures, "criteria": rows}
            | ({"without_valid_answers": silent} if silent else {}),
        )
    return result


check.__signature__ = python_signature(check)  # type: ignore[attr-defined]
