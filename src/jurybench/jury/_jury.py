"""The jury as one definition: its jurors, their weights, and one rule that aggregates them.

Every jury figure (the ``jury_*`` views, reports, statistics and calibration baselines)
is computed from this definition as stored with the run (tables ``juries`` and
``run_jurors``), so the same item gets the same jury score everywhere:

- ``mean``: the mean over jurors of each juror's mean valid score (a juror sampled
  five times counts once);
- ``median``: the median of the juror means;
- ``weighted``: the weighted mean of the juror means (``weight`` per juror, default 1);
- ``majority`` (pairwise and preference rubrics): each juror votes by the sign of its
  score; more votes for A than B gives +1, more for B gives -1, equal votes give 0
  under ``tie: tie`` or no verdict under ``tie: abstain``; a juror at 0 is present but
  votes for neither;
- ``calibrated``: the scores of a calibration file, applied to the run when it ends.

``quorum`` is the number of jurors with a valid score an item needs; below it the
jury has no score for that item (NULL, counted as below quorum). Jurors who answered
nothing valid (invalid, refusal, error, never asked) still count as expected.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jurybench.errors import JurybenchError
from jurybench.jurors import JurorSpec, juror_from_mapping, parse_juror
from jurybench.rubric import is_pairwise

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


class Kinded(Protocol):
    """What a jury is checked against: a rubric, or a generation spec; each says its jury's
    default rule (``default_aggregation``)."""

    @property
    def default_aggregation(self) -> str: ...


AGGREGATIONS = ("mean", "median", "weighted", "majority", "calibrated")
TIE_RULES = ("tie", "abstain")
JURY_FILE_KEYS = ("name", "aggregation", "quorum", "tie", "calibration", "scores", "jurors")
SCORE_SOURCES = ("discrete", "expected")


@dataclass(frozen=True)
class Jury:
    jurors: tuple[JurorSpec, ...]
    aggregation: str | None = None  # None: the rubric kind's default (majority for preferences, else mean)
    quorum: int = 1
    tie: str = "tie"
    calibration: str | None = None  # path of a calibration file (aggregation 'calibrated')
    name: str = ""
    calibration_id: str | None = field(default=None, compare=False)
    scores: str = "discrete"  # what the jury aggregates: the jurors' discrete or expected scores

    def weight(self, juror: JurorSpec) -> float:
        return float(juror.options.get("weight", 1.0))

    def resolved(self, rubric: Kinded) -> Jury:
        """The definition checked against the rubric, with the default aggregation filled in."""
        if not self.jurors:
            raise JurybenchError("no jurors given.", hint="Pass --juror MODEL (repeatable) or --jury FILE.")
        aggregation = self.aggregation or rubric.default_aggregation
        if self.scores not in SCORE_SOURCES:
            raise JurybenchError(
                f"scores {self.scores!r} (what the jury aggregates) is not valid.",
                hint=f"Valid: {', '.join(SCORE_SOURCES)}.",
            )
        if self.scores == "expected" and not any(j.params.get("scores") == "expected" for j in self.jurors):
            raise JurybenchError(
                "the jury aggregates expected scores, but no juror reads them.",
                hint="Add scores=expected to the jurors whose token probabilities should count "
                "(e.g. openai/gpt-4o-mini,scores=expected).",
            )
        if aggregation not in AGGREGATIONS:
            raise JurybenchError(
                f"aggregation {aggregation!r} is not valid.", hint=f"Valid: {', '.join(AGGREGATIONS)}."
            )
        if aggregation == "majority" and not is_pairwise(rubric):
            raise JurybenchError(
                "aggregation 'majority' needs a pairwise or preference rubric (jurors vote by sign).",
                hint="Use mean, median, weighted or calibrated for pointwise scores.",
            )
        if self.tie not in TIE_RULES:
            raise JurybenchError(f"tie rule {self.tie!r} is not valid.", hint=f"Valid: {', '.join(TIE_RULES)}.")
        if not 1 <= self.quorum <= len(self.jurors):
            raise JurybenchError(
                f"quorum {self.quorum} is not between 1 and the {len(self.jurors)} juror(s) of the jury.",
            )
        for juror in self.jurors:
            weight = juror.options.get("weight", 1.0)
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
                raise JurybenchError(f"juror '{juror.display_name}': weight must be a number >= 0 (got {weight!r}).")
        if aggregation == "weighted" and sum(self.weight(j) for j in self.jurors) == 0:
            raise JurybenchError("aggregation 'weighted' needs at least one juror with a weight above 0.")
        if aggregation == "calibrated":
            if not self.calibration:
                raise JurybenchError(
                    "aggregation 'calibrated' needs a calibration file (calibration: PATH or --calibration)."
                )
            if self.calibration_id is None:
                raise JurybenchError(
                    f"calibration {self.calibration} has not been checked against the rubric and jurors.",
                    hint="Pass the jury through jurybench.calibration.attach_calibration(jury, rubric) "
                    "(jurybench.score does).",
                )
        elif self.calibration:
            raise JurybenchError("a calibration file is used only with aggregation 'calibrated'.")
        return replace(self, aggregation=aggregation, calibration_id=self.calibration_id if self.calibration else None)

    def definition(self) -> dict[str, object]:
        return {
            "name": self.name,
            "aggregation": self.aggregation,
            "quorum": self.quorum,
            "tie": self.tie,
            "calibration_id": self.calibration_id,
            "jurors": [{"key": j.key, "name": j.display_name, "weight": self.weight(j)} for j in self.jurors],
            # only when not the default, so that the ids of juries defined before it stay the same
            **({"scores": self.scores} if self.scores != "discrete" else {}),
        }

    @property
    def jury_id(self) -> str:
        return hashlib.sha256(json.dumps(self.definition(), sort_keys=True).encode()).hexdigest()


def as_jury(jury: Jury | list[JurorSpec] | tuple[JurorSpec, ...]) -> Jury:
    return jury if isinstance(jury, Jury) else Jury(tuple(jury))


def load_jury_file(path: str | Path) -> Jury:
    """A YAML jury: ``jurors`` (mappings with ``model`` and parameters, ``weight`` optional) and
    optionally ``name``, ``aggregation``, ``quorum``, ``tie`` and ``calibration``."""
    from jurybench.rubric import read_yaml

    path = Path(path)
    if not path.exists():
        from jurybench.config import shipped_juries

        # A shipped jury by its file's path in the repository (juries/x.yaml) or by name (x).
        shipped = shipped_juries() / (path.name if path.suffix in (".yaml", ".yml") else f"{path.name}.yaml")
        if len(path.parts) <= 2 and (len(path.parts) == 1 or path.parts[0] == "juries") and shipped.is_file():
            path = shipped
        else:
            names = ", ".join(sorted(p.stem for p in shipped_juries().glob("*.yaml")))
            raise JurybenchError(f"{path}: no such jury file.", hint=f"Shipped juries: {names}.")
    data, root = read_yaml(path.read_text(encoding="utf-8"), str(path))
    return jury_from_mapping(data, where=str(path), base=path.parent, root=root)


def _closest(word: object, valid: tuple[str, ...]) -> str:
    import difflib

    near = difflib.get_close_matches(str(word), valid, n=1)
    return f"Did you mean '{near[0]}'? Valid: {', '.join(valid)}." if near else f"Valid: {', '.join(valid)}."


def jury_from_mapping(data: Any, *, where: str, base: Path | None = None, root: Any = None) -> Jury:
    """A jury from its mapping (a jury file, or a service request); ``base`` resolves a relative
    calibration path (None: calibration paths are not accepted, e.g. from the network); ``root``,
    the file's YAML nodes, lets an error name the line."""
    from jurybench.rubric import line_of

    if not isinstance(data, dict) or not isinstance(data.get("jurors"), list):
        raise JurybenchError(f"{where}: expected a mapping with a 'jurors' list.")
    unknown = [k for k in data if k not in JURY_FILE_KEYS]
    if unknown:
        raise JurybenchError(
            f"{where}{line_of(root, (unknown[0],))}: unknown key '{unknown[0]}'.",
            hint=_closest(unknown[0], JURY_FILE_KEYS),
        )
    aggregation = data.get("aggregation")
    if aggregation is not None and aggregation not in AGGREGATIONS:
        raise JurybenchError(
            f"{where}{line_of(root, ('aggregation',))}, field 'aggregation': {aggregation!r} is not an aggregation.",
            hint=_closest(aggregation, AGGREGATIONS),
        )
    jurors = tuple(
        juror_from_mapping(entry if isinstance(entry, dict) else {"model": entry}, where=f"{where} juror {i + 1}")
        if not (isinstance(entry, str) and "," in entry)
        else parse_juror(entry)
        for i, entry in enumerate(data["jurors"])
    )
    quorum = data.get("quorum", 1)
    if isinstance(quorum, bool) or not isinstance(quorum, int):
        raise JurybenchError(f"{where}: quorum must be a whole number (got {quorum!r}).")
    calibration = data.get("calibration")
    if calibration is not None:
        if base is None:
            raise JurybenchError(f"{where}: calibration files are named by the server, not given as paths here.")
        if not Path(str(calibration)).is_absolute() and (base / str(calibration)).exists():
            calibration = str(base / str(calibration))
    return Jury(
        jurors,
        aggregation=data.get("aggregation"),
        quorum=quorum,
        tie=str(data.get("tie", "tie")),
        calibration=str(calibration) if calibration is not None else None,
        name=str(data.get("name") or ""),
        scores=str(data.get("scores", "discrete")),
    )


def register_jury(con: Connection, run_id: str, jury: Jury, *, new_run: bool = False) -> None:
    """Store the definition and the run's expected panel (names as given in this run).
    ``new_run``: the run's row was just inserted with this jury's id and has no panel yet (two
    statements fewer: a server's jobs wait for its store's one writer). A definition stored
    already is read, not written again (content-addressed by its id)."""
    if not con.execute("SELECT 1 FROM juries WHERE jury_id = ?", [jury.jury_id]).fetchall():
        con.execute(
            "INSERT OR IGNORE INTO juries (jury_id, name, aggregation, quorum, tie_rule, calibration_id, definition, "
            "scores) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                jury.jury_id,
                jury.name,
                jury.aggregation,
                jury.quorum,
                jury.tie,
                jury.calibration_id,
                json.dumps(jury.definition(), sort_keys=True),
                jury.scores,
            ],
        )
    if not new_run:
        con.execute("UPDATE runs SET jury_id = ? WHERE run_id = ?", [jury.jury_id, run_id])
        con.execute("DELETE FROM run_jurors WHERE run_id = ?", [run_id])
    con.executemany(
        "INSERT INTO run_jurors (run_id, juror_key, name, weight, position) VALUES (?, ?, ?, ?, ?)",
        [(run_id, j.key, j.display_name, jury.weight(j), i) for i, j in enumerate(jury.jurors)],
    )


@dataclass(frozen=True)
class RunJuror:
    """One juror of a run's panel: its identity, a label unique within the run, its weight."""

    key: str
    label: str
    name: str
    model: str
    weight: float


def jurors_of_run(con: Connection, run_id: str) -> list[RunJuror]:
    """The jurors a run expects, in jury order. Labels are display names, made unique with the
    parameters that tell same-named jurors apart (e.g. ``fake/x [temperature=0.2]``)."""
    rows = con.execute(
        "SELECT rj.juror_key, rj.name, j.model, j.params, rj.weight FROM run_jurors rj "
        "JOIN jurors j USING (juror_key) WHERE rj.run_id = ? ORDER BY rj.position",
        [run_id],
    ).fetchall()
    names = [r[1] for r in rows]
    seats = []
    for key, name, model, params, weight in rows:
        label = name
        if names.count(name) > 1:
            detail = ", ".join(f"{k}={v}" for k, v in sorted(json.loads(params).items()))
            label = f"{name} [{detail or key[:8]}]"
        seats.append(RunJuror(key, label, name, model, float(weight)))
    labels = [s.label for s in seats]
    return [replace(s, label=f"{s.label} #{s.key[:8]}") if labels.count(s.label) > 1 else s for s in seats]


def jury_rule(con: Connection, run_id: str) -> dict[str, object]:
    """The run's jury rule as reported beside every jury figure."""
    row = con.execute(
        "SELECT ju.aggregation, ju.quorum, ju.tie_rule, ju.name, (SELECT count(*) FROM run_jurors WHERE run_id = ?), "
        "coalesce(ju.scores, 'discrete') FROM runs r JOIN juries ju USING (jury_id) WHERE r.run_id = ?",
        [run_id, run_id],
    ).fetchall()
    if not row:
        raise JurybenchError(f"run '{run_id}' has no jury definition.", hint="Score it again with 'jurybench score'.")
    aggregation, quorum, tie, name, n, scores = row[0]
    # scores: whether the jury's figures rest on its jurors' discrete or expected (probabilistic) scores
    return {
        "aggregation": aggregation,
        "quorum": quorum,
        "tie": tie,
        "name": name,
        "n_jurors_expected": n,
        "scores": scores,
    }


def with_samples(jury: Jury, samples: int | None) -> Jury:
    """A job's ``samples`` for the jurors that did not set their own (one rule for the CLI,
    Python and HTTP: a juror's own ``samples=N`` wins)."""
    from dataclasses import replace

    if not samples:
        return jury
    return replace(jury, jurors=tuple(replace(j, samples=samples) if j.samples == 1 else j for j in jury.jurors))
