"""Simulated jurors with known truth: ``sim/<name>``, seeded, offline, behind the juror interface.

Every item has a latent truth per rubric dimension, a standard normal drawn from a hash
of (truth seed, item id, dimension), so all simulated jurors judge the same underlying
quality; an item's metadata may set it instead (``true_<dimension>``, on the same z scale).
A juror turns the truth into an answer with documented distortions:

- ``leniency`` (scale points added), ``noise`` (SD of Gaussian noise, in scale points),
  ``scale_use`` (stretches, >0, or compresses, <0, the spread around the scale's middle);
- ``position_bias`` (pairwise: added to the first-shown response's advantage),
  ``verbosity_bias`` (points per 1,000 characters of extra length);
- a treatment effect: ``effect`` points for items whose treatment matches ``effect_arm``
  (``key=value``, e.g. ``gender=f``) on the dimensions in ``effect_on`` (``a|b|c``; all
  when omitted); in pairs, the effect is the difference between the two items' arms;
- ``language_leniency`` (``ko:-0.5|de:0.3``: points added per item language);
- ``refusal_rate``, ``invalid_rate`` (shares of refusals and unparseable answers).

Pointwise: score = round(mid + half * 0.5 * z * (1 + scale_use) + leniency + language
+ effect + verbosity + noise * e), clipped to the scale. Pairwise, shown first-second:
round((z_first - z_second) + effects + position_bias + noise * e), clipped to -k..k.
Preference: the first-shown response wins with probability sigmoid(2 * (z_first - z_second
+ effects) + position_bias) (a tie, where allowed, when the draw is within 0.05 of 0.5).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.jury._juror import JurorSpec
from jurybench.rubric import AnyRubric, PairwiseRubric, PointwiseRubric, PreferenceRubric

SIM_KNOBS = frozenset(
    {
        "leniency", "noise", "scale_use", "position_bias", "verbosity_bias", "effect", "effect_on", "effect_arm",
        "language_leniency", "refusal_rate", "invalid_rate", "truth_seed",
    }
)  # fmt: skip


def truth(item_id: str, dimension: str, truth_seed: int = 0) -> float:
    """The latent quality (standard normal) of an item on a dimension."""
    digest = hashlib.sha256(f"{truth_seed}\x1f{item_id}\x1f{dimension}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).gauss(0.0, 1.0)


@dataclass(frozen=True)
class SimItem:
    item_id: str
    language: str | None
    length: int
    treatment: Mapping[str, Any]
    metadata: Mapping[str, Any]


def _names(value: Any) -> frozenset[str] | None:
    if value is None or value == "":
        return None
    items = value if isinstance(value, list) else str(value).split("|")
    return frozenset(str(v).strip() for v in items if str(v).strip())


def _language_map(value: Any, label: str) -> dict[str, float]:
    if value is None or value == "":
        return {}
    message = f"{label}: language_leniency takes lang:points|lang:points (got {value!r})."
    pairs: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        pairs = list(value.items())
    else:
        for part in (p for p in str(value).split("|") if p):
            language, colon, points = part.partition(":")
            if not colon:
                raise JurybenchError(message)
            pairs.append((language, points))
    try:
        return {str(k).strip(): float(v) for k, v in pairs}
    except ValueError:
        raise JurybenchError(message) from None


class SimJuror:
    """The answer model of one simulated juror (no I/O: also used directly by tests and studies)."""

    def __init__(self, spec: JurorSpec, rubric: AnyRubric) -> None:
        p = spec.params
        label = f"juror '{spec.display_name}'"
        self.name = spec.model.split("/", 1)[1] if "/" in spec.model else spec.model
        self.rubric = rubric

        def number(key: str, default: float) -> float:
            value = p.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise JurybenchError(f"{label}: {key} must be a number (got {value!r}).")
            return float(value)

        self.leniency = number("leniency", 0.0)
        self.noise = number("noise", 0.5)
        self.scale_use = number("scale_use", 0.0)
        self.position_bias = number("position_bias", 0.0)
        self.verbosity_bias = number("verbosity_bias", 0.0)
        self.effect = number("effect", 0.0)
        self.refusal_rate = number("refusal_rate", 0.0)
        self.invalid_rate = number("invalid_rate", 0.0)
        self.truth_seed = int(number("truth_seed", 0))
        self.seed = p.get("seed", 0)
        self.effect_on = _names(p.get("effect_on"))
        self.languages = _language_map(p.get("language_leniency"), label)
        arm = p.get("effect_arm")
        self.effect_arm: tuple[str, str] | None = None
        if arm is not None:
            if "=" not in str(arm):
                raise JurybenchError(f"{label}: effect_arm takes key=value, e.g. gender=f (got {arm!r}).")
            key, value = str(arm).split("=", 1)
            self.effect_arm = (key.strip(), value.strip())
        unknown = sorted((self.effect_on or frozenset()) - set(rubric.dimensions))
        if unknown:
            raise JurybenchError(
                f"{label}: effect_on names {unknown[0]!r}, not a dimension of rubric '{rubric.name}'.",
                hint=f"Valid: {', '.join(rubric.dimensions)}.",
            )

    def z(self, item: SimItem, dimension: str) -> float:
        given = item.metadata.get(f"true_{dimension}")
        return float(given) if given is not None else truth(item.item_id, dimension, self.truth_seed)

    def arm(self, item: SimItem) -> float:
        if self.effect_arm is None:
            return 0.0
        key, value = self.effect_arm
        return 1.0 if str(item.treatment.get(key)) == value else 0.0

    def shift(self, item: SimItem, dimension: str) -> float:
        """Everything the juror adds to an item's latent quality on a dimension, in scale points."""
        effect = self.effect * self.arm(item) if self.effect_on is None or dimension in self.effect_on else 0.0
        return effect + self.verbosity_bias * item.length / 1000

    def rng(self, *slot: Any) -> random.Random:
        digest = hashlib.sha256(repr((self.name, self.seed, *slot)).encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def pointwise(self, item: SimItem, rng: random.Random) -> dict[str, int]:
        assert isinstance(self.rubric, PointwiseRubric)
        out = {}
        for c in self.rubric.criteria:
            mid, half = (c.scale.min + c.scale.max) / 2, (c.scale.max - c.scale.min) / 2
            value = (
                mid + half * 0.5 * self.z(item, c.name) * (1 + self.scale_use) + self.leniency
                + self.languages.get(item.language or "", 0.0) + self.shift(item, c.name) + self.noise * rng.gauss(0, 1)
            )  # fmt: skip
            out[c.name] = int(min(c.scale.max, max(c.scale.min, round(value))))
        return out

    def advantage(self, first: SimItem, second: SimItem, dimension: str) -> float:
        """How much better the first item is than the second on a dimension, with treatment effects."""
        return (
            self.z(first, dimension)
            - self.z(second, dimension)
            + self.shift(first, dimension)
            - self.shift(second, dimension)
        )

    def pairwise(self, first: SimItem, second: SimItem, rng: random.Random) -> dict[str, Any]:
        rubric = self.rubric
        if isinstance(rubric, PairwiseRubric):
            return {
                c.name: int(max(-rubric.k, min(rubric.k, round(
                    self.advantage(first, second, c.name) + self.position_bias + self.noise * rng.gauss(0, 1)
                ))))
                for c in rubric.categories
            }  # fmt: skip
        assert isinstance(rubric, PreferenceRubric)
        p_first = 1 / (1 + math.exp(-(2 * self.advantage(first, second, "preference") + self.position_bias)))
        draw = rng.random()
        if rubric.allow_tie and abs(draw - p_first) < 0.05:
            return {"verdict": "tie"}
        return {"verdict": "A" if draw < p_first else "B"}


def load_sim_subjects(con: Any) -> tuple[dict[str, SimItem], dict[str, tuple[str, str]]]:
    """Items (id -> attributes) and pairs (id -> (item_a, item_b)) as the simulated jurors see them."""
    items = {}
    for item_id, language, length, treatment, metadata in con.execute(
        "SELECT item_id, language, length(response), treatment, metadata FROM items"
    ).fetchall():
        items[item_id] = SimItem(
            item_id, language, int(length or 0), json.loads(treatment) if treatment else {},
            json.loads(metadata) if metadata else {},
        )  # fmt: skip
    pairs = {r[0]: (r[1], r[2]) for r in con.execute("SELECT pair_id, item_a, item_b FROM pairs").fetchall()}
    return items, pairs
