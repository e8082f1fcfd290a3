"""Migration 4: juries (rule, quorum, weights) and the jury views every statistic reads."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = (
    "run_subjects",
    "juror_pointwise",
    "juror_pairwise",
    "jury_pointwise",
    "jury_pairwise",
    "jury_pairwise_orders",
    "run_summary",
)


def m004_jury(con: Connection) -> None:
    import hashlib
    import json

    con.execute(
        """
        CREATE TABLE juries (
            jury_id VARCHAR PRIMARY KEY,
            name VARCHAR,
            aggregation VARCHAR NOT NULL,
            quorum INTEGER NOT NULL,
            tie_rule VARCHAR NOT NULL,
            calibration_id VARCHAR,
            definition JSON NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "juries",
        {
            "": "A jury: its jurors (run_jurors) and the one rule that turns their scores into the jury's.",
            "jury_id": "sha256 of the definition",
            "aggregation": "mean (of juror means), median, weighted (mean with run_jurors.weight), "
            "majority (sign votes) or calibrated (a calibration file's scores)",
            "quorum": "jurors with a valid score needed for a jury score; below it the jury score is NULL",
            "tie_rule": "majority with equal votes: tie (score 0) or abstain (NULL)",
            "calibration_id": "calibrations.calibration_id when aggregation is calibrated",
            "definition": "the whole definition as JSON (jurors with keys, names and weights)",
        },
    )
    con.execute(
        """
        CREATE TABLE run_jurors (
            run_id VARCHAR NOT NULL,
            juror_key VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            weight DOUBLE NOT NULL DEFAULT 1.0,
            position INTEGER NOT NULL,
            PRIMARY KEY (run_id, juror_key)
        )"""
    )
    comment(
        con,
        "run_jurors",
        {
            "": "The panel a run expects: every juror counts in n_jurors_expected, answered or not.",
            "name": "the juror's display name in this run",
            "weight": "the juror's weight for the weighted aggregation",
            "position": "order of the juror in the jury definition",
        },
    )
    con.execute(
        """
        CREATE TABLE rubric_dimensions (
            rubric_hash VARCHAR NOT NULL,
            dimension VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (rubric_hash, dimension)
        )"""
    )
    comment(con, "rubric_dimensions", {"": "Criteria (pointwise) or categories (pairwise) of each rubric, in order."})
    con.execute("ALTER TABLE runs ADD COLUMN jury_id VARCHAR")
    comment(
        con,
        "runs",
        {
            "status": "running; finished; finished_with_errors (some calls ended in error: re-run to retry them); "
            "failed (no call answered); interrupted",
            "jury_id": "the jury definition (juries) the run's figures use",
        },
    )
    comment(con, "calls", {"attempts": "requests made for this call: retries after errors and re-asks included"})
    # Existing stores: dimensions from the stored rubric bodies, a default jury per run.
    for rubric_hash, kind, body in con.execute("SELECT rubric_hash, kind, body FROM rubrics").fetchall():
        data = json.loads(body)
        names = (
            ["preference"]
            if kind == "preference"
            else [d["name"] for d in data.get("criteria") or data.get("categories") or []]
        )
        con.executemany(
            "INSERT INTO rubric_dimensions VALUES (?, ?, ?)", [(rubric_hash, n, i) for i, n in enumerate(names)]
        )
    runs = con.execute("SELECT r.run_id, r.jurors, ru.kind FROM runs r JOIN rubrics ru USING (rubric_hash)").fetchall()
    names_of = dict(con.execute("SELECT juror_key, name FROM jurors").fetchall())
    for run_id, jurors, kind in runs:
        keys = json.loads(jurors)
        definition = {
            "name": "",
            "aggregation": "majority" if kind == "preference" else "mean",
            "quorum": 1,
            "tie": "tie",
            "calibration_id": None,
            "jurors": [{"key": k, "name": names_of.get(k, k), "weight": 1.0} for k in keys],
        }
        text = json.dumps(definition, sort_keys=True)
        jury_id = hashlib.sha256(text.encode()).hexdigest()
        con.execute(
            "INSERT OR IGNORE INTO juries (jury_id, name, aggregation, quorum, tie_rule, definition) "
            "VALUES (?, '', ?, 1, 'tie', ?)",
            [jury_id, definition["aggregation"], text],
        )
        con.execute("UPDATE runs SET jury_id = ? WHERE run_id = ?", [jury_id, run_id])
        con.executemany(
            "INSERT INTO run_jurors VALUES (?, ?, ?, 1.0, ?)",
            [(run_id, k, names_of.get(k, k), i) for i, k in enumerate(keys)],
        )
