"""Simulated jurors with known truth: ``sim/<name>``, seeded, offline, behind the juror interface.

Every item has a latent truth per rubric dimension, a standard normal drawn from a hash
of (truth seed, item id, dimension), so all simulated jurors judge the same underlying
quality; an item's metadata may set it instead (``true_<dimension>``, on the same z scale).
A juror turns the truth into an answer with documented distortions:

- ``leniency`` (scale points added), ``noise`` (SD of Gaussian noise, in scale points),
  ``scale_use`` (stretches, >0, or compresses, <0, the spread around the scale's middle);
- ``position_bias`` (pairwise: added to the first-shown response's advantage),
  ``verbosity_bias`` (points per 1,000 characters of extra length);
- ``self_preference`` (points added to a response whose model is of the juror's ``family``:
  its model's name starts with it, case aside; the family defaults to the juror's name);
- a treatment effect: ``effect`` points for items whose treatment matches ``effect_arm``
  (``key=value``, e.g. ``gender=f``) on the dimensions in ``effect_on`` (``a|b|c``; all
  when omitted); in pairs, the effect is the difference between the two items' arms;
- ``language_leniency`` (``ko:-0.5|de:0.3``: points added per item language);
- ``refusal_rate``, ``invalid_rate`` (shares of refusals and unparseable answers);
- ``cost`` (USD) and ``latency_ms``: what each call reports it cost and took (no wait), for
  studies of a jury's price (``jurybench jury select``);
- ``teachable`` (0..1): how much of its leniency and scale-use distortion the juror drops when
  the prompt shows k demonstrations judged by people (``jurybench align``): the share
  teachable * min(1, k / 4); a classifier closes that share of the gap between its accuracy
  and 1. At 0 (the default) the juror ignores what the prompt holds.

Classification: the juror names the gold label with probability ``accuracy`` (default 0.8)
plus ``language_accuracy`` for the item's language (``ko:-0.2|de:0.05``) plus ``effect``
where ``effect_arm`` matches (``effect_on`` then names gold labels); otherwise a label
drawn uniformly from the others. Invalid answers are a word outside the label set.

Questionnaires: a target item has a latent trait per facet (truth(item, facet)); every
statement of the facet is answered as round(mid + half * 0.5 * z + leniency + language +
effect + noise * e) on the questionnaire's 1..P agreement scale (reversed for reverse-keyed
statements), written as the numeral that stands for that label under the call's rotation,
at the statement's shown position. ``effect_on`` may name statements, facets or factors.

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
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.jurors._completion import Backend, Completion, Messages, Slot
from jurybench.jurors._kinds import JurorKind
from jurybench.jurors._spec import READING, SAMPLING, JurorSpec
from jurybench.jurors._units import parse_unit
from jurybench.rubric import (
    AnyRubric,
    ClassificationRubric,
    InventoryRubric,
    PairwiseRubric,
    PointwiseRubric,
    PreferenceRubric,
    by_kind,
)
from jurybench.store import as_float

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.jurors._price_map import Price
    from jurybench.rubric import AnyRubric

# Response models (``sim/<name>`` as a generator in 'jurybench generate'): see SimGenerator.
SIM_GENERATOR_KNOBS = frozenset({"length", "language_refusal", "refusal_arm", "arm_refusal_rate"})
SIM_KNOBS = frozenset(
    {
        "leniency",
        "noise",
        "scale_use",
        "position_bias",
        "verbosity_bias",
        "self_preference",
        "family",
        "effect",
        "effect_on",
        "effect_arm",
        "language_leniency",
        "refusal_rate",
        "invalid_rate",
        "truth_seed",
        "accuracy",
        "language_accuracy",
        "cost",
        "latency_ms",
        "teachable",
    }
)


def truth(item_id: str, dimension: str, truth_seed: int = 0) -> float:
    """The latent quality (standard normal) of an item on a dimension."""
    digest = hashlib.sha256(f"{truth_seed}\x1f{item_id}\x1f{dimension}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).gauss(0.0, 1.0)


@dataclass(frozen=True)
class SimItem:
    item_id: str
    language: str | None
    length: int
    treatment: Mapping[str, object]
    metadata: Mapping[str, object]
    reference: str | None = None
    planted: Mapping[str, float] = field(default_factory=dict)  # a simulated generator's effect marker
    model: str | None = None  # the responding model (self-preference)


def _number(params: Mapping[str, object], key: str, default: float, label: str) -> float:
    """A numeric parameter of a simulated model, or a user error naming it."""
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JurybenchError(f"{label}: {key} must be a number (got {value!r}).")
    return float(value)


def _seed(params: Mapping[str, object], key: str, label: str) -> int:
    """A seed: a whole number, or a user error naming it (a misspelt seed must not pass as text)."""
    value = params.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise JurybenchError(f"{label}: {key} must be a whole number (got {value!r}).", hint=f"e.g. {key}=1")
    return value


def _names(value: object) -> frozenset[str] | None:
    if value is None or value == "":
        return None
    items = value if isinstance(value, list) else str(value).split("|")
    return frozenset(str(v).strip() for v in items if str(v).strip())


def _language_map(value: object, label: str) -> dict[str, float]:
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


# What effect_on may name beyond the rubric's dimensions: a questionnaire's facets and factors
# too; for a classification, its gold labels (the effect raises the accuracy on those).
_EFFECT_TARGETS: dict[str, Callable[[Any], set[str]]] = {
    "inventory": lambda r: set(r.dimensions) | {f.name for f in r.facets} | set(r.factors),
    "classification": lambda r: {lab.name for lab in r.labels},
}


class SimJuror:
    """The answer model of one simulated juror (no I/O: also used directly by tests and studies)."""

    def __init__(self, spec: JurorSpec, rubric: AnyRubric) -> None:
        p = spec.params
        label = f"juror '{spec.display_name}'"
        self.name = spec.model.split("/", 1)[1] if "/" in spec.model else spec.model
        self.rubric = rubric

        def number(key: str, default: float) -> float:
            return _number(p, key, default, label)

        self.leniency = number("leniency", 0.0)
        self.noise = number("noise", 0.5)
        self.scale_use = number("scale_use", 0.0)
        self.position_bias = number("position_bias", 0.0)
        self.verbosity_bias = number("verbosity_bias", 0.0)
        self.self_preference = number("self_preference", 0.0)
        self.family = str(p.get("family", self.name)).strip().lower()
        self.effect = number("effect", 0.0)
        self.refusal_rate = number("refusal_rate", 0.0)
        self.invalid_rate = number("invalid_rate", 0.0)
        self.truth_seed = _seed(p, "truth_seed", label)
        self.seed = _seed(p, "seed", label)
        self.effect_on = _names(p.get("effect_on"))
        self.languages = _language_map(p.get("language_leniency"), label)
        self.accuracy = number("accuracy", 0.8)
        # What each call reports it cost (USD) and took (ms), for studies of a jury's price: no wait.
        self.cost = number("cost", 0.0)
        self.latency_ms = number("latency_ms", 0.0)
        self.teachable = number("teachable", 0.0)
        if not 0.0 <= self.teachable <= 1.0:
            raise JurybenchError(f"{label}: teachable is a share from 0 to 1 (got {self.teachable}).")
        if self.cost < 0 or self.latency_ms < 0:
            raise JurybenchError(f"{label}: cost and latency_ms cannot be negative.")
        self.language_accuracy = _language_map(p.get("language_accuracy"), label)
        arm = p.get("effect_arm")
        self.effect_arm: tuple[str, str] | None = None
        if arm is not None:
            if "=" not in str(arm):
                raise JurybenchError(f"{label}: effect_arm takes key=value, e.g. gender=f (got {arm!r}).")
            key, value = str(arm).split("=", 1)
            self.effect_arm = (key.strip(), value.strip())
        targets = by_kind(_EFFECT_TARGETS, rubric)
        valid = targets(rubric) if targets is not None else set(rubric.dimensions)
        unknown = sorted((self.effect_on or frozenset()) - valid)
        if unknown:
            raise JurybenchError(
                f"{label}: effect_on names {unknown[0]!r}, not a dimension of rubric '{rubric.name}'.",
                hint=f"Valid: {', '.join(sorted(valid))}.",
            )

    def z(self, item: SimItem, dimension: str) -> float:
        given = item.metadata.get(f"true_{dimension}")
        return as_float(given) if given is not None else truth(item.item_id, dimension, self.truth_seed)

    def arm(self, item: SimItem) -> float:
        if self.effect_arm is None:
            return 0.0
        key, value = self.effect_arm
        return 1.0 if str(item.treatment.get(key)) == value else 0.0

    def shift(self, item: SimItem, dimension: str) -> float:
        """Everything added to an item's latent quality on a dimension, in scale points: the juror's own
        treatment effect and verbosity bias, and what a simulated generator planted in the text."""
        effect = self.effect * self.arm(item) if self.effect_on is None or dimension in self.effect_on else 0.0
        own = self.self_preference if self.family and (item.model or "").lower().startswith(self.family) else 0.0
        return effect + self.verbosity_bias * item.length / 1000 + own + item.planted.get(dimension, 0.0)

    def rng(self, *slot: object) -> random.Random:
        digest = hashlib.sha256(repr((self.name, self.seed, *slot)).encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def learned(self, demonstrations: int) -> float:
        """The share of its leniency and scale-use distortion dropped after seeing
        ``demonstrations`` subjects judged by people."""
        return self.teachable * min(1.0, demonstrations / 4)

    def pointwise(self, item: SimItem, rng: random.Random, demonstrations: int = 0) -> dict[str, int]:
        assert isinstance(self.rubric, PointwiseRubric)
        kept = 1.0 - self.learned(demonstrations)
        out = {}
        for c in self.rubric.criteria:
            mid, half = (c.scale.min + c.scale.max) / 2, (c.scale.max - c.scale.min) / 2
            value = (
                mid
                + half * 0.5 * self.z(item, c.name) * (1 + self.scale_use * kept)
                + self.leniency * kept
                + self.languages.get(item.language or "", 0.0)
                + self.shift(item, c.name)
                + self.noise * rng.gauss(0, 1)
            )
            out[c.name] = int(min(c.scale.max, max(c.scale.min, round(value))))
        return out

    def classify(self, item: SimItem, rng: random.Random, demonstrations: int = 0) -> str:
        """A label, shown as in the item's language: the gold one with the juror's accuracy (a
        teachable juror shown demonstrations closes that share of the gap to 1)."""
        from jurybench.rubric import gold_label

        rubric = self.rubric
        assert isinstance(rubric, ClassificationRubric)
        language = item.language or rubric.default_language
        gold = gold_label(rubric, item.reference, item.language)
        p = self.accuracy + self.language_accuracy.get(language, 0.0)
        if gold is not None and (self.effect_on is None or gold in self.effect_on):
            p += self.effect * self.arm(item)
        p += self.learned(demonstrations) * (1.0 - p)
        names = [lab.name for lab in rubric.labels]
        choice = rng.choice([n for n in names if n != gold]) if gold is None or rng.random() >= p else gold
        return next(lab for lab in rubric.labels if lab.name == choice).shown(language)

    def questionnaire(self, item: SimItem, shown_json: str, rng: random.Random) -> str:
        """'<position>. <numeral>' lines for every statement, under the call's order and rotation."""
        from jurybench.rubric import Presentation

        rubric = self.rubric
        assert isinstance(rubric, InventoryRubric)
        shown = Presentation.from_json(shown_json)
        points = rubric.scale.points
        mid, half = (1 + points) / 2, (points - 1) / 2
        numeral_of = {label_index: n for n, label_index in enumerate(shown.rotation, start=1)}
        language = self.languages.get(item.language or "", 0.0)
        lines = []
        structure = {i: (facet, factor, reverse) for i, facet, factor, reverse in rubric.structure()}
        for position, item_id in enumerate(shown.order, start=1):
            facet, factor, reverse = structure[item_id]
            targets = {item_id, facet, factor}
            effect = self.effect * self.arm(item) if self.effect_on is None or targets & self.effect_on else 0.0
            value = mid + half * 0.5 * self.z(item, facet) + self.leniency + language + effect
            value += self.noise * rng.gauss(0, 1)
            agreement = int(min(points, max(1, round(value))))
            canonical = points + 1 - agreement if reverse else agreement
            lines.append(f"{position}. {numeral_of[canonical - 1]}")
        return "\n".join(lines)

    def advantage(self, first: SimItem, second: SimItem, dimension: str) -> float:
        """How much better the first item is than the second on a dimension, with treatment effects."""
        return (
            self.z(first, dimension)
            - self.z(second, dimension)
            + self.shift(first, dimension)
            - self.shift(second, dimension)
        )

    def pairwise(self, first: SimItem, second: SimItem, rng: random.Random) -> dict[str, object]:
        rubric = self.rubric
        assert isinstance(rubric, PairwiseRubric)
        return {
            c.name: int(
                max(
                    -rubric.k,
                    min(
                        rubric.k,
                        round(
                            self.advantage(first, second, c.name) + self.position_bias + self.noise * rng.gauss(0, 1)
                        ),
                    ),
                )
            )
            for c in rubric.categories
        }

    def preference(self, first: SimItem, second: SimItem, rng: random.Random) -> dict[str, object]:
        rubric = self.rubric
        assert isinstance(rubric, PreferenceRubric)
        p_first = 1 / (1 + math.exp(-(2 * self.advantage(first, second, "preference") + self.position_bias)))
        draw = rng.random()
        if rubric.allow_tie and abs(draw - p_first) < 0.05:
            return {"verdict": "tie"}
        return {"verdict": "A" if draw < p_first else "B"}


def load_sim_subjects(
    con: Connection, subject_ids: list[str] | None = None
) -> tuple[dict[str, SimItem], dict[str, tuple[str, str]]]:
    """Items (id -> attributes) and pairs (id -> (item_a, item_b)) as the simulated jurors see them:
    all of them, or only those a run judges (``subject_ids``: item or pair ids)."""
    import pyarrow as pa

    from jurybench.store import registered

    if subject_ids is None:
        pairs = {r[0]: (r[1], r[2]) for r in con.execute("SELECT pair_id, item_a, item_b FROM pairs").fetchall()}
        wanted_sql, wanted = "", None
    else:
        with registered(con, "sim_wanted", pa.table({"id": subject_ids})):
            pairs = {
                r[0]: (r[1], r[2])
                for r in con.execute(
                    "SELECT pair_id, item_a, item_b FROM pairs WHERE pair_id IN (SELECT id FROM sim_wanted)"
                ).fetchall()
            }
        wanted = pa.table({"id": sorted({*subject_ids, *(i for ab in pairs.values() for i in ab)})})
        wanted_sql = " WHERE item_id IN (SELECT id FROM sim_wanted)"
    sql = (
        "SELECT item_id, language, length(response), treatment, metadata, reference, "
        "CASE WHEN contains(response, '[sim-effect') THEN response END, model FROM items" + wanted_sql
    )
    if wanted is None:
        rows = con.execute(sql).fetchall()
    else:
        with registered(con, "sim_wanted", wanted):
            rows = con.execute(sql).fetchall()
    items = {}
    for item_id, language, length, treatment, metadata, reference, response, model in rows:
        items[item_id] = SimItem(
            item_id,
            language,
            int(length or 0),
            json.loads(treatment) if treatment else {},
            json.loads(metadata) if metadata else {},
            reference,
            planted_effects(response or ""),
            model,
        )
    return items, pairs


# A simulated generator states what it planted at the end of its text, e.g.
# "[sim-effect logos=+1.000 pathos=+1.000]"; simulated jurors read it as part of the item's
# quality on those dimensions (real jurors just see a line of text).
_MARKER_RE = re.compile(r"\[sim-effect ((?:[a-z][a-z0-9_]*=[-+]?\d+(?:\.\d+)? ?)+)\]")
_WORDS = [
    "we",
    "could",
    "all",
    "gain",
    "from",
    "this",
    "plan",
    "because",
    "it",
    "is",
    "clear",
    "fair",
    "and",
    "worth",
    "the",
    "small",
    "effort",
    "it",
    "asks",
    "of",
    "each",
    "of",
    "us",
    "think",
    "of",
    "the",
    "people",
    "who",
    "rely",
    "on",
    "you",
    "and",
    "of",
    "what",
    "a",
    "careful",
    "choice",
    "today",
    "will",
    "spare",
    "them",
    "tomorrow",
]


def planted_effects(text: str) -> dict[str, float]:
    found = _MARKER_RE.search(text)
    if not found:
        return {}
    return {k: float(v) for k, v in (part.split("=") for part in found.group(1).split())}


class SimGenerator:
    """A simulated response model with known, seeded behaviour.

    - ``length``: mean length in words (default 60); ``verbosity``-sensitive jurors see it;
    - ``effect`` on the dimensions in ``effect_on`` for responses whose treatment matches
      ``effect_arm`` (key=value; every response when omitted): written into the text as a ``[sim-effect ...]`` marker that
      simulated jurors add, in scale points, to the response's quality on those dimensions;
    - ``refusal_rate``, plus ``language_refusal`` (``ja:0.2``) for the response language and
      ``arm_refusal_rate`` for the arm ``refusal_arm`` (key=value); ``invalid_rate`` gives
      empty responses.
    """

    def __init__(self, spec: JurorSpec) -> None:
        p = spec.params
        label = f"model '{spec.display_name}'"
        self.name = spec.model.split("/", 1)[1]
        self.seed = _seed(p, "seed", label)
        self.sampling = tuple((k, p[k]) for k in ("temperature", "top_p", "max_tokens") if k in p)

        def number(key: str, default: float) -> float:
            return _number(p, key, default, label)

        self.length = max(1, int(number("length", 60)))
        self.effect = number("effect", 0.0)
        self.refusal_rate = number("refusal_rate", 0.0)
        self.invalid_rate = number("invalid_rate", 0.0)
        self.arm_refusal_rate = number("arm_refusal_rate", 0.0)
        self.language_refusal = _language_map(p.get("language_refusal"), label)
        self.effect_on = sorted(_names(p.get("effect_on")) or [])
        if self.effect and not self.effect_on:
            raise JurybenchError(f"{label}: effect needs effect_on (the dimensions it changes, a|b|c).")
        self.effect_arm = _arm(p.get("effect_arm"), label, "effect_arm")
        self.refusal_arm = _arm(p.get("refusal_arm"), label, "refusal_arm")

    def respond(self, unit: str, language: str | None, sample: int, attempt: int) -> str:
        _, arms = parse_unit(unit)
        digest = hashlib.sha256(repr((self.name, self.seed, unit, sample, attempt, *self.sampling)).encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        p_refuse = self.refusal_rate + self.language_refusal.get(language or "", 0.0)
        if self.refusal_arm and arms.get(self.refusal_arm[0]) == self.refusal_arm[1]:
            p_refuse += self.arm_refusal_rate
        roll = rng.random()
        if roll < p_refuse:
            return "I'm sorry, but I can't help with writing that."
        if roll < p_refuse + self.invalid_rate:
            return ""
        n = max(5, int(rng.gauss(self.length, self.length / 4)))
        words = [rng.choice(_WORDS) for _ in range(n)]
        text = (f"[{language}] " if language else "") + " ".join(words).capitalize() + "."
        if self.effect and (self.effect_arm is None or arms.get(self.effect_arm[0]) == self.effect_arm[1]):
            text += "\n\n[sim-effect " + " ".join(f"{d}={self.effect:+.3f}" for d in self.effect_on) + "]"
        return text


def _arm(value: object, label: str, key: str) -> tuple[str, str] | None:
    if value is None:
        return None
    if "=" not in str(value):
        raise JurybenchError(f"{label}: {key} takes key=value, e.g. gender=female (got {value!r}).")
    k, v = str(value).split("=", 1)
    return k.strip(), v.strip()


class SimGeneratorBackend(Backend):
    """``sim/<name>`` answering generation requests (see :class:`SimGenerator`)."""

    def __init__(self, spec: JurorSpec, rubric: AnyRubric) -> None:
        self.generator = SimGenerator(spec)
        self.calls: dict[Any, int] = {}

    async def complete(self, messages: list[dict[str, str]], slot: Any) -> Any:
        from jurybench.jurors._completion import Completion

        attempt = self.calls.get(slot, 0)
        self.calls[slot] = attempt + 1
        language = slot.language
        text = self.generator.respond(slot.subject_id, language, slot.sample_index, attempt)
        return Completion(
            text=text, finish_reason="stop", prompt_tokens=0, completion_tokens=len(text) // 4, latency_ms=0.0
        )


class SimBackend(Backend):
    """A simulated juror with known truth (``sim/<name>``): see :mod:`jurybench.jurors._simulated`."""

    def __init__(
        self, spec: JurorSpec, rubric: AnyRubric, con: Connection, subject_ids: list[str] | None = None
    ) -> None:
        from jurybench.jurors._simulated import SimJuror, load_sim_subjects

        self.juror = SimJuror(spec, rubric)
        self.items, self.pairs = load_sim_subjects(con, subject_ids)
        self.calls: dict[Slot, int] = {}
        self.demonstrations = 0  # in the prompt being answered (teachable jurors)

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        attempt = self.calls.pop(slot, 0)  # kept only for a slot that will be asked again
        juror = self.juror
        rng = juror.rng(slot.subject_id, slot.order, slot.sample_index, attempt)
        roll = rng.random()
        if roll < juror.refusal_rate + juror.invalid_rate:
            self.calls[slot] = attempt + 1
        if roll < juror.refusal_rate:
            text = "I'm sorry, but I can't judge this."
        elif roll < juror.refusal_rate + juror.invalid_rate:
            text = "Both have merits; it is hard to say."
        else:
            self.demonstrations = _demonstrations_shown(messages) if juror.teachable else 0
            answer = by_kind(_SIM_ANSWERS, juror.rubric)
            assert answer is not None, juror.rubric.name  # a kind built on none of the built-ins: as before
            text = answer(self, slot, rng)
        return Completion(
            text=text,
            finish_reason="stop",
            prompt_tokens=0,
            completion_tokens=0,
            latency_ms=juror.latency_ms,
            cost_usd=juror.cost or None,
        )

    def shown_pair(self, slot: Slot) -> tuple[SimItem, SimItem]:
        """The pair's items in the order the call shows them."""
        a, b = (self.items[i] for i in self.pairs[slot.subject_id])
        return (a, b) if slot.order == "AB" else (b, a)


_DEMONSTRATION_RE = re.compile(r"^### Example \d+ of (\d+) \(judged by people\)$", re.MULTILINE)


def _demonstrations_shown(messages: Messages) -> int:
    """How many demonstrations judged by people the prompt shows (a rubric's ``demonstrations``)."""
    found = _DEMONSTRATION_RE.search(messages[-1]["content"]) if messages else None
    return int(found.group(1)) if found else 0


def _sim_scores(backend: SimBackend, slot: Slot, rng: random.Random) -> str:
    return json.dumps(backend.juror.pointwise(backend.items[slot.subject_id], rng, backend.demonstrations))


def _sim_categories(backend: SimBackend, slot: Slot, rng: random.Random) -> str:
    return json.dumps(backend.juror.pairwise(*backend.shown_pair(slot), rng))


def _sim_verdict(backend: SimBackend, slot: Slot, rng: random.Random) -> str:
    return json.dumps(backend.juror.preference(*backend.shown_pair(slot), rng))


def _sim_label(backend: SimBackend, slot: Slot, rng: random.Random) -> str:
    return backend.juror.classify(backend.items[slot.subject_id], rng, backend.demonstrations)


def _sim_questionnaire(backend: SimBackend, slot: Slot, rng: random.Random) -> str:
    assert slot.presentation is not None  # drawn for every questionnaire call
    return backend.juror.questionnaire(backend.items[slot.subject_id], slot.presentation, rng)


# A simulated juror's answer, per rubric kind (the generative models are described above).
_SIM_ANSWERS: dict[str, Callable[[SimBackend, Slot, random.Random], str]] = {
    "pointwise": _sim_scores,
    "pairwise": _sim_categories,
    "preference": _sim_verdict,
    "classification": _sim_label,
    "inventory": _sim_questionnaire,
}


def make_sim(spec: JurorSpec, rubric: AnyRubric, con: Connection, subject_ids: list[str] | None) -> Backend:
    if rubric.generates:
        return SimGeneratorBackend(spec, rubric)
    return SimBackend(spec, rubric, con, subject_ids)


def check_seeds(spec: JurorSpec, label: str) -> None:
    """A simulated or fake juror's seeds are whole numbers."""
    from jurybench.jurors._simulated import _seed

    for key in ("seed", "truth_seed"):
        _seed(spec.params, key, label)


def sim_price(spec: JurorSpec) -> Price:
    """What a simulated juror's call costs: its declared ``cost=`` per call, no token price (so
    ``score --plan`` prices it as the run will record it)."""
    from jurybench.jurors._price_map import Price

    cost = _number(spec.params, "cost", 0.0, f"juror '{spec.display_name}'")
    return Price(0.0, 0.0, 0.0, 0.0, per_call=max(cost, 0.0))


KIND = JurorKind(
    "sim",
    make_sim,
    "simulated jurors and generators with known truth",
    parameters=READING | SAMPLING | SIM_KNOBS | SIM_GENERATOR_KNOBS,
    offline=True,
    reads_store=True,
    check=check_seeds,
    price=sim_price,
)
