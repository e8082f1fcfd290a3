"""stats drift: the interval of a planted drift (a judge half a point more lenient in the later
run) covers it, and so does the interval of the rest (what the judged system's change adds).

Each replication is two runs as ``stats drift`` reads them: 40 prompts; the earlier run judges
four answers a prompt, the later run two of them again (the anchors) and two new answers of a
system whose answers are better by ``SYSTEM``; quality shares a prompt effect; the judge's score
is quality plus noise, plus ``SHIFT`` in the later run. Scores are unrounded, so the truth is
exactly the planted shift and, for the rest, half the system's gain (the new answers are half of
the later run). The figures come from the functions ``stats drift`` uses (stats/_drift.py)."""

from __future__ import annotations

import numpy as np

from jurybench.stats.functions import drift_figures
from jurybench.validity._claims import Claim, rate

PROMPTS, SHIFT, SYSTEM = 40, 0.3, 0.4
FEW = 10  # stats/_drift.py MIN_ANCHOR_PROMPTS


def study(rng: np.random.Generator, prompts: int = PROMPTS) -> tuple[bool, bool]:
    """Whether the 95 % intervals of the shift and of the rest cover their truths."""
    prompt_effect = rng.normal(0, 0.7, prompts)
    before: dict[str, float] = {}
    after: dict[str, float] = {}
    prompt_of: dict[str, str] = {}
    pairs = []
    for p in range(prompts):
        for k in range(4):
            item = f"p{p}-old{k}"
            quality = prompt_effect[p] + rng.normal()
            prompt_of[item] = str(p)
            before[item] = quality + rng.normal(0, 0.6)
            if k < 2:  # judged again, unchanged, by the judge as it is now
                after[item] = quality + SHIFT + rng.normal(0, 0.6)
                pairs.append((item, item))
        for k in range(2):
            item = f"p{p}-new{k}"
            prompt_of[item] = str(p)
            after[item] = prompt_effect[p] + SYSTEM + rng.normal() + SHIFT + rng.normal(0, 0.6)
    figures = drift_figures(before, after, pairs, prompt_of)
    _, low, high = figures["shift"]
    _, rest_low, rest_high = figures["rest"]
    return bool(low <= SHIFT <= high), bool(rest_low <= SYSTEM / 2 <= rest_high)


def claims(quick: bool) -> list[Claim]:
    reps = 150 if quick else 1000
    rng = np.random.default_rng(57)
    runs = [study(rng) for _ in range(reps)]
    few = [study(rng, FEW) for _ in range(reps)]
    design = f"{PROMPTS} prompts, 4 answers judged before, 2 of them again and 2 new after, a prompt effect"
    return [
        rate(
            "stats drift",
            f"95 % interval of a planted judge shift ({SHIFT}) covers it 93-97 %",
            sum(r[0] for r in runs),
            reps,
            low=0.93,
            high=0.97,
            quick=quick,
            note=design,
        ),
        rate(
            "stats drift",
            "95 % interval of the rest (the system's change) covers it 93-97 %",
            sum(r[1] for r in runs),
            reps,
            low=0.93,
            high=0.97,
            quick=quick,
            note=design + f"; the new system {SYSTEM} better on half the later run",
        ),
        rate(
            "stats drift",
            f"at {FEW} anchor prompts (stats drift's MIN_ANCHOR_PROMPTS, below which it warns) the shift's 95 % "
            "interval covers it 93-97 %",
            sum(r[0] for r in few),
            reps,
            low=0.93,
            high=0.97,
            quick=quick,
            note=design.replace(f"{PROMPTS} prompts", f"{FEW} prompts"),
        ),
    ]
