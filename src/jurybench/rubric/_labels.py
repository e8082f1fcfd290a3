"""A label as an answer gives it, normalised (docs/rubrics.md): Unicode NFKC, case folded,
surrounding whitespace, quotes and final punctuation removed, inner whitespace collapsed, one
leading "label:"/"answer:" prefix dropped."""

from __future__ import annotations

import re
import unicodedata

_EDGE = " \t\r\n\"'`“”„‘’«»「」『』.,;:!?。、！？"
_PREFIX_RE = re.compile(r"^(?:label|answer|emotion|category)\s*[:：]\s*", re.IGNORECASE)


def normalise_label(text: str) -> str:
    value = unicodedata.normalize("NFKC", text).casefold().strip(_EDGE)
    value = _PREFIX_RE.sub("", value).strip(_EDGE)
    return re.sub(r"\s+", " ", value)
