"""Generation specs: prompts x treatments x models x samples, validated like rubrics.

A spec is YAML (the ``generation:`` section of a study file, or a file of its own):

.. code-block:: yaml

    name: letters                      # the study: items get dataset = name
    prompts: prompts.csv               # prompt_id, prompt[, language][, other columns -> metadata]
    system: You write short letters.
    user: "Write to {recipient_gender}: {prompt}"
    treatments:
      recipient_gender:
        arms: [female, male]
        text: {female: a woman, male: a man}   # what {recipient_gender} renders as
    models: [sim/writer-a, "openai/gpt-4o-mini,temperature=0.7"]
    samples: 1
    temperature: 0.7                   # default for models that do not set it
    refusal: {exclusion: prompt}       # or response (default); patterns: [regex, ...]

The content hash covers what reaches the model (the templates and the treatment texts),
so calls are cached across runs exactly when the request would be the same.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cached_property
from itertools import product
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from jurybench.rubric import PLACEHOLDER_RE, KindTraits, Template

# Opening phrases of a refusal, in the languages the shipped studies use. Matched
# against the start of a response (first 300 characters), case-insensitively.
DEFAULT_REFUSAL_PATTERNS = [
    r"^\W*(?:I'?m|I am) (?:sorry|afraid)\b.{0,80}\b(?:can(?:no|')t|won't|will not|unable|not able)",
    r"^\W*I (?:can(?:no|')t|won't|will not|am unable to|'m unable to|am not able to) "
    r"(?:help|assist|write|create|provide|comply|do that|fulfil|fulfill|produce|generate)",
    r"^\W*(?:Sorry|Unfortunately),? (?:but )?I (?:can(?:no|')t|won't|will not|am unable)",
    r"^\W*As an AI\b",
    r"^\W*Es tut mir leid,? (?:aber )?ich kann",
    r"^\W*Ich kann (?:Ihnen |dir )?(?:dabei |hierbei )?nicht (?:helfen|behilflich)",
    r"^\W*Lo siento,? (?:pero )?no puedo",
    r"^\W*(?:Je suis désolé|Désolé),? (?:mais )?je ne peux pas",
    r"^\W*申し訳(?:ありません|ございません)",
    r"^\W*抱歉",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Variable(_Strict):
    """A treatment variable: its arms, how each renders in the prompt, whether it sets the language."""

    arms: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]] = Field(min_length=2)
    text: dict[str, str] = Field(default_factory=dict, description="arm -> text for {variable} (default: the arm)")
    sets_language: bool = Field(default=False, description="the arm is the response's language code")

    @model_validator(mode="after")
    def _check(self) -> Variable:
        if len(set(self.arms)) != len(self.arms):
            raise ValueError("an arm is listed twice")
        unknown = sorted(set(self.text) - set(self.arms))
        if unknown:
            raise ValueError(f"text names arm '{unknown[0]}', which is not in arms {self.arms}")
        return self


class RefusalPolicy(_Strict):
    patterns: list[str] | None = Field(default=None, description="regular expressions; default: built-in list")
    exclusion: Literal["response", "prompt"] = Field(
        default="response",
        description="response: a refused response is dropped (and its pairs); prompt: a prompt any model "
        "refused is dropped for every model, so models are compared on the same prompts",
    )

    @field_validator("patterns")
    @classmethod
    def _compile(cls, value: list[str] | None) -> list[str] | None:
        for pattern in value or []:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from exc
        return value

    @cached_property
    def compiled(self) -> list[re.Pattern[str]]:
        return [re.compile(p, re.IGNORECASE) for p in (self.patterns or DEFAULT_REFUSAL_PATTERNS)]


class GenerationSpec(_Strict, KindTraits):
    kind: Literal["generation"] = "generation"
    # What the engine asks of what it runs, answered as a rubric kind answers it: a response in
    # text, no re-asks (refusals and empty responses are measured), one item at a time.
    generates: ClassVar[bool] = True
    answers_in_json: ClassVar[bool] = False
    reasks: ClassVar[int] = 0
    judges_a_response: ClassVar[bool] = False
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$")]
    version: str = "1"
    description: str = ""
    prompts: str | None = Field(default=None, description="prompt file, relative to the spec file")
    system: str = ""
    user: str = "{prompt}"
    templates: dict[str, Template] = Field(default_factory=dict, description="per response language, overriding")
    treatments: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")], Variable] = Field(min_length=1)
    pair_on: list[str] | None = Field(default=None, description="variables whose arms are linked as pairs")
    models: list[str | dict[str, object]] = Field(default_factory=list)
    samples: int = Field(default=1, ge=1, le=100)
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    refusal: RefusalPolicy = Field(default_factory=RefusalPolicy)

    @model_validator(mode="after")
    def _check(self) -> GenerationSpec:
        allowed = {"prompt", "language", *self.treatments}
        texts = [("system", self.system), ("user", self.user)]
        texts += [
            (f"templates.{k}.{part}", getattr(t, part))
            for k, t in self.templates.items()
            for part in ("system", "user")
        ]
        for where, text in texts:
            for name in PLACEHOLDER_RE.findall(text):
                if name not in allowed and not (name.startswith("meta.") and len(name) > 5):
                    raise ValueError(
                        f"{where}: unknown placeholder {{{name}}}; valid: "
                        + ", ".join("{" + a + "}" for a in sorted(allowed))
                        + " or {meta.<prompt column>}"
                    )
        for variable in self.pair_on or []:
            if variable not in self.treatments:
                raise ValueError(f"pair_on names '{variable}', which is not a treatment variable")
        if sum(v.sets_language for v in self.treatments.values()) > 1:
            raise ValueError("only one treatment variable can set the language")
        return self

    @property
    def dimensions(self) -> list[str]:
        return []

    @property
    def pair_variables(self) -> list[str]:
        return list(self.pair_on) if self.pair_on is not None else list(self.treatments)

    @property
    def language_variable(self) -> str | None:
        return next((k for k, v in self.treatments.items() if v.sets_language), None)

    @cached_property
    def content_hash(self) -> str:
        """sha256 over what reaches the model: templates and treatment texts (not models, prompts, refusal rules)."""
        body = self.model_dump(mode="json", include={"kind", "system", "user", "templates", "treatments"})
        return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def arms(self) -> list[dict[str, str]]:
        """Every combination of arms, variables in spec order."""
        names = list(self.treatments)
        return [dict(zip(names, combo, strict=True)) for combo in product(*(self.treatments[n].arms for n in names))]

    def is_refusal(self, text: str, finish_reason: str | None, signal: str | None = None) -> str | None:
        """Why a response is a refusal (the provider's signal, or a matching pattern), or None."""
        if signal:
            return f"provider refusal: {signal[:120]}"
        if finish_reason == "content_filter":
            return "provider content filter"
        head = text.strip()[:300]
        for pattern in self.refusal.compiled:
            if pattern.search(head):
                return f"matches refusal pattern {pattern.pattern[:60]!r}"
        return None


def load_spec_file(path: Path) -> tuple[GenerationSpec, dict[str, object]]:
    """A spec file (or a study file's 'generation' section): the spec and the whole YAML mapping."""
    from pydantic import ValidationError

    from jurybench.errors import JurybenchError
    from jurybench.rubric import line_of, read_yaml

    if not path.exists():
        raise JurybenchError(f"{path}: no such file.")
    data, root = read_yaml(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(data, dict):
        raise JurybenchError(f"{path}: a generation spec must be a YAML mapping.")
    section, prefix = (data["generation"], ("generation",)) if isinstance(data.get("generation"), dict) else (data, ())
    body = dict(section)
    body.setdefault("name", data.get("name"))
    try:
        spec = GenerationSpec.model_validate(body)
    except ValidationError as exc:
        err = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        loc = prefix + tuple(err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        named = re.match(r"([a-z_][a-z0-9_.]*): (.*)", message)
        if not err["loc"] and named:  # a whole-spec check names its field first: point at it
            loc, message = prefix + tuple(named.group(1).split(".")), named.group(2)
        field = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            message = "unknown key; valid keys: " + ", ".join(sorted(GenerationSpec.model_fields))
        raise JurybenchError(
            f"{path}{line_of(root, loc)}, field '{field}': {message}.",
            hint="See docs/studies.md for the generation format.",
        ) from None
    return spec, data
