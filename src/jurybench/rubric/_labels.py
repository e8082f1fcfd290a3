"""A label as an answer gives it, normalised (docs/rubrics.md): Unicode NFKC, case folded,
surrounding whitespace, quotes and final punctuation removed, one leading list marker dropped
("- joy", "* joy", "• joy", "1. joy", "2) joy": the prompt lists the labels as a list, and a
small model copies the marker), inner whitespace collapsed, one leading "label:"/"answer:"
prefix dropped. The same rule reads jurors' answers, gold labels and human labels."""

from __future__ import annotations

import re
import unicodedata

_EDGE = " \t\r\n\"'`“”„‘’«»「」『』.,;:!?。、！？"
_PREFIX_RE = re.compile(r"^(?:label|answer|emotion|category)\s*[:：]\s*", re.IGNORECASE)
_MARKER_RE = re.compile(r"^(?:[-*•–—]|\d{1,2}[.)])\s+")


def normalise_label(text: str) -> str:
    value = unicodedata.normalize("NFKC", text).casefold().strip(_EDGE)
    value = _MARKER_RE.sub("", value, count=1).strip(_EDGE)
    value = _PREFIX_RE.sub("", value).strip(_EDGE)
    return re.sub(r"\s+", " ", value)
