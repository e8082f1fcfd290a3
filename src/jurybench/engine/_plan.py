"""Planning a run: the tasks (one call each) for subjects and jurors, their cache keys, and the
checks on jurors before anything is opened or written."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.jurors import REQUEST_FORMATS, STRUCTURED_MODES, JurorSpec, check_jurors
from jurybench.rubric import (
    AnyRubric,
    PreferenceRubric,
    is_pairwise,
)

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass
class Task:
    call_key: str
    juror: JurorSpec
    subject_id: str
    order: str
    sample_index: int
    messages: list[dict[str, str]]
    language: str | None = None
    presentation: str | None = None  # questionnaires: the order and rotation shown (JSON)


# Subjects planned, checked against the cache and judged at a time: memory stays flat as runs grow.
CHUNK = 2000


# Opens the store for reading for a moment (a context manager yielding a connection).
Reader = Callable[[], AbstractContextManager[Any]]


@dataclass
class Planned:
    """What a run will do: subject and task counts up front, the tasks themselves a chunk at a
    time. ``chunks(reader)`` reads each chunk's subjects from the store as it comes (``reader``
    opens it for that moment), so no run holds all its subjects or tasks."""

    n_subjects: int
    n_tasks: int
    chunks: Callable[[Reader], Iterator[list[Task]]]
    subject_ids: list[str] | None = None
    write: Callable[[Any], None] | None = None  # what planning records in the store (under the write lock)
    n_empty: int = 0  # subjects with an empty response (an item's, or either side of a pair's)

    @classmethod
    def of(cls, tasks: list[Task], n_subjects: int) -> Planned:
        return cls(n_subjects, len(tasks), lambda _reader: iter([tasks]), sorted({t.subject_id for t in tasks}))


def call_key(rubric_hash: str, juror_key: str, subject_id: str, order: str, sample: int, fitted: str = "") -> str:
    """A call's cache key. ``fitted``: the digest of a conversation cut to the juror's context
    (rubric/_transcript.py), so a call shown another cut (another budget) is another call; empty
    for everything shown whole, whose keys are what they always were."""
    raw = f"{rubric_hash}\x1f{juror_key}\x1f{subject_id}\x1f{order}\x1f{sample}"
    if fitted:
        raw += f"\x1f{fitted}"
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class Fitted:
    """A subject fitted to one juror's context: the subject to render (with its cut
    conversations), what was cut (JSON for ``calls.presentation``, None: shown whole) and the
    digest the call key takes."""

    subject: dict[str, Any]
    presentation: str | None = None
    digest: str = ""


@dataclass(frozen=True)
class Context:
    """A juror's context in tokens, where it comes from, and the tokens kept for its answer."""

    tokens: int
    source: str
    reserve: int


def juror_context(juror: JurorSpec) -> Context | None:
    """The context a juror's conversations are fitted to (None: nothing to fit), read once a plan."""
    from jurybench.jurors import answer_reserve, context_budget

    found = context_budget(juror)
    return None if found is None else Context(found[0], found[1], answer_reserve(juror, found[0]))


def fit_subject(rubric: AnyRubric, subject: dict[str, Any], context: Context | None) -> Fitted:
    """``subject``'s conversations cut to what a juror's ``context`` leaves them: the context less
    the answer's reserve and the rest of the prompt (rendered with the conversations empty), in
    characters at CHARS_PER_TOKEN, shared equally by a pair's two sides."""
    import json

    from jurybench.rubric import CHARS_PER_TOKEN, fitted_digest, messages_of, render_transcript

    if context is None:
        return Fitted(subject)
    sides = ("_a", "_b") if is_pairwise(rubric) else ("",)
    bare = {**subject, **{f"fitted{side}": "" for side in sides}}
    frame = sum(len(str(m.get("content") or "")) for m in rubric.render(bare, "AB" if sides != ("",) else "")[0])
    room = (context.tokens - context.reserve) * CHARS_PER_TOKEN - frame
    per_side = max(0, room // len(sides))
    texts, cuts = {}, {}
    for side in sides:
        messages = messages_of(
            subject.get(f"conversation{side}"), subject.get("prompt"), subject.get(f"response{side}")
        )
        texts[side], elision = render_transcript(messages, per_side)
        if elision is not None:
            cuts[side.strip("_") or "conversation"] = elision.as_dict()
    if not cuts:
        return Fitted(subject)
    shown = json.dumps({"context_tokens": context.tokens, "context_from": context.source, "cut": cuts}, sort_keys=True)
    return Fitted(
        {**subject, **{f"fitted{side}": text for side, text in texts.items()}},
        shown,
        fitted_digest([texts[side] for side in sides]),
    )


ORDERS = ("both", "one", "random")


def orders_of(pair_id: str, orders: str, seed: int) -> tuple[str, ...]:
    """The orders a pair is shown in: both; one (item_a first); random (one drawn from the seed and
    the pair's id, so the same pair gets the same order in every run with that seed)."""
    if orders == "both":
        return ("AB", "BA")
    if orders == "one":
        return ("AB",)
    digest = hashlib.sha256(f"{seed}\x1f{pair_id}".encode()).digest()
    return ("AB",) if digest[0] % 2 == 0 else ("BA",)


@dataclass(frozen=True)
class RunDesign:
    """What a run judges and how, decided once from its rubric and options: pairs (in which
    orders) or items, judgments or generated responses."""

    pairwise: bool
    generating: bool = False
    orders: str = "both"
    order_seed: int = 0

    @classmethod
    def of(cls, rubric: AnyRubric, orders: str = "both", order_seed: int = 0) -> RunDesign:
        """The design of a run of ``rubric`` (its orders checked: one line when not valid)."""
        check_orders(orders, rubric)
        return cls(is_pairwise(rubric), rubric.generates, orders, order_seed)

    @property
    def subjects(self) -> str:
        """What is judged: 'pairs' or 'items'."""
        return "pairs" if self.pairwise else "items"

    @property
    def shown(self) -> int:
        """How many times one sample of a juror sees a subject: a pair in both orders twice."""
        return 2 if self.pairwise and self.orders == "both" else 1

    @property
    def one_order(self) -> bool:
        """Pairs shown in one order each (position bias cannot be measured)."""
        return self.pairwise and self.orders != "both"

    @property
    def mode(self) -> str:
        """``runs.mode``: pairwise, generation or pointwise."""
        return "pairwise" if self.pairwise else ("generation" if self.generating else "pointwise")

    @property
    def stored(self) -> tuple[str, int | None]:
        """``runs.orders`` and ``runs.order_seed`` (a seed only where it draws the orders)."""
        return (self.orders if self.pairwise else "both", self.order_seed if self.orders == "random" else None)

    def resumes(self, orders: str | None, order_seed: int | None) -> bool:
        """Whether a stored run judged with ``orders`` / ``order_seed`` is this design's to resume."""
        if not self.pairwise:
            return True
        stored = (orders or "both", (order_seed or 0) if orders == "random" else 0)
        return stored == (self.orders, self.order_seed if self.orders == "random" else 0)


def check_orders(orders: str, rubric: AnyRubric) -> None:
    if orders not in ORDERS:
        raise JurybenchError(f"--orders {orders!r} is not valid.", hint=f"Valid: {', '.join(ORDERS)}.")
    if orders != "both" and not is_pairwise(rubric):
        raise JurybenchError(
            f"--orders {orders}: items are judged alone; orders are for pairwise and preference rubrics."
        )


def plan_tasks(
    rubric: AnyRubric,
    jurors: list[JurorSpec],
    subjects: list[dict[str, Any]],
    orders: str = "both",
    order_seed: int = 0,
) -> list[Task]:
    """Every (juror, subject, order, sample); pairwise subjects in the design's orders (both by
    default). A questionnaire is shown in an order and rotation drawn from each call's key, so
    every call has its own."""
    tasks = []
    pairwise = is_pairwise(rubric)
    rubric_hash = rubric.content_hash
    # each juror's context, read once (litellm's model map is consulted for it), not per subject
    contexts = {j.key: juror_context(j) for j in jurors} if rubric.conversation_fields else {}
    for subject in subjects:
        sid = subject[rubric.subject_column]
        language = subject.get("language")
        shown_in = orders_of(str(sid), orders, order_seed) if pairwise else ("",)
        # One rendering per order, shared by every juror and sample (a questionnaire renders per call;
        # a conversation per juror context it is cut to).
        shared = (
            {}
            if rubric.presented_per_call or rubric.conversation_fields
            else {order: rubric.render(subject, order) for order in shown_in}
        )
        fits: dict[Context | None, tuple[Fitted, dict[str, Any]]] = {}  # jurors of one context share a fit
        for juror in jurors:
            fit, rendered = Fitted(subject), shared
            if rubric.conversation_fields:
                at = contexts[juror.key]
                if at not in fits:
                    made = fit_subject(rubric, subject, at)
                    fits[at] = (made, {order: rubric.render(made.subject, order) for order in shown_in})
                fit, rendered = fits[at]
            for order in shown_in:
                for sample in range(juror.samples):
                    key = call_key(rubric_hash, juror.key, sid, order, sample, fit.digest)
                    messages, shown = rendered[order] if rendered else rubric.render(subject, order, key)
                    tasks.append(Task(key, juror, sid, order, sample, messages, language, shown or fit.presentation))
    return tasks


def validate_jurors(rubric: AnyRubric, jurors: list[JurorSpec], *, need_keys: bool = True) -> None:
    """Each juror's parameters against the rubric and its provider (an empty jury is Jury.resolved's
    to refuse); API keys only when calls will be made (a plan needs none)."""
    keys = Counter(j.key for j in jurors)
    check_jurors(jurors, need_keys=need_keys)  # the missing API keys of the whole jury at once
    for juror in jurors:
        if keys[juror.key] > 1:
            raise JurybenchError(
                f"juror '{juror.display_name}' is listed twice with the same parameters.",
                hint="Use samples=N to ask one juror several times.",
            )
        rules = juror.params.get("verdicts")
        if rules is not None:
            if not isinstance(rubric, PreferenceRubric):
                raise JurybenchError(f"juror '{juror.display_name}': verdicts= applies to preference rubrics only.")
            if rules not in rubric.verdict_rules:
                raise JurybenchError(
                    f"juror '{juror.display_name}': rubric '{rubric.name}' has no verdict rule set '{rules}'.",
                    hint=f"Valid: {', '.join(sorted(rubric.verdict_rules)) or 'none defined'}.",
                )
        for name, valid in (
            ("structured", STRUCTURED_MODES),
            ("response_format", REQUEST_FORMATS),
            ("scores", ("discrete", "expected")),
        ):
            value = juror.params.get(name, valid[0])
            if value not in valid:
                raise JurybenchError(
                    f"juror '{juror.display_name}': {name}={value!r} is not valid.", hint=f"Valid: {', '.join(valid)}."
                )
        structured = juror.params.get("structured", "auto")
        for name, value in (("structured", structured), ("scores", juror.params.get("scores", "discrete"))):
            if value in ("instructor", "schema", "expected") and not rubric.answers_in_json:
                raise JurybenchError(
                    f"juror '{juror.display_name}': {name}={value} is for rubrics answered in JSON (pointwise, "
                    f"pairwise, preference, ...); {rubric.kind} answers are read as text.",
                )
        if juror.params.get("verdicts") and (
            structured in ("schema", "instructor") or juror.params.get("scores") == "expected"
        ):
            raise JurybenchError(
                f"juror '{juror.display_name}': verdicts= reads free text; it cannot go with structured={structured} "
                "or scores=expected.",
                hint="Drop verdicts= to have the answer in JSON.",
            )
        if juror.params.get("scores") == "expected" and structured == "instructor":
            raise JurybenchError(
                f"juror '{juror.display_name}': scores=expected reads the answer's tokens, which instructor does not "
                "pass on.",
                hint="Use structured=schema or structured=json with scores=expected.",
            )


def check_batch_jurors(jurors: list[JurorSpec]) -> None:
    """``--batch``: every juror that calls a provider must have a batch API jurybench speaks."""
    from jurybench.jurors import check_batch_juror

    for spec in jurors:
        check_batch_juror(spec)
    missing = batch_protocol_problems(jurors)
    if missing:
        raise JurybenchError(
            f"--batch: {', '.join(missing)} has no batch API that jurybench speaks (OpenAI files + batches, "
            "Anthropic message batches).",
            hint="If its endpoint implements OpenAI's batch API, add batch_api=openai to the juror; otherwise run "
            "without --batch.",
        )


def batch_protocol_problems(jurors: Sequence[JurorSpec]) -> list[str]:
    """Jurors that call a provider but have no batch API jurybench speaks (offline jurors answer
    at once and need none)."""
    from jurybench.jurors import is_offline, protocol_of

    return [
        f"juror '{spec.display_name}' ({spec.model})"
        for spec in jurors
        if not is_offline(spec.model) and protocol_of(spec) is None
    ]
