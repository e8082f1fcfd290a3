"""Pairwise preference verdicts against human labels, per juror and for the jury.

The human reference of a pair is its annotators' plurality label, a shared top count being a tie
(``MAJORITY_RULE``: the same rule as ``agreement``); pairs where it is a tie are left out and
counted; ``annotator`` takes that annotator's label alone.

Figures per juror (over the pairs of a run that have a human reference):

- ``correct_ab``: the verdict with A shown first picks the human-preferred response;
- ``correct_ba``: the same with B shown first;
- ``both_correct``: correct in both orders;
- ``consistent``: both orders give the same outcome, where an answer with no verdict
  in both orders also counts as the same outcome (LLMBar's ``equal``);
- ``consistent_valid``: both orders name the same winner (A or B);
- ``invalid_ab`` / ``invalid_ba``: answers with no usable verdict (invalid or refusal);
- ``kappa_ab`` / ``kappa_ba``: Cohen's kappa between the verdicts and the human reference
  in each order (no verdict counts as a category of its own);
- ``no_valid_answers``: the juror gave no valid verdict on any pair of the run (a real judge
  that never wrote the rubric's format): its figures describe no verdict at all, and the report
  names it so.

A run judged in one order per pair (``runs.orders`` one, random or unknown: an import of a judge
that saw each pair once) is reported in the orders that exist: an absent order is never an
invalid answer, ``shown_ab`` / ``shown_ba`` count the pairs shown in each order and the
AB / BA figures are over those, ``correct`` is over every pair's one verdict, and the figures
that need both orders (``both_correct``, ``consistent``, ``consistent_valid``) are not given:
position bias cannot be measured, and the report says so.

The jury's verdict per pair and order is the run's jury rule (view
``jury_pairwise_orders``; for LLMBar juries the majority vote: each juror with a valid
verdict votes by the sign of its mean valid score, a juror's tie votes for neither, equal
votes follow the tie rule). A ``tie`` and ``abstain`` (no verdict: below quorum or an
abstained tie) are counted and never correct; the report carries the rule, the jurors
expected and present, and the pairs below quorum.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurybench.annotations._categorical import MAJORITY_RULE
from jurybench.errors import JurybenchError
from jurybench.store import first_row

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

FIGURES = ("correct_ab", "correct_ba", "both_correct", "consistent", "consistent_valid")


@dataclass
class PreferenceRow:
    juror: str
    n_pairs: int
    model: str = ""
    counts: dict[str, int] = field(default_factory=dict)

    kappa: dict[str, float] = field(default_factory=dict)
    no_valid_answers: bool = False  # no valid verdict on any pair of the run, in either order

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"juror": self.juror, "model": self.model, "n_pairs": self.n_pairs}
        out["no_valid_answers"] = self.no_valid_answers
        out.update(self.counts)
        out.update(self.kappa)
        one_order = "shown_ab" in self.counts
        for name in FIGURES:
            if one_order and name not in ("correct_ab", "correct_ba"):
                out[f"{name}_rate"] = None  # needs both orders of a pair
                continue
            shown = self.counts.get(f"shown_{name[-2:]}", 0) if one_order else self.n_pairs
            out[f"{name}_rate"] = self.counts.get(name, 0) / shown if shown else None
        if one_order:
            out["correct_rate"] = self.counts.get("correct", 0) / self.n_pairs if self.n_pairs else None
        return out


@dataclass
class PreferenceReport:
    run_id: str
    reference: str
    n_pairs: int
    n_without_reference: int
    n_reference_ties: int
    jurors: list[PreferenceRow]
    jury: PreferenceRow
    jury_rule: dict[str, object] = field(default_factory=dict)
    orders: str = "both"
    majority_rule: str = ""

    @property
    def one_order(self) -> bool:
        return self.orders != "both"

    def as_dict(self) -> dict[str, Any]:
        return {
            "orders": self.orders,
            "note": (
                "one order per pair: the figures are over the orders shown; position bias cannot be measured"
                if self.one_order
                else None
            ),
            "jury_rule": self.jury_rule,
            "run_id": self.run_id,
            "reference": self.reference,
            "majority_rule": self.majority_rule,
            "n_pairs": self.n_pairs,
            "n_without_reference": self.n_without_reference,
            "n_reference_ties": self.n_reference_ties,
            "jurors": [row.as_dict() for row in self.jurors],
            "jury": self.jury.as_dict(),
        }


def _winner(order: str, mean_score: float | None) -> str | None:
    """'A', 'B', 'tie' or None (no valid verdict), in the items' own naming."""
    if mean_score is None:
        return None
    if mean_score == 0:
        return "tie"
    first_wins = mean_score > 0
    if order == "AB":
        return "A" if first_wins else "B"
    return "B" if first_wins else "A"


def preference_accuracy(con: Connection, run_id: str, *, annotator: str | None = None) -> PreferenceReport:
    """Per-juror and majority-vote jury figures of a preference run against human labels."""
    run = first_row(
        con,
        "SELECT r.rubric_hash, ru.kind FROM runs r JOIN rubrics ru USING (rubric_hash) WHERE run_id = ?",
        [run_id],
    )
    if run is None:
        known = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 5").fetchall()]
        raise JurybenchError(f"no run '{run_id}'.", hint=f"Recent runs: {', '.join(known) or 'none'}.")
    if run[1] != "preference":
        raise JurybenchError(f"run '{run_id}' used a {run[1]} rubric; this report needs a preference rubric (A/B).")
    references = human_majority(con, run_id, annotator)
    from jurybench.jury import jurors_of_run, jury_rule

    orders = str(
        (first_row(con, "SELECT coalesce(orders, 'both') FROM runs WHERE run_id = ?", [run_id]) or ["both"])[0]
    )
    shown: dict[tuple[str, str], set[str]] = defaultdict(set)  # (juror, pair): the orders with a call
    if orders != "both":
        for key, pid, order in con.execute(
            "SELECT DISTINCT c.juror_key, c.subject_id, c.presented_order FROM calls c JOIN run_calls r USING (call_key) "
            "WHERE r.run_id = ? AND c.subject_kind = 'pair'",
            [run_id],
        ).fetchall():
            shown[(key, pid)].add(str(order))
    panel = jurors_of_run(con, run_id)
    rule = jury_rule(con, run_id)
    verdicts: dict[tuple[str, str], dict[str, str | None]] = defaultdict(dict)
    pairs: set[str] = set()
    for key, pid, ab, ba in con.execute(
        "SELECT juror_key, pair_id, juror_score_ab, juror_score_ba FROM juror_pairwise WHERE run_id = ?", [run_id]
    ).fetchall():
        verdicts[(key, pid)] = {"AB": _winner("AB", ab), "BA": _winner("BA", ba)}
        pairs.add(pid)
    gold = {pid: str(references[pid]) for pid in pairs if references.get(pid) in ("A", "B")}
    scored = sorted(gold)
    juror_rows = []
    for seat in sorted(panel, key=lambda s: s.label):
        counts: Counter[str] = Counter()
        for pid in scored:
            v = verdicts[(seat.key, pid)]
            _tally(counts, v.get("AB"), v.get("BA"), gold[pid], shown[(seat.key, pid)] if orders != "both" else None)
        row = PreferenceRow(seat.label, len(scored), seat.model, dict(counts))
        row.no_valid_answers = not any(
            verdict is not None for pid in pairs for verdict in verdicts[(seat.key, pid)].values()
        )
        row.kappa = _kappas(
            {pid: verdicts[(seat.key, pid)] for pid in scored},
            gold,
            {pid: shown[(seat.key, pid)] for pid in scored} if orders != "both" else None,
        )
        juror_rows.append(row)
    jury_counts: Counter[str] = Counter()
    jury_verdicts: dict[str, dict[str, str | None]] = defaultdict(dict)
    below_quorum = 0
    jury_shown: dict[str, set[str]] = defaultdict(set)
    for pid, order, score, is_below in con.execute(
        "SELECT pair_id, presented_order, jury_score, below_quorum FROM jury_pairwise_orders WHERE run_id = ?",
        [run_id],
    ).fetchall():
        if pid not in gold:
            continue
        jury_verdicts[pid][order] = _winner(order, score)
        if orders != "both" and any(order in shown[(seat.key, pid)] for seat in panel):
            jury_shown[pid].add(order)
        below_quorum += bool(is_below)
        if score is None:
            jury_counts[f"abstain_{order.lower()}"] += 1
        elif score == 0:
            jury_counts[f"tie_{order.lower()}"] += 1
    for pid in scored:
        decided = jury_verdicts[pid]
        _tally(
            jury_counts, decided.get("AB"), decided.get("BA"), gold[pid], jury_shown[pid] if orders != "both" else None
        )
    return PreferenceReport(
        run_id=run_id,
        reference=annotator or "majority of human labels",
        n_pairs=len(scored),
        n_without_reference=len(pairs - set(references)),
        n_reference_ties=sum(1 for pid in pairs if references.get(pid) == "tie"),
        jurors=juror_rows,
        jury=PreferenceRow(
            f"jury ({rule['aggregation']})",
            len(scored),
            "",
            dict(jury_counts),
            _kappas(jury_verdicts, gold, dict(jury_shown) if orders != "both" else None),
        ),
        jury_rule={**rule, "pair_orders_below_quorum": below_quorum},
        orders=orders,
        majority_rule=f"{annotator}'s label" if annotator else MAJORITY_RULE[True],
    )


def human_majority(con: Connection, run_id: str, annotator: str | None = None) -> dict[str, str]:
    """Per pair of the run with a human preference label: the annotators' label by the one
    majority rule of agreement and this report (``MAJORITY_RULE``: the plurality, a shared top
    count a tie); ``annotator``: that annotator's label alone."""
    from jurybench.annotations._categorical import plurality

    found: dict[str, list[str]] = defaultdict(list)
    for pid, label, value in con.execute(
        f"""SELECT subject_id, label, value FROM human_labels
            WHERE criterion = 'preference' AND subject_kind = 'pair' {"AND annotator = ?" if annotator else ""}
              AND subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)""",
        [annotator, run_id] if annotator else [run_id],
    ).fetchall():
        if label in ("A", "B", "tie"):
            found[str(pid)].append(str(label))
        elif value is not None:
            found[str(pid)].append("A" if value > 0 else "B" if value < 0 else "tie")
    return {
        pid: majority
        for pid, labels in found.items()
        if (majority := plurality(labels, ("A", "B", "tie"), preference=True))
    }


def _kappas(
    verdicts: dict[str, dict[str, str | None]], gold: dict[str, str], shown: dict[str, set[str]] | None = None
) -> dict[str, float]:
    import numpy as np

    from jurybench.annotations._agreement import cohen_kappa

    out = {}
    for order in ("AB", "BA"):
        pids = sorted(p for p in gold if shown is None or order in shown.get(p, set()))
        if pids:
            truth = np.array([gold[p] for p in pids])
            out[f"kappa_{order.lower()}"] = cohen_kappa(np.array([str(verdicts[p].get(order)) for p in pids]), truth)
    return out


def _tally(counts: Counter[str], ab: str | None, ba: str | None, gold: str, shown: set[str] | None = None) -> None:
    """Add one pair's verdicts; ``shown``: the orders it was shown in, when a run shows one order
    per pair (an absent order is counted nowhere)."""
    if shown is not None:
        for order, verdict in (("AB", ab), ("BA", ba)):
            if order in shown:
                low = order.lower()
                counts[f"shown_{low}"] += 1
                counts[f"correct_{low}"] += verdict == gold
                counts[f"invalid_{low}"] += verdict is None
                counts["correct"] += verdict == gold
        return
    counts["correct_ab"] += ab == gold
    counts["correct_ba"] += ba == gold
    counts["both_correct"] += ab == gold and ba == gold
    counts["consistent"] += ab == ba
    counts["consistent_valid"] += ab == ba and ab in ("A", "B")
    counts["invalid_ab"] += ab is None
    counts["invalid_ba"] += ba is None
