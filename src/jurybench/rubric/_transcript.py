"""A conversation as a judge reads it, fitted to the judge's context (docs/conversations.md).

A template's ``{conversation}`` (``{conversation_a}`` / ``{conversation_b}`` for a pair) is the
subject's messages in order, each headed by its position and role, an assistant's tool calls as
``-> call TOOL(ARGUMENTS)`` lines, a tool result headed by the tool and the call it answers. A
single-response item reads as a conversation of two messages: its prompt, then its response.

When the whole conversation does not fit the characters the juror's context leaves for it, it
is cut in this order, every cut marked where it was made, until it fits:

1. every tool result longer than ``RESULT_CHARS`` keeps its first two thirds and last third of
   that length, the rest replaced by ``[... N characters of this result cut ...]``;
2. whole messages are elided from the middle of the conversation outwards (of two equally near
   the middle, the later first), never the first system message, the task (the first user
   message) or the final answer (the last assistant text); a run of elided messages becomes one
   marker ``[... messages 5-18 elided (14 messages) ...]`` that still lists every tool call they
   made, its arguments cut to ``ARGUMENT_CHARS``;
3. if the kept messages alone are too long, each is cut to an equal share (head and tail), and
   the markers' lists of calls are shortened to a count;
4. last, the middle of the text is cut to the budget, marked (its start and end stay; no prompt
   exceeds the budget).

What was cut is returned as an :class:`Elision` (stored with the call, in ``calls.presentation``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

RESULT_CHARS = 2_000
ARGUMENT_CHARS = 300
# Characters a token, when fitting: fewer than the ~4 the cost estimate uses, so a prompt fitted
# to a budget stays under it in a real tokenizer's count for most text (code and JSON run ~3).
CHARS_PER_TOKEN = 3


@dataclass
class Elision:
    """What fitting a conversation cut: message positions elided whole, tool results shortened,
    messages cut to a share, and characters cut at the end; with the budget it was fitted to."""

    budget_chars: int
    full_chars: int
    shown_chars: int = 0
    elided: list[int] = field(default_factory=list)
    results_cut: list[int] = field(default_factory=list)
    shortened: list[int] = field(default_factory=list)
    end_cut: int = 0  # characters cut from the middle of the text at the last step

    def as_dict(self) -> dict[str, Any]:
        return {
            "budget_chars": self.budget_chars,
            "full_chars": self.full_chars,
            "shown_chars": self.shown_chars,
            "messages_elided": self.elided,
            "results_cut": self.results_cut,
            "messages_shortened": self.shortened,
            "last_cut_chars": self.end_cut,
        }


def messages_of(subject: Any, prompt: Any = None, response: Any = None) -> list[Any]:
    """A subject's messages: a conversation's, or a single response as user then assistant."""
    from jurybench.store import Message

    if subject is not None:
        return list(getattr(subject, "messages", subject))
    out = []
    if prompt:
        out.append(Message("user", str(prompt)))
    out.append(Message("assistant", "" if response is None else str(response)))
    return out


def _arguments(call: Any, limit: int | None) -> str:
    text = str(call.arguments_text)
    if limit is not None and len(text) > limit:
        return text[:limit] + f" [... {len(text) - limit:,} characters cut]"
    return text


def _cut(text: str, keep: int, what: str) -> str:
    """``text`` to about ``keep`` characters: its first two thirds and last third, the middle marked."""
    if len(text) <= keep:
        return text
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    return f"{text[:head]}\n[... {len(text) - head - tail:,} characters of this {what} cut ...]\n{text[len(text) - tail :]}"


def block(position: int, m: Any, text: str | None = None) -> str:
    """One message as the judge reads it (``text``: its content as fitted, if not whole)."""
    content = m.content if text is None else text
    if m.role == "tool":
        name = f" {m.name}" if m.name else ""
        answers = f" (answers {m.tool_call_id})" if m.tool_call_id else ""
        head = f"[{position + 1}] tool{name}{answers}:"
    else:
        head = f"[{position + 1}] {m.role}:"
    if not m.tool_calls:
        return f"{head}\n{content}" if content else head
    lines = [head, content] if content else [head]
    for call in m.tool_calls:
        lines.append(f"-> call {call.tool}({call.arguments_text})" + (f" [{call.call_id}]" if call.call_id else ""))
    return "\n".join(lines)


def _marker(first: int, last: int, messages: Sequence[Any], with_calls: bool) -> str:
    n = last - first + 1
    calls = [c for m in messages[first : last + 1] for c in m.tool_calls]
    span = f"message {first + 1}" if n == 1 else f"messages {first + 1}-{last + 1}"
    text = f"[... {span} elided ({n} message{'s' if n != 1 else ''})"
    if calls and with_calls:
        shown = "; ".join(f"{c.tool}({_arguments(c, ARGUMENT_CHARS)})" for c in calls)
        text += f"; their tool calls: {shown}"
    elif calls:
        text += f", with {len(calls)} tool call{'s' if len(calls) != 1 else ''}"
    return text + " ...]"


def _join(messages: Sequence[Any], texts: list[str | None], elided: set[int], with_calls: bool = True) -> str:
    if not elided:
        return "\n\n".join([block(k, m, texts[k]) for k, m in enumerate(messages)])
    parts: list[str] = []
    k = 0
    while k < len(messages):
        if k in elided:
            last = k
            while last + 1 in elided:
                last += 1
            parts.append(_marker(k, last, messages, with_calls))
            k = last + 1
            continue
        parts.append(block(k, messages[k], texts[k]))
        k += 1
    return "\n\n".join(parts)


def render_transcript(messages: Sequence[Any], budget_chars: int | None = None) -> tuple[str, Elision | None]:
    """The messages as text, fitted to ``budget_chars`` (None: whole) by the module's policy; the
    Elision is None when nothing was cut."""
    texts: list[str | None] = [m.content for m in messages]
    whole = _join(messages, texts, set())
    if budget_chars is None or len(whole) <= budget_chars:
        return whole, None
    budget = max(budget_chars, 0)
    cut = Elision(budget_chars=budget, full_chars=len(whole))
    for k, m in enumerate(messages):  # 1. long tool results
        if m.role == "tool" and m.content and len(m.content) > RESULT_CHARS:
            texts[k] = _cut(m.content, RESULT_CHARS, "result")
            cut.results_cut.append(k)
    elided: set[int] = set()
    text = _join(messages, texts, elided)
    if len(text) > budget:  # 2. middle messages, outwards
        kept = _protected(messages)
        middle = (len(messages) - 1) / 2
        order = sorted((k for k in range(len(messages)) if k not in kept), key=lambda k: (abs(k - middle), -k))
        sizes = [len(block(k, m, texts[k])) + 2 for k, m in enumerate(messages)]
        estimate = len(text)
        for k in order:
            elided.add(k)
            estimate -= sizes[k]
            if estimate <= budget:
                text = _join(messages, texts, elided)
                estimate = len(text)  # the markers' own length, now counted
                if estimate <= budget:
                    break
        text = _join(messages, texts, elided)
    if len(text) > budget:  # 3. the kept messages to equal shares, the markers to counts
        shown = [k for k in range(len(messages)) if k not in elided]
        frame = len(_join(messages, [""] * len(messages), elided, with_calls=False))
        share = max(40, (budget - frame) // max(len(shown), 1))
        for k in shown:
            if texts[k] and len(texts[k] or "") > share:
                texts[k] = _cut(texts[k] or "", share, "message")
                cut.shortened.append(k)
        text = _join(messages, texts, elided, with_calls=False)
    if len(text) > budget:  # 4. at the budget: the middle of what is left, so its start and end stay
        marker = "\n[... cut to fit the judge's context ...]\n"
        keep = max(0, budget - len(marker))
        head, tail = keep // 2, keep - keep // 2
        cut.end_cut = len(text) - keep
        text = (text[:head] + marker + text[len(text) - tail :])[:budget] if keep else ""
    cut.elided = sorted(elided)
    cut.results_cut = sorted(set(cut.results_cut) - elided)
    cut.shown_chars = len(text)
    return text, cut


def _protected(messages: Sequence[Any]) -> set[int]:
    """Never elided: the first system message, the task (the first user message), the final answer."""
    kept = set()
    for role in ("system", "user"):
        first = next((k for k, m in enumerate(messages) if m.role == role), None)
        if first is not None:
            kept.add(first)
    final = next(
        (
            k
            for k in range(len(messages) - 1, -1, -1)
            if messages[k].role == "assistant" and (messages[k].content or "").strip()
        ),
        None,
    )
    if final is not None:
        kept.add(final)
    return kept


def fitted_digest(texts: Sequence[str]) -> str:
    """What a cut call was shown, hashed into its cache key (a changed budget is another call)."""
    return hashlib.sha256("\x1e".join(texts).encode()).hexdigest()[:16]
