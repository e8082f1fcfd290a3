"""jurybench align: a planted benefit of demonstrations is found, and a juror the prompt does not
change is never claimed improved beyond the test's level.

Each replication is a labelled set as ``align`` reads it: 45 prompts x 2 responses, each with a
latent quality z (a prompt effect and the response's own); three annotators rate it on 1..5,
round(3 + z + noise 0.6), and their mean is the label. The juror's answer in the run is
round(3 + z + LENIENCY + noise 0.7), clipped. Variants are built and tested by the same
function ``jurybench align`` runs (jurybench.alignment.align: the folds, the variants, the
cluster-robust one-sided test, Holm), with demonstrations 2, 4 and 8:

- **teachable**: shown k demonstrations, the juror drops TEACHABLE * min(1, k / 4) of its
  leniency (as the simulated juror kind's ``teachable`` knob does), answering with fresh noise
  as a juror asked again does (an earlier version reused the run's draws for the variants,
  which made the test's power look 96 % at 30 prompts where fresh draws give about 80 %: the
  curve against the number of labelled prompts is in docs/statistics.md);
- **deaf**: the prompt changes nothing but the draw: each variant's answer is a fresh draw from
  the original's distribution (as a fake juror, seeded by its prompt, answers).
"""

from __future__ import annotations

import hashlib
import random

import numpy as np

from jurybench.alignment import AlignmentData, Judged, Labelled, align
from jurybench.validity._claims import Claim, rate

PROMPTS, PER_PROMPT = 45, 2  # at 30 prompts the power is about 0.8 (docs/statistics.md)
LENIENCY, TEACHABLE = 1.0, 0.6
DEMOS = (2, 4, 8)
ALPHA = 0.05


def _rubric() -> object:
    from jurybench.rubric import load_rubric

    return load_rubric("story-quality")


def study(seed: int, *, teachable: bool, prompts: int = PROMPTS, fresh: bool = True) -> bool:
    """Whether ``align`` kept a variant on one simulated labelled set of ``prompts`` prompts.
    ``fresh``: a variant's answers are new draws (a juror asked again with another prompt answers
    with noise of its own, as the simulated juror kind and real jurors do); without it they share
    the run's draws, so only what the demonstrations teach differs."""
    from jurybench.jurors import JurorSpec

    rng = np.random.default_rng(seed)
    n = prompts * PER_PROMPT
    prompt = np.repeat(np.arange(prompts), PER_PROMPT)
    z = rng.normal(0, 0.5, prompts)[prompt] + rng.normal(0, 0.8, n)
    human = np.mean([np.clip(np.round(3 + z + rng.normal(0, 0.6, n)), 1, 5) for _ in range(3)], axis=0)

    def answer(i: int, shown: int, draw: random.Random) -> float:
        kept = 1.0 - (TEACHABLE * min(1.0, shown / 4) if teachable else 0.0)
        return float(np.clip(round(3 + z[i] + LENIENCY * kept + draw.gauss(0, 0.7)), 1, 5))

    original = [answer(i, 0, random.Random(f"{seed}-{i}-run")) for i in range(n)]
    subjects = [
        Labelled(f"s{i}", f"prompt {prompt[i]}", f"response {i}", float(human[i]), original[i], f"p{prompt[i]}")
        for i in range(n)
    ]
    index = {s.subject_id: i for i, s in enumerate(subjects)}
    rubric = _rubric()
    data = AlignmentData("run", rubric, JurorSpec("sim/juror"), "juror", "coherence", subjects, (1, 5))  # type: ignore[arg-type]

    def judge(variant: object, ids: list[str], name: str, budget: float | None) -> Judged:
        shown = len(getattr(variant, "demonstrations", []))
        tag = hashlib.sha256(f"{seed}-{name}".encode()).hexdigest()
        if not teachable:  # the same juror, the same draw: only a new prompt's fresh noise differs
            return Judged({i: answer(index[i], 0, random.Random(f"{tag}-{i}")) for i in ids}, len(ids), 0.0, "finished")
        draws = {i: random.Random(f"{tag}-{i}" if fresh else f"{seed}-{index[i]}-run") for i in ids}
        return Judged(
            {i: answer(index[i], shown, draws[i]) for i in ids},
            len(ids),
            0.0,
            "finished",
        )

    result = align(
        data,
        judge=judge,
        plan=lambda r, ids: (len(ids), 0.0),
        rewrite=None,
        demos=DEMOS,
        folds=5,
        alpha=ALPHA,
        seed=seed,
        max_cost=None,
        planning=False,
        alignment_id=f"v{seed}",
        version="1.a1",
    )
    return result.aligned is not None


def claims(quick: bool) -> list[Claim]:
    reps = 60 if quick else 300
    nulls = 200 if quick else 600
    design = (
        f"{PROMPTS} prompts x {PER_PROMPT} responses labelled by 3 annotators; demonstrations {DEMOS}; 5 folds over "
        f"prompts; alpha {ALPHA}, Holm over the variants"
    )
    power = sum(study(10_000 + r, teachable=True) for r in range(reps))
    null = sum(study(20_000 + r, teachable=False) for r in range(nulls))
    return [
        rate(
            "align",
            f"a juror {LENIENCY} points lenient that drops {TEACHABLE:.0%} of it when shown 4+ demonstrations is "
            "kept aligned >= 80 %",
            power,
            reps,
            low=0.8,
            quick=quick,
            note=design,
        ),
        rate(
            "align",
            f"a juror the prompt does not change is claimed improved <= alpha ({ALPHA})",
            null,
            nulls,
            high=ALPHA,
            quick=quick,
            note=design + "; each variant's answers a fresh draw from the original's distribution",
        ),
    ]
