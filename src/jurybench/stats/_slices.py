"""Reading a run in slices of its subjects, so that what a statistic holds does not grow
with the run: the run's dimensions, how many slices a run is read in, the slices themselves
(:func:`run_slices`) and the jury's coverage added up over them (:class:`Coverage`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def run_dimensions(con: Connection, run_id: str) -> list[str]:
    """The criteria (or categories) of a run's rubric, in the rubric's order."""
    rows = con.execute(
        "SELECT d.dimension FROM runs r JOIN rubric_dimensions d USING (rubric_hash) WHERE r.run_id = ? "
        "ORDER BY d.position",
        [run_id],
    ).fetchall()
    return [str(r[0]) for r in rows]


# Judgment rows one query of a statistic reads at once: a bigger run is read in slices of its
# subjects (see run_slices), so DuckDB's hash tables, and memory, do not grow with the run.
SLICE_ROWS = 100_000


def slices_of(con: Connection, run_id: str, n_dimensions: int) -> int:
    """How many slices a run's pointwise rows are read in (1 for runs up to SLICE_ROWS)."""
    n_calls = con.execute("SELECT count(*) FROM run_calls WHERE run_id = ?", [run_id]).fetchall()[0][0]
    return max(1, -(-int(n_calls) * max(n_dimensions, 1) // SLICE_ROWS))


@contextlib.contextmanager
def run_slices(
    con: Connection, run_id: str, parts: int, *, jury_read_twice: bool = False
) -> Iterator[Callable[[int], contextlib.AbstractContextManager[None]]]:
    """``only(part)``: inside ``with only(part)``, the views read one of ``parts`` hash slices
    of the run's subjects (for ``parts`` = 1, the run as it is).

    The jury views aggregate per subject over every run's rows, and DuckDB does not push a
    filter on their output down to the scans under their joins and groupings: a query over
    them holds hash tables for every subject of the run. So the run's rows of the tables the
    views read (``run_calls``, ``calls``, ``pointwise_judgments``, ``items``,
    ``calibrated_scores``) are copied once into temporary tables, with each row's slice,
    sorted by slice; inside ``only(part)``, temporary views of the tables' own names, which
    come first in DuckDB's search path, show one slice of them, on this connection only.
    A subject's rows all fall in one slice, so per-subject figures are whole and each
    slice's exact. The copies hold the columns the pointwise views read, spill to disk under
    DuckDB's memory limit, and a slice is a range of row groups of them. For a caller that
    reads a slice's jury scores more than once (``jury_read_twice``: the coverage and the
    statistic), ``jury_pointwise`` itself is shown from a copy of them, worked out once."""
    if parts == 1:
        yield lambda part: contextlib.nullcontext()
        return
    db = con.execute("SELECT current_database()").fetchall()[0][0]

    def real(table: str) -> str:
        return f'"{db}".main.{table}'

    def part_of(column: str) -> str:
        return f"hash({column}) % {int(parts)} AS _jb_part"

    # The run's rubric and jurors pick its judgments and calls without a hash table over its
    # call keys (a lookup that did not fit a small DuckDB); another run's rows they also pick
    # find no membership row and drop out in the views.
    mine = (
        "rubric_hash = (SELECT rubric_hash FROM runs WHERE run_id = $run) "
        "AND juror_key IN (SELECT juror_key FROM run_jurors WHERE run_id = $run)"
    )
    copies = [  # the columns the pointwise views read
        (
            "calls",
            f"SELECT call_key, juror_key, subject_kind, subject_id, status, "
            f"{part_of('subject_id')} FROM {real('calls')} WHERE {mine}",
        ),
        (
            "run_calls",
            f"SELECT rc.*, c._jb_part FROM {real('run_calls')} rc "
            "JOIN temp.main._jb_calls c USING (call_key) WHERE rc.run_id = $run",
        ),
        (
            "pointwise_judgments",
            f"SELECT call_key, item_id, criterion, juror_key, score, expected, status, "
            f"{part_of('item_id')} FROM {real('pointwise_judgments')} WHERE {mine}",
        ),
        (
            "items",
            f"SELECT *, {part_of('item_id')} FROM {real('items')} "
            "WHERE item_id IN (SELECT subject_id FROM temp.main._jb_calls)",
        ),
        (
            "calibrated_scores",
            f"SELECT *, {part_of('subject_id')} FROM {real('calibrated_scores')} WHERE run_id = $run",
        ),
    ]
    made: list[str] = []

    @contextlib.contextmanager
    def only(part: int) -> Iterator[None]:
        shown: list[str] = []
        try:
            for name, _ in copies:
                con.execute(
                    f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * EXCLUDE (_jb_part) "
                    f"FROM temp.main._jb_{name} WHERE _jb_part = {int(part)}"
                )
                shown.append(name)
            if jury_read_twice:  # the slice's jury scores, worked out once for every read of them
                con.execute(
                    "CREATE OR REPLACE TEMP TABLE _jb_jury AS SELECT * FROM jury_pointwise WHERE run_id = $run",
                    {"run": run_id},
                )
                con.execute("CREATE OR REPLACE TEMP VIEW jury_pointwise AS SELECT * FROM temp.main._jb_jury")
                shown.append("jury_pointwise")
            yield
        finally:
            for name in reversed(shown):
                drop_temp(con, f"VIEW IF EXISTS temp.main.{name}")
            drop_temp(con, "TABLE IF EXISTS temp.main._jb_jury")

    try:
        for name, sql in copies:
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE _jb_{name} AS {sql} ORDER BY _jb_part",
                {"run": run_id} if "$run" in sql else None,
            )
            made.append(name)
        yield only
    finally:
        for name in made:
            drop_temp(con, f"TABLE IF EXISTS temp.main._jb_{name}")


def drop_temp(con: Connection, what: str) -> None:
    """Drop a temporary table or view on the way out. After an error (a misspelt column in a
    user's --by) the transaction may be aborted, where DROP fails too: the error that got us
    here is the one to report, and an aborted transaction's temporary objects go with it."""
    import duckdb

    with contextlib.suppress(duckdb.TransactionException):
        con.execute(f"DROP {what}")


class Coverage:
    """The run's jury rule with jurors expected vs present and the subjects below quorum,
    added up over the slices a run is read in (:func:`run_slices`). A whole run is read one
    criterion (or category) at a time: the jury views aggregate per subject x dimension, and
    one dimension's hash tables are a fraction of the run's (a filter on it reaches the base
    tables); a slice is small enough to read at once. A subject falls in one slice only, so
    the subjects below quorum are counted per slice and added up: nothing kept grows with
    the run."""

    def __init__(self, con: Connection, run_id: str, view: str) -> None:
        self.run_id, self.view = run_id, view
        self.dimensions: list[str] = run_dimensions(con, run_id)
        self.below: set[Any] = set()  # a whole run's, over its dimensions
        self.below_in_slices = 0
        self.present, self.rows, self.subjects = 0.0, 0, 0

    def add(self, con: Connection, *, whole: bool) -> None:
        """The figures of the subjects the views read now: the ``whole`` run, or one slice."""
        subject, dimension = ("pair_id", "category") if self.view == "jury_pairwise" else ("item_id", "criterion")
        names: list[str | None] = [*self.dimensions] if whole and self.dimensions else [None]
        for name in names:
            where = f"run_id = $run AND {dimension} = $dim" if name is not None else "run_id = $run"
            below = (
                f"list(DISTINCT {subject}) FILTER (WHERE below_quorum)"
                if whole
                else f"count(DISTINCT {subject}) FILTER (WHERE below_quorum)"
            )
            n, total, short = con.execute(
                f"SELECT count(*), sum(n_jurors_present), {below} FROM {self.view} WHERE {where}",
                {"run": self.run_id, **({"dim": name} if name is not None else {})},
            ).fetchall()[0]
            self.rows, self.present = self.rows + int(n), self.present + float(total or 0)
            if whole:
                self.below.update(short or ())
            else:
                self.below_in_slices += int(short or 0)
        self.subjects += int(
            con.execute(
                "SELECT count(DISTINCT subject_id) FROM run_subjects WHERE run_id = ? AND subject_kind = ?",
                [self.run_id, "pair" if self.view == "jury_pairwise" else "item"],
            ).fetchall()[0][0]
        )

    def result(self, con: Connection) -> dict[str, object]:
        from jurybench.jury import jury_rule

        return {
            **jury_rule(con, self.run_id),
            "n_subjects": self.subjects if self.rows else 0,
            "subjects_below_quorum": len(self.below) + self.below_in_slices,
            "mean_jurors_present": self.present / self.rows if self.rows else None,
        }


def jury_coverage(con: Connection, run_id: str, view: str) -> dict[str, object]:
    """:class:`Coverage` of a run: a pointwise run read in slices (flat memory), a pairwise
    one whole."""
    coverage = Coverage(con, run_id, view)
    parts = slices_of(con, run_id, len(coverage.dimensions)) if view == "jury_pointwise" else 1
    with run_slices(con, run_id, parts) as only:
        for part in range(parts):
            with only(part):
                coverage.add(con, whole=parts == 1)
    return coverage.result(con)
