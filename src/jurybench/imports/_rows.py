"""The rows an HTTP body carries inline where the command line reads a file: human labels and
judgments made elsewhere (pydantic models, strict about unknown fields). Declared parameters
name them as their HTTP type (``http_type="jurybench.imports:LabelRows"``), so the body of
``POST /v1/annotations`` and ``POST /v1/judgments`` is derived from the same declaration as the
command line's ``annotations import`` and ``judgments import``. Imported only when a body is made."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


# One human label (long layout): the subject, who labelled it, the criterion and the value. (No
# docstring: it would be the schema's description in the OpenAPI document.)
class LabelIn(_Row):
    subject_id: Annotated[str, Field(min_length=1, max_length=256)]
    annotator: Annotated[str, Field(min_length=1, max_length=128)]
    criterion: Annotated[str, Field(min_length=1, max_length=128)]
    value: float | int | str


Value = float | int | str | None


class JudgmentIn(_Row):
    """One judgment made elsewhere (the columns of 'jurybench judgments import')."""

    item_id: Annotated[str, Field(max_length=256)] | None = None
    pair_id: Annotated[str, Field(max_length=256)] | None = None
    criterion: Annotated[str, Field(max_length=128)] | None = None
    score: Value = None
    verdict: Annotated[str, Field(max_length=8)] | None = None
    p_b: Value = None
    shown: Annotated[str, Field(max_length=2)] | None = None
    sample: Value = None
    raw: Annotated[str, Field(max_length=200_000)] | None = None
    reason: Annotated[str, Field(max_length=2000)] | None = None
    status: Annotated[str, Field(max_length=16)] | None = None
    cost_usd: Value = None
    model: Annotated[str, Field(max_length=256)] | None = None


LabelRows = list[LabelIn]
JudgmentRows = list[JudgmentIn]
