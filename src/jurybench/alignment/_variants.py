"""The rubric variants an alignment proposes, each built from training subjects only.

- ``demos-k``: the rubric with k demonstrations: the training subjects where the juror's answer
  in the run was furthest from the humans' mean (one per prompt group, ties broken by a seeded
  hash of the id), shown with the humans' answer rounded to the scale's nearest point.
- ``guidance``: the criterion's description rewritten by an optimizer model, shown the current
  description and anchors and the training subjects where the juror disagreed most, with the
  humans' and the juror's answers.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from jurybench.alignment._data import Labelled
    from jurybench.rubric import AnyRubric

SHOWN_TO_OPTIMIZER = 12  # disagreements the optimizer sees
GUIDANCE_LIMIT = 1500  # characters of a rewritten description kept


def parse_grid(text: str | Sequence[int]) -> list[int]:
    """The demonstration counts to try (``2,4,8``): whole numbers from 0 to 32, 0 meaning the
    original (always compared)."""
    parts = [str(p).strip() for p in (text.split(",") if isinstance(text, str) else text)]
    try:
        grid = sorted({int(p) for p in parts if p})
    except ValueError:
        raise JurybenchError(f"--demos {text!r}: expected whole numbers separated by commas, e.g. 2,4,8.") from None
    if any(k < 0 or k > 32 for k in grid):
        raise JurybenchError(f"--demos {text!r}: each count must be from 0 to 32.")
    return [k for k in grid if k > 0]


def _tiebreak(seed: int, subject_id: str) -> str:
    return hashlib.sha256(f"{seed}\x1f{subject_id}".encode()).hexdigest()


def most_disagreed(subjects: Sequence[Labelled], k: int, seed: int, *, labels: bool = False) -> list[Labelled]:
    """The k subjects whose juror answer was furthest from the humans' (for ``labels``: a label
    other than theirs), at most one per prompt group (subjects the juror did not answer are not
    shown)."""
    answered = [s for s in subjects if s.original is not None]

    def distance(s: Labelled) -> float:
        return float(s.original != s.human) if labels else abs((s.original or 0.0) - s.human)

    ranked = sorted(answered, key=lambda s: (-distance(s), _tiebreak(seed, s.subject_id)))
    chosen, groups = [], set()
    for s in ranked:
        if s.group in groups:
            continue
        chosen.append(s)
        groups.add(s.group)
        if len(chosen) == k:
            break
    return chosen


def nearest_point(value: float, scale: tuple[int, int]) -> int:
    """The scale's point nearest ``value`` (halves round up)."""
    return int(min(scale[1], max(scale[0], math.floor(value + 0.5))))


def with_demonstrations(
    rubric: AnyRubric,
    criterion: str,
    shown: Sequence[Labelled],
    scale: tuple[int, int] | None,
    version: str,
    labels: Sequence[str] = (),
) -> AnyRubric:
    """The rubric with ``shown`` as demonstrations of ``criterion``, as version ``version``: the
    humans' answer as the scale's nearest point, or (``labels``) the label of that index."""
    from jurybench.rubric import rubric_from_data

    def answer(human: float) -> int | str:
        if labels:
            return labels[int(human)]
        assert scale is not None
        return nearest_point(human, scale)

    demos = [{"prompt": s.prompt, "response": s.response, "answer": {criterion: answer(s.human)}} for s in shown]
    return rubric_from_data({**rubric.model_dump(mode="json"), "demonstrations": demos, "version": version})


def with_description(rubric: AnyRubric, criterion: str, description: str, version: str) -> AnyRubric:
    """The rubric with ``criterion``'s description replaced, as version ``version``."""
    from jurybench.rubric import rubric_from_data

    body = rubric.model_dump(mode="json")
    for c in body["criteria"]:
        if c["name"] == criterion:
            c["description"] = description
    return rubric_from_data({**body, "version": version})


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + " [...]"


def guidance_request(
    rubric: AnyRubric, criterion: str, training: Sequence[Labelled], seed: int
) -> list[dict[str, str]]:
    """The messages asking the optimizer for a new description of ``criterion``."""
    current = next(c for c in rubric.model_dump(mode="json")["criteria"] if c["name"] == criterion)
    anchors = "\n".join(
        f"  {level}: {text}" for level, text in sorted(current["anchors"].items(), key=lambda x: int(x[0]))
    )
    cases = []
    for i, s in enumerate(most_disagreed(training, SHOWN_TO_OPTIMIZER, seed), start=1):
        cases.append(
            f"Case {i}\nPrompt: {_cut(s.prompt, 600)}\nResponse: {_cut(s.response, 1200)}\n"
            f"People's score: {s.human:.2f}\nJudge's score: {s.original:g}"
        )
    system = (
        "You revise the instructions a judge model follows when it scores responses on one criterion, so that "
        "its scores come closer to those people gave. Keep the criterion's meaning and its scale."
    )
    user = (
        f"Criterion: {criterion}\nCurrent description: {current['description']}\n"
        f"Scale {current['scale']['min']}..{current['scale']['max']}, with these anchors:\n{anchors}\n\n"
        "Cases where the judge's score differed most from the people's:\n\n"
        + "\n\n".join(cases)
        + "\n\nWrite a new description of the criterion (at most 150 words) that would lead the judge to the "
        "people's scores on cases like these: say what people reward and penalise that the judge missed. "
        "Answer with the description's text only."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_FENCE_RE = re.compile(r"^```[a-z]*\s*|\s*```$")


def guidance_text(answer: str) -> str | None:
    """The optimizer's answer as a description (quotes, fences and a 'Description:' label taken
    off, cut to GUIDANCE_LIMIT characters), or None when nothing usable is left."""
    text = _FENCE_RE.sub("", answer.strip()).strip()
    text = re.sub(r"^(new )?description\s*:\s*", "", text, flags=re.IGNORECASE).strip().strip('"').strip()
    if len(text) < 20:
        return None
    return text[:GUIDANCE_LIMIT]
