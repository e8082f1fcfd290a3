"""Rubric files as validated data.

A rubric is YAML validated by these pydantic models: unknown keys and bad
values are errors that name the valid choices. Its content hash (over the
validated, canonical form, so comments and key order do not matter) is stored
with every judgment.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME_RE = r"^[a-z][a-z0-9_]*$"

# Placeholders a template may use, by rubric family. ``meta.<field>`` reads a
# metadata field of the item (of item A for pairwise rubrics).
POINTWISE_FIELDS = frozenset(
    {"prompt", "response", "conversation", "reference", "language", "model", "criteria", "answer_format"}
)
PAIRWISE_FIELDS = frozenset(
    {
        "prompt",
        "response_a",
        "response_b",
        "conversation_a",
        "conversation_b",
        "reference",
        "language",
        "categories",
        "answer_format",
    }
)
CLASSIFICATION_FIELDS = frozenset(
    {"prompt", "response", "conversation", "reference", "language", "labels", "answer_format"}
)
# The placeholders a conversation fills (rubric/_transcript.py): a template that uses one has
# its subjects' messages loaded and fitted to each juror's context.
CONVERSATION_FIELDS = ("conversation", "conversation_a", "conversation_b")
INVENTORY_FIELDS = frozenset({"prompt", "response", "language", "scale", "items", "answer_format"})
PLACEHOLDER_RE = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_.]*)\}(?!\})")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Template(_Strict):
    """The messages sent to a juror, for one language."""

    system: str = ""
    user: str


class Scale(_Strict):
    """An integer scale ``min..max``."""

    min: int
    max: int

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if self.max <= self.min:
            raise ValueError(f"scale max ({self.max}) must be greater than min ({self.min})")
        return self


class Criterion(_Strict):
    """One pointwise criterion; every level of its scale has an anchor description."""

    name: Annotated[str, Field(pattern=NAME_RE)]
    description: str
    scale: Scale
    anchors: dict[int, str]

    @model_validator(mode="after")
    def _anchors_cover_scale(self) -> Criterion:
        levels = set(range(self.scale.min, self.scale.max + 1))
        missing = sorted(levels - set(self.anchors))
        extra = sorted(set(self.anchors) - levels)
        if missing or extra:
            raise ValueError(
                f"criterion '{self.name}': anchors must cover levels "
                f"{self.scale.min}..{self.scale.max} exactly"
                + (f"; missing {missing}" if missing else "")
                + (f"; outside the scale {extra}" if extra else "")
            )
        return self


class Category(_Strict):
    """One pairwise category, scored ``-k..k`` as 'how much more in A than in B'."""

    name: Annotated[str, Field(pattern=NAME_RE)]
    description: str
    group: str | None = None


class VerdictRule(_Strict):
    """A pattern that, when found in a free-text answer, decides the verdict."""

    verdict: Literal["A", "B", "tie"]
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"pattern {value!r} is not a valid regular expression: {exc}") from exc
        return value


Messages = list[dict[str, str]]


class Demonstration(_Strict):
    """A subject people judged, shown to the juror before the one it judges, with their answer
    (``jurybench align`` writes these; a rubric file may hold them too)."""

    prompt: str = ""
    response: str
    answer: dict[str, int | float | str] = Field(min_length=1, description="the people's answer, per dimension")


DEMONSTRATION_TEXT = 2000  # characters of a demonstration's prompt and response shown (the rest cut, marked)

# What a kind does with code in the modules built on this one (rendering its template, reading
# a gold label): they register it here when ``jurybench.rubric`` is imported, so this file
# imports none of them. Keyed by (kind, what): ("pointwise", "render"), ("classification", "gold").
_BEHAVIOUR: dict[tuple[str, str], Callable[..., Any]] = {}


def kind_behaviour(kind: str, what: str) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Register the decorated function as ``what`` (render, gold) of rubric kind ``kind``."""

    def register(function: Callable[..., object]) -> Callable[..., object]:
        _BEHAVIOUR[(kind, what)] = function
        return function

    return register


# The renderers of a kind that registers none of its own: one item, or one pair in one order.
ITEM_RENDER, PAIR_RENDER = "(an item kind)", "(a pair kind)"


def _kind_behaviour(kind: str, what: str) -> Callable[..., Any]:
    try:
        return _BEHAVIOUR[(kind, what)]
    except KeyError:
        raise NotImplementedError(f"rubric kind '{kind}' has no {what}") from None


class LabelRefused(ValueError):
    """A human label that is not on a rubric's scale: what is wrong, and how to fix it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


PREFERENCE_VALUES = {"a": 1.0, "b": -1.0, "tie": 0.0, "1": 1.0, "-1": -1.0, "0": 0.0}
PREFERENCE_SCORE = {"A": 1, "B": -1, "tie": 0}


class KindTraits:
    """What a kind decides, so that no caller asks which kind a rubric is, each with the default
    of a kind of integer scores answered in JSON about one item. Rubric kinds and the generation
    spec (which travels through the engine in a rubric's place) say theirs."""

    # A judgment is about a pair of items (shown in both orders) or one item; a juror answers in
    # JSON (a schema a provider can enforce) or in text (a label, a questionnaire's numbered lines).
    pairwise: ClassVar[bool] = False
    answers_in_json: ClassVar[bool] = True
    # Whether the subject's response is what is judged (so an empty one is worth a note); a
    # questionnaire's item is the target it reports on.
    judges_a_response: ClassVar[bool] = True
    # Re-asks after an answer that fails validation, unless the juror says: a kind whose invalid
    # answers are themselves measured (a label, a questionnaire, a generated response) asks none.
    reasks: ClassVar[int] = 1
    # The jury's rule when its definition names none (``mean``, or ``majority``: each juror votes
    # by its score's sign).
    default_aggregation: ClassVar[str] = "mean"
    # Each score is a vote between two responses: +1 the first, -1 the second, 0 a tie (the first
    # response's win rate is then (mean + 1) / 2).
    votes: ClassVar[bool] = False
    # Answers are categories, not points on a scale: agreement with people is counted by class
    # (kappa, accuracy), not by correlation.
    categorical: ClassVar[bool] = False
    # Asks for a response (a generation spec), not a judgment.
    generates: ClassVar[bool] = False
    # Judges whole conversations or agent trajectories: a single-response item is refused before
    # any call (it has no turns, tool calls or outcome to judge).
    judges_conversations: ClassVar[bool] = False


class _RubricBase(_Strict, KindTraits):
    if (
        TYPE_CHECKING
    ):  # every concrete kind declares its name, kind: Literal["<name>"]; a field of the base would move it
        kind: str
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$")]
    version: str = "1"
    description: str = ""
    rationale: bool = Field(default=True, description="ask the juror for a short rationale beside its scores")
    default_language: str = "en"
    language_fallback: bool = Field(
        default=False,
        description="use the default language's template for items in a language with none",
    )
    templates: dict[str, Template]
    demonstrations: list[Demonstration] = Field(
        default_factory=list,
        description="subjects people judged, shown with their answers before the subject to judge",
    )

    placeholder_fields: ClassVar[frozenset[str]] = POINTWISE_FIELDS

    @property
    def scores_items(self) -> bool:
        """Whether a judgment is points on each dimension's scale about one item, answered in
        JSON (what a calibration against human ratings per criterion needs)."""
        return not self.pairwise and not self.categorical and self.answers_in_json

    @property
    def subject_kind(self) -> str:
        """'pair' or 'item': what one judgment is about (``human_labels.subject_kind``)."""
        return "pair" if self.pairwise else "item"

    @property
    def subject_table(self) -> str:
        """The table of the subjects: ``pairs`` or ``items``."""
        return "pairs" if self.pairwise else "items"

    @property
    def subject_column(self) -> str:
        """The subjects' id column: ``pair_id`` or ``item_id``."""
        return "pair_id" if self.pairwise else "item_id"

    @property
    def store_kind(self) -> str:
        """How the store keys its judgments (``runs.kind``): ``pairwise`` or ``pointwise``
        (classification and inventory rubrics are judged item by item like pointwise ones)."""
        return "pairwise" if self.pairwise else "pointwise"

    @property
    def judgment_table(self) -> str:
        """``pairwise_judgments`` or ``pointwise_judgments``."""
        return f"{self.store_kind}_judgments"

    @property
    def dimension_column(self) -> str:
        """The judgments' dimension column: ``category`` or ``criterion``."""
        return "category" if self.pairwise else "criterion"

    @property
    def jury_view(self) -> str:
        """The jury's scores per subject: ``jury_pairwise`` or ``jury_pointwise``."""
        return f"jury_{self.store_kind}"

    @property
    def juror_view(self) -> str:
        """Each juror's scores per subject: ``juror_pairwise`` or ``juror_pointwise``."""
        return f"juror_{self.store_kind}"

    def scale_for(self, dimension: str) -> tuple[int, int] | None:
        """The lowest and highest value of ``dimension`` (None: it takes labels, not numbers)."""
        return None

    # A questionnaire shows each call its own item order and scale rotation (drawn from the call
    # key), so its messages cannot be shared between the calls on one subject.
    presented_per_call: ClassVar[bool] = False

    def render(self, subject: Mapping[str, object], order: str = "", call_key: str = "") -> tuple[Messages, str | None]:
        """The messages of one call on ``subject`` (a pair: shown in ``order``), and what the call
        was shown in what order (questionnaires, as JSON, drawn from ``call_key``; None for the
        others). The kind's renderer is registered by ``rubric/_render.py``."""
        kind: str = getattr(self, "kind")  # noqa: B009 (every concrete kind declares it; the base does not)
        if (kind, "render") not in _BEHAVIOUR:
            kind = PAIR_RENDER if self.pairwise else ITEM_RENDER
        messages, shown = _kind_behaviour(kind, "render")(self, subject, order, call_key)
        if self.demonstrations:
            messages = self._with_demonstrations(messages)
        return messages, shown

    def _with_demonstrations(self, messages: Messages) -> Messages:
        """The messages with the demonstrations before the subject, in the last user message."""

        def cut(text: str) -> str:
            return text if len(text) <= DEMONSTRATION_TEXT else text[:DEMONSTRATION_TEXT] + " [...]"

        n = len(self.demonstrations)
        parts = ["People judged the examples below; their answers show how the scale is meant to be used."]
        for i, demo in enumerate(self.demonstrations, start=1):
            shown = [f"### Example {i} of {n} (judged by people)"]
            if demo.prompt:
                shown.append(f"Prompt:\n{cut(demo.prompt)}")
            shown.append(f"Response:\n{cut(demo.response)}")
            shown.append("Their answer: " + json.dumps(demo.answer, ensure_ascii=False, sort_keys=True))
            parts.append("\n".join(shown))
        parts.append("### Now the one to judge")
        last = max(i for i, m in enumerate(messages) if m["role"] == "user")
        out = [dict(m) for m in messages]
        out[last]["content"] = "\n\n".join(parts) + "\n\n" + out[last]["content"]
        return out

    # -- what a kind decides about its prompt and its JSON answer (defaults: integer scores on
    # -- each dimension's scale, one JSON key per dimension) --------------------------------------

    @property
    def dimensions(self) -> list[str]:
        """What one judgment scores: criteria, categories, items of a questionnaire."""
        raise NotImplementedError(f"rubric kind '{getattr(self, 'kind', '?')}' must say its dimensions")

    def criteria_text(self) -> str:
        """The rubric's dimensions as prompt text (the ``{criteria}`` placeholder)."""
        return ""

    def answer_values(self) -> dict[str, dict[str, float]]:
        """Per JSON key of the answer, its values as written and the score each stands for
        (the answer schema's bounds or choices, and the expected score read from token
        probabilities)."""
        out = {}
        for dimension in self.dimensions:
            low, high = self.scale_for(dimension) or (0, -1)
            out[dimension] = {str(v): float(v) for v in range(low, high + 1)}
        return out

    def answer_fields(self) -> dict[str, object]:
        """The answer's pydantic fields (name -> (type, Field)), checked strictly: by default an
        integer on each dimension's scale."""
        fields: dict[str, object] = {}
        for dimension in self.dimensions:
            low, high = self.scale_for(dimension) or (0, -1)
            fields[dimension] = (int, Field(ge=low, le=high))
        return fields

    def answer_lines(self) -> tuple[list[str], dict[str, Any]]:
        """The answer's keys as lines of the format shown to the juror, and an example answer."""
        lines, example = [], {}
        for key, values in self.answer_values().items():
            points = [int(v) for v in values]
            lines.append(f'- "{key}": integer {min(points)}..{max(points)}')
            example[key] = min(points)
        return lines, example

    def scores_of(self, values: dict[str, Any]) -> dict[str, object]:
        """The scores a valid answer gives (its rationale taken out), by dimension."""
        return {k: int(v) for k, v in values.items()}

    def dimension_of_key(self, key: str) -> str:
        """The dimension a JSON key of the answer scores."""
        return key

    def example_subject(self, language: str) -> dict[str, Any]:
        """A placeholder subject to show a prompt with (``rubrics show``)."""
        return {"item_id": "example", "response": "<text>", "language": language}

    def describe(self, language: str) -> list[str]:
        """Lines that say what a juror answers with, beyond the dimensions (``rubrics show``)."""
        return []

    # Classification: an item's reference is its gold label (classification_gold).
    keeps_gold: ClassVar[bool] = False

    def gold_of(self, reference: str, language: str | None) -> str | None:
        """An item's reference as a gold label (a canonical name); None: it names no label."""
        return None

    def structure(self) -> list[tuple[str, str, str | None, bool]]:
        """Questionnaires: (item, facet, factor, reverse) for every item (inventory_structure);
        other kinds have none."""
        return []

    # Human labels: whether a value between the scale's points is accepted (``--continuous``:
    # panel means, published scores); kinds whose labels are categories say no.
    continuous_labels: ClassVar[bool] = True

    def human_choices(self, dimension: str) -> list[str]:
        """What an annotator chooses among for ``dimension`` (the viewer's label form): the
        scale's whole points here; A/B/tie or the label names for the kinds that take those."""
        low, high = self.scale_for(dimension) or (0, -1)
        return [str(v) for v in range(low, high + 1)]

    def label_guide(self, dimension: str) -> tuple[str, dict[str, str]]:
        """What the label form shows an annotator for ``dimension``: its description, and the
        anchor text of each choice that has one (none by default)."""
        return "", {}

    def human_label(self, dimension: str, text: str, continuous: bool = False) -> tuple[float | None, str]:
        """An annotator's label of ``dimension`` as (number, text as stored); a value off the
        kind's scale raises :class:`LabelRefused` (what is wrong, and the hint)."""
        import math

        from jurybench.store import plain_number

        try:
            value = plain_number(text)
        except ValueError:
            raise LabelRefused(f"{text!r} is not a number (written with ASCII digits).") from None
        if not math.isfinite(value):
            raise LabelRefused(f"{text} is not a finite number.", "Fix the value.")
        if value != int(value) and not continuous:
            raise LabelRefused(
                f"{text} is not a whole number; the rubric's scale for '{dimension}' has whole points.",
                "Round labels the way your annotation protocol says, or fix the value; for panel means or "
                "published scores between the points, import with --continuous.",
            )
        low, high = self.scale_for(dimension) or (-math.inf, math.inf)
        if not (low <= value <= high):
            raise LabelRefused(
                f"{text} is outside the rubric's scale {low}..{high} for '{dimension}'.",
                "Fix the value, or check that --rubric is the rubric the annotators used.",
            )
        return value, text

    @model_validator(mode="after")
    def _check_templates(self) -> _RubricBase:
        if self.default_language not in self.templates:
            raise ValueError(
                f"default_language '{self.default_language}' has no template; "
                f"templates exist for {sorted(self.templates)}"
            )
        for language, template in self.templates.items():
            for part in ("system", "user"):
                for field in PLACEHOLDER_RE.findall(getattr(template, part)):
                    if field.startswith("meta.") and len(field) > 5:
                        continue
                    if field not in self.placeholder_fields:
                        raise ValueError(
                            f"template '{language}' {part}: unknown placeholder {{{field}}}; "
                            f"valid: {', '.join('{' + f + '}' for f in sorted(self.placeholder_fields))} "
                            "or {meta.<field>}"
                        )
        return self

    @cached_property
    def conversation_fields(self) -> tuple[str, ...]:
        """The conversation placeholders its templates use (none: its subjects' messages are not read)."""
        used = {
            f
            for template in self.templates.values()
            for part in (template.system, template.user)
            for f in PLACEHOLDER_RE.findall(part)
        }
        return tuple(f for f in CONVERSATION_FIELDS if f in used)

    @cached_property
    def content_hash(self) -> str:
        """sha256 over the canonical JSON of the validated rubric (computed once; rubrics are frozen)."""
        body = self.model_dump(mode="json")
        if not body.get("demonstrations"):  # a rubric without any hashes as it did before they existed
            body.pop("demonstrations", None)
        canonical = json.dumps(body, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @cached_property
    def prompt_parts(self) -> dict[str, str]:
        """The parts of its prompt a rubric makes once, not per call (``{criteria}``, the answer
        format): filled in by the renderers at their first use (rubrics are frozen)."""
        return {}

    def model_copy(self, *, update: Mapping[str, object] | None = None, deep: bool = False) -> Self:
        """A copy; the cached content hash and prompt parts are dropped so a changed copy gets its own."""
        copy = super().model_copy(update=update, deep=deep)
        copy.__dict__.pop("content_hash", None)
        copy.__dict__.pop("prompt_parts", None)
        return copy

    def template_for(self, language: str | None) -> Template:
        """The template for ``language``; falls back to the default only if allowed."""
        if language is None or language == "":
            return self.templates[self.default_language]
        if language in self.templates:
            return self.templates[language]
        if self.language_fallback:
            return self.templates[self.default_language]
        from jurybench.errors import JurybenchError

        raise JurybenchError(
            f"rubric '{self.name}' has no template for language '{language}' (it has {sorted(self.templates)}).",
            hint="Add a template for it, or set language_fallback: true in the rubric.",
        )


class PointwiseRubric(_RubricBase):
    """Each response scored on one or more criteria, each an integer scale."""

    kind: Literal["pointwise"]
    criteria: list[Criterion] = Field(min_length=1)

    @field_validator("criteria")
    @classmethod
    def _unique(cls, value: list[Criterion]) -> list[Criterion]:
        _check_unique([c.name for c in value], "criterion")
        return value

    @property
    def dimensions(self) -> list[str]:
        return [c.name for c in self.criteria]

    def scale_for(self, dimension: str) -> tuple[int, int] | None:
        scale = next(c.scale for c in self.criteria if c.name == dimension)
        return scale.min, scale.max

    def criteria_text(self) -> str:
        out = []
        for c in self.criteria:
            anchors = "\n".join(f"  {level}: {text}" for level, text in sorted(c.anchors.items()))
            out.append(f"{c.name} ({c.scale.min}..{c.scale.max}): {c.description}\n{anchors}")
        return "\n\n".join(out)

    def answer_fields(self) -> dict[str, object]:
        return {c.name: (int, Field(ge=c.scale.min, le=c.scale.max, description=c.description)) for c in self.criteria}

    def label_guide(self, dimension: str) -> tuple[str, dict[str, str]]:
        criterion = next(c for c in self.criteria if c.name == dimension)
        return criterion.description, {str(level): text for level, text in sorted(criterion.anchors.items())}


class ConversationRubric(PointwiseRubric):
    """Criteria judged over a whole conversation or agent trajectory (the user's goal met, the
    role kept, facts retained, a policy followed, tools used well), each on an integer scale:
    a pointwise rubric whose subjects must be conversations and whose templates show one."""

    kind: Literal["conversation"]  # type: ignore[assignment]
    judges_conversations: ClassVar[bool] = True

    @model_validator(mode="after")
    def _shows_the_conversation(self) -> ConversationRubric:
        for language, template in self.templates.items():
            if "conversation" not in PLACEHOLDER_RE.findall(template.system + template.user):
                raise ValueError(
                    f"template '{language}': a conversation rubric must show the conversation; "
                    "put {conversation} in its user (or system) text"
                )
        return self

    def example_subject(self, language: str) -> dict[str, Any]:
        return {
            "item_id": "example",
            "prompt": "<task>",
            "response": "<final answer>",
            "language": language,
            "conversation": [
                {"role": "user", "content": "<task>"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "c1", "name": "<tool>", "arguments": {"<argument>": "<value>"}}],
                },
                {"role": "tool", "content": "<result>", "tool_call_id": "c1", "name": "<tool>"},
                {"role": "assistant", "content": "<final answer>"},
            ],
        }


class PairwiseRubric(_RubricBase):
    """Two responses compared on categories, each scored ``-k..k``."""

    kind: Literal["pairwise"]
    k: int = Field(ge=1, le=10, description="the scale runs from -k to k")
    categories: list[Category] = Field(min_length=1)

    placeholder_fields: ClassVar[frozenset[str]] = PAIRWISE_FIELDS
    pairwise: ClassVar[bool] = True

    @field_validator("categories")
    @classmethod
    def _unique(cls, value: list[Category]) -> list[Category]:
        _check_unique([c.name for c in value], "category")
        return value

    @property
    def dimensions(self) -> list[str]:
        return [c.name for c in self.categories]

    def scale_for(self, dimension: str) -> tuple[int, int] | None:
        return -self.k, self.k

    def criteria_text(self) -> str:
        return "\n".join(f"- {c.name}: {c.description}" for c in self.categories)

    def answer_fields(self) -> dict[str, object]:
        return {
            c.name: (int, Field(ge=-self.k, le=self.k, description=f"how much more {c.name} in A"))
            for c in self.categories
        }

    def answer_lines(self) -> tuple[list[str], dict[str, object]]:
        lines, _ = super().answer_lines()
        return lines, {c.name: 0 for c in self.categories}

    def label_guide(self, dimension: str) -> tuple[str, dict[str, str]]:
        category = next(c for c in self.categories if c.name == dimension)
        ends = {str(-self.k): "much more in B", "0": "as much in both", str(self.k): "much more in A"}
        return category.description, ends


class PreferenceRubric(_RubricBase):
    """Which of two responses is better: A or B (optionally a tie).

    Stored like a pairwise rubric with one category, ``preference``, scored
    +1 (A), -1 (B) or 0 (tie), so the symmetrized score is defined the same way.
    ``verdict_rules`` are named, ordered rule sets for free-text answers: the
    first rule whose pattern occurs anywhere in the answer decides.
    """

    kind: Literal["preference"]
    default_aggregation: ClassVar[str] = "majority"
    votes: ClassVar[bool] = True
    categorical: ClassVar[bool] = True
    allow_tie: bool = False
    verdict_rules: dict[str, list[VerdictRule]] = Field(default_factory=dict)

    placeholder_fields: ClassVar[frozenset[str]] = PAIRWISE_FIELDS
    pairwise: ClassVar[bool] = True

    continuous_labels: ClassVar[bool] = False

    @property
    def dimensions(self) -> list[str]:
        return ["preference"]

    def scale_for(self, dimension: str) -> tuple[int, int] | None:
        return -1, 1

    def human_choices(self, dimension: str) -> list[str]:
        # People may find two responses equally good even where jurors must choose: a human label
        # may always be a tie (``allow_tie`` governs the jurors' answers).
        return ["A", "B", "tie"]

    def answer_values(self) -> dict[str, dict[str, float]]:
        verdicts = {"A": 1.0, "B": -1.0}
        if self.allow_tie:
            verdicts["tie"] = 0.0
        return {"verdict": verdicts}

    def answer_fields(self) -> dict[str, object]:
        choices = ("A", "B", "tie") if self.allow_tie else ("A", "B")
        return {"verdict": (Literal[choices], Field(description="the better response"))}

    def answer_lines(self) -> tuple[list[str], dict[str, object]]:
        allowed = '"A", "B" or "tie"' if self.allow_tie else '"A" or "B"'
        return [f'- "verdict": {allowed}'], {"verdict": "A"}

    def scores_of(self, values: dict[str, Any]) -> dict[str, object]:
        return {"preference": PREFERENCE_SCORE[values["verdict"]]}

    def dimension_of_key(self, key: str) -> str:
        return "preference"

    def human_label(self, dimension: str, text: str, continuous: bool = False) -> tuple[float | None, str]:
        value = PREFERENCE_VALUES.get(text.lower())
        if value is None:  # a human may call it a tie even where the jurors must choose
            raise LabelRefused(f"{text!r} is not a preference.", "Use A, B or tie (or 1, -1, 0).")
        return value, {1.0: "A", -1.0: "B", 0.0: "tie"}[value]

    def label_guide(self, dimension: str) -> tuple[str, dict[str, str]]:
        choices = {"A": "response A is better", "B": "response B is better", "tie": "neither is better"}
        return self.description or "Which response is better?", choices


class Label(_Strict):
    """One label of a closed label set: a canonical name, its name per language, and aliases."""

    name: Annotated[str, Field(pattern=NAME_RE)]
    names: dict[str, str] = Field(default_factory=dict, description="the label as shown, per language")
    aliases: dict[str, list[str]] = Field(default_factory=dict, description="other accepted answers, per language")

    def shown(self, language: str) -> str:
        return self.names.get(language, self.name)


class ClassificationRubric(_RubricBase):
    """One label from a closed set per item. The answer is normalised (see
    :func:`jurybench.rubric.normalise_label`) and must match the label's name in the
    item's language, one of its aliases, or its canonical name; anything else is
    invalid. Gold labels are the items' ``reference`` (a canonical name, or a shown name)."""

    kind: Literal["classification"]
    answers_in_json: ClassVar[bool] = False
    reasks: ClassVar[int] = 0
    categorical: ClassVar[bool] = True
    rationale: bool = False
    labels: list[Label] = Field(min_length=2)
    answer: Literal["text", "json"] = Field(default="text", description='text: the label alone; json: {"label": ...}')

    placeholder_fields: ClassVar[frozenset[str]] = CLASSIFICATION_FIELDS
    continuous_labels: ClassVar[bool] = False

    keeps_gold: ClassVar[bool] = True

    def gold_of(self, reference: str, language: str | None) -> str | None:
        return _kind_behaviour(self.kind, "gold")(self, reference, language)  # type: ignore[no-any-return]

    def describe(self, language: str) -> list[str]:
        return ["labels: " + ", ".join(f"{lab.name} ({lab.shown(language)})" for lab in self.labels)]

    def human_choices(self, dimension: str) -> list[str]:
        return [label.name for label in self.labels]

    def human_label(self, dimension: str, text: str, continuous: bool = False) -> tuple[float | None, str]:
        """A label (no number): its canonical name, given in any language the rubric knows."""
        languages = sorted({lang for lb in self.labels for lang in (*lb.names, *lb.aliases)})
        label = next((found for lang in [None, *languages] if (found := self.gold_of(text, lang))), None)
        if label is None:
            raise LabelRefused(
                f"{text!r} is not a label of rubric '{self.name}'.",
                f"Valid: {', '.join(lb.name for lb in self.labels)}.",
            )
        return None, label

    @field_validator("labels")
    @classmethod
    def _unique(cls, value: list[Label]) -> list[Label]:
        _check_unique([label.name for label in value], "label")
        return value

    @model_validator(mode="after")
    def _unambiguous(self) -> ClassificationRubric:
        """Every accepted answer (name, shown name, alias; normalised) names one label only,
        in every language: an alias that is another label's name would make answers ambiguous."""
        from jurybench.rubric._labels import normalise_label

        languages = sorted({lang for label in self.labels for lang in (*label.names, *label.aliases)} | {""})
        for language in languages:
            owner: dict[str, tuple[str, str]] = {}
            for label in self.labels:
                answers = [("name", label.name)]
                if language:
                    answers.append((f"names.{language}", label.shown(language)))
                    answers += [(f"aliases.{language}", alias) for alias in label.aliases.get(language, [])]
                for field, text in answers:
                    key = normalise_label(text)
                    if not key:
                        raise ValueError(f"label '{label.name}': {field} {text!r} is empty once normalised")
                    other = owner.setdefault(key, (label.name, field))
                    if other[0] != label.name:
                        raise ValueError(
                            f"label '{label.name}': {field} {text!r} is also {other[1]} of label '{other[0]}'"
                            f"{f' ({language})' if language else ''}; an answer must name one label"
                        )
        return self

    @property
    def dimensions(self) -> list[str]:
        return ["label"]


class InventoryScale(_Strict):
    """The response scale: ``points`` numerals 1..points with a label each, per language.

    Scores are reported on the reference scale 1..``reference_points``; a questionnaire
    with another number of points is rescaled linearly: 1 + (s - 1) * (R - 1) / (P - 1)."""

    points: int = Field(ge=2, le=11)
    reference_points: int | None = Field(default=None, ge=2, le=11)
    labels: dict[str, list[str]]

    @model_validator(mode="after")
    def _labels_cover(self) -> InventoryScale:
        for language, labels in self.labels.items():
            if len(labels) != self.points:
                raise ValueError(f"labels '{language}' has {len(labels)} labels for a {self.points}-point scale")
            if len(set(labels)) != len(labels):
                raise ValueError(f"labels '{language}' repeats a label")
        return self

    @property
    def reference(self) -> int:
        return self.reference_points or self.points


class Facet(_Strict):
    name: Annotated[str, Field(pattern=NAME_RE)]
    factor: str | None = Field(default=None, description="the factor the facet belongs to; none: interstitial")
    description: str = ""


class InventoryItem(_Strict):
    id: Annotated[str, Field(pattern=NAME_RE)]
    facet: str
    reverse: bool = False
    text: dict[str, str] = Field(description="the statement per language; may use the questionnaire's placeholders")


class InventoryRubric(_RubricBase):
    """A questionnaire answered item by item on a labelled scale (observer or self report).

    Each call shows the items in a random order (``shuffle``) and, with ``rotation``, the
    scale's labels permuted over the numerals; both are drawn from the call's key, stated
    in the prompt, recorded with the call and mapped back, so every stored score is on the
    canonical, reference scale with reverse-keyed items reversed (R + 1 - s).
    ``placeholders`` fill item texts per language and per arm of ``treatment_variable``
    (e.g. pronouns that follow the target's gender)."""

    kind: Literal["inventory"]
    answers_in_json: ClassVar[bool] = False
    reasks: ClassVar[int] = 0
    judges_a_response: ClassVar[bool] = False
    rationale: bool = False
    scale: InventoryScale
    rotation: bool = True
    shuffle: bool = True
    treatment_variable: str | None = None
    placeholders: dict[str, dict[str, dict[str, str]]] = Field(
        default_factory=dict, description="language -> arm -> placeholder -> text"
    )
    facets: list[Facet] = Field(min_length=1)
    items: list[InventoryItem] = Field(min_length=2)
    answer_instructions: dict[str, str] = Field(
        default_factory=dict, description="per language: how to answer (default: an English line)"
    )

    placeholder_fields: ClassVar[frozenset[str]] = INVENTORY_FIELDS

    @model_validator(mode="after")
    def _consistent(self) -> InventoryRubric:
        _check_unique([i.id for i in self.items], "item")
        _check_unique([f.name for f in self.facets], "facet")
        facets = {f.name for f in self.facets}
        used: set[str] = set()
        for item in self.items:
            if item.facet not in facets:
                raise ValueError(f"item '{item.id}': facet '{item.facet}' is not declared under facets")
            used.add(item.facet)
            for language in self.templates:
                if language not in item.text:
                    raise ValueError(f"item '{item.id}' has no text for language '{language}'")
                for name in PLACEHOLDER_RE.findall(item.text[language]):
                    arms = self.placeholders.get(language, {})
                    if not arms or any(name not in values for values in arms.values()):
                        raise ValueError(
                            f"item '{item.id}' ({language}) uses {{{name}}}, which placeholders.{language} "
                            "does not define for every arm"
                        )
        empty = sorted(facets - used)
        if empty:
            raise ValueError(f"facet '{empty[0]}' has no items")
        for language in self.templates:
            if language not in self.scale.labels:
                raise ValueError(f"scale.labels has no labels for language '{language}'")
        if self.placeholders and not self.treatment_variable:
            raise ValueError("placeholders need treatment_variable (the treatment whose arm selects them)")
        all_arms = {arm for by_arm in self.placeholders.values() for arm in by_arm}
        for language in sorted(set(self.templates) | set(self.placeholders)):
            if not self.placeholders:
                break
            missing = sorted(all_arms - set(self.placeholders.get(language, {})))
            if missing:
                raise ValueError(
                    f"placeholders.{language} has no arm '{missing[0]}' (arms elsewhere: {', '.join(sorted(all_arms))})"
                )
            names = {name for values in self.placeholders[language].values() for name in values}
            for arm, values in self.placeholders[language].items():
                absent = sorted(names - set(values))
                if absent:
                    raise ValueError(f"placeholders.{language}.{arm} does not define '{absent[0]}'")
        return self

    @property
    def dimensions(self) -> list[str]:
        return [i.id for i in self.items]

    @property
    def factors(self) -> list[str]:
        return sorted({f.factor for f in self.facets if f.factor})

    presented_per_call: ClassVar[bool] = True

    def example_subject(self, language: str) -> dict[str, object]:
        """A target to report on, with the first arm of the treatment variable in ``language``."""
        arm = next(iter(self.placeholders.get(language, {})), None)
        treatment = json.dumps({self.treatment_variable: arm}) if arm and self.treatment_variable else None
        return {"item_id": "example", "response": "<target>", "language": language, "treatment": treatment}

    def describe(self, language: str) -> list[str]:
        return [
            f"  {item}: facet {facet}, factor {factor or '(interstitial)'}{', reversed' if reverse else ''}"
            for item, facet, factor, reverse in self.structure()
        ]

    def scale_for(self, dimension: str) -> tuple[int, int] | None:
        return 1, self.scale.points

    def structure(self) -> list[tuple[str, str, str | None, bool]]:
        """(item, facet, factor, reverse) for every item."""
        factor_of = {f.name: f.factor for f in self.facets}
        return [(i.id, i.facet, factor_of[i.facet], i.reverse) for i in self.items]


AnyRubric = _RubricBase  # a rubric of any registered kind (a plug-in's too): what a kind decides, it says
Rubric = Annotated[
    PointwiseRubric | ConversationRubric | PairwiseRubric | PreferenceRubric | ClassificationRubric | InventoryRubric,
    Field(discriminator="kind"),
]

# The built-in kinds (registered in rubric/_kinds.py as a plug-in's are). The store keys
# judgments by how a kind judges: classification and inventory rubrics are judged item by item
# like pointwise ones (their rows live in pointwise_judgments).
KINDS = ("pointwise", "conversation", "pairwise", "preference", "classification", "inventory")


def is_pairwise(rubric: object) -> bool:
    """Whether ``rubric`` (any spec: a generation spec is not) judges pairs."""
    return getattr(rubric, "pairwise", False) is True


def _check_unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{what} '{name}' is listed twice")
        seen.add(name)
