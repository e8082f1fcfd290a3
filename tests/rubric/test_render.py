from __future__ import annotations

import pytest

from jurybench.errors import JurybenchError
from jurybench.rubric import load_rubric, parse_rubric, render_pairwise, render_pointwise

PAIR = {
    "pair_id": "p1",
    "prompt": "Do X",
    "response_a": "alpha text",
    "response_b": "beta text",
    "language": "en",
}


def test_pairwise_orders_swap_the_shown_responses() -> None:
    rubric = load_rubric("preference")
    ab = render_pairwise(rubric, PAIR, "AB")[-1]["content"]
    ba = render_pairwise(rubric, PAIR, "BA")[-1]["content"]
    assert ab.index("alpha text") < ab.index("beta text")
    assert ba.index("beta text") < ba.index("alpha text")
    assert '"verdict": "A" or "B"' in ab


def test_language_picks_the_template() -> None:
    ko = render_pairwise(load_rubric("preference"), {**PAIR, "language": "ko"}, "AB")
    assert "지시" in ko[-1]["content"] and "두 응답" in ko[0]["content"]


def test_pointwise_renders_criteria_and_meta() -> None:
    rubric = parse_rubric(
        """
name: tiny
kind: pointwise
criteria:
  - {name: clarity, description: how clear, scale: {min: 1, max: 2}, anchors: {1: muddled, 2: clear}}
templates:
  en: {system: "Be fair.", user: "For {meta.audience}: {response}\\n{criteria}\\n{answer_format}"}
"""
    )
    item = {"item_id": "i1", "response": "Hello", "metadata": {"audience": "kids"}}
    messages = render_pointwise(rubric, item)
    assert messages[0] == {"role": "system", "content": "Be fair."}
    user = messages[1]["content"]
    assert user.startswith("For kids: Hello\nclarity (1..2): how clear\n  1: muddled\n  2: clear")
    assert user.count("Reply with a single JSON object") == 1
    with pytest.raises(JurybenchError, match=r"item i1: .* no metadata field 'audience'"):
        render_pointwise(rubric, {"item_id": "i1", "response": "Hello"})


def test_item_text_reaches_the_model_byte_for_byte() -> None:
    # Braces in item text are data: "{{x}}", "}}" and "{response}" must not be unescaped or filled.
    tricky = "Use {{name}} and }} and {response} and {{ {meta.x} }}\n\ttabs ✓"
    item = {"item_id": "i1", "prompt": "p {{x}}", "response": tricky, "language": "en"}
    user = render_pointwise(load_rubric("story-quality"), item)[-1]["content"]
    assert tricky in user and "p {{x}}" in user
    pair = {**PAIR, "response_a": tricky, "response_b": "}}{{"}
    ab = render_pairwise(load_rubric("persuasion"), pair, "AB")[-1]["content"]
    assert tricky in ab and "}}{{" in ab


def test_template_escapes_still_render_as_single_braces() -> None:
    text = """
name: braces
kind: pointwise
templates:
  en:
    user: "Answer like {{\\"a\\": 1}} for {response}. {answer_format}"
criteria:
  - name: a
    description: d
    scale: {min: 1, max: 2}
    anchors: {1: low, 2: high}
"""
    rubric = parse_rubric(text)
    user = render_pointwise(rubric, {"item_id": "i", "response": "R {{r}}"})[-1]["content"]
    assert user.startswith('Answer like {"a": 1} for R {{r}}.')


def test_persuasion_judges_texts_in_any_language() -> None:
    rubric = load_rubric("persuasion")
    for language in ("da", "de", "ja", "zh"):
        messages = render_pairwise(rubric, {**PAIR, "language": language}, "AB")
        assert "alpha text" in messages[-1]["content"]


def _prefix(texts: list[str]) -> str:
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[n] == first[n] for t in texts):
        n += 1
    return first[:n]


@pytest.mark.parametrize(
    ("name", "language", "item_starts"),
    [
        ("story-quality", "en", "Task or premise given to the writer:\n"),
        ("persuasion", "en", "Request both texts answer:\n"),
        ("preference", "en", "Instruction:\n"),
        ("preference", "ko", "지시:\n"),
        ("emotion-label", "en", "Text: "),
        ("emotion-label", "de", "Text: "),
        ("emotion-label", "es", "Texto: "),
        ("emotion-label", "ja", "文章: "),
    ],
)
def test_the_shared_part_comes_first_byte_identical_and_the_subject_last(
    name: str, language: str, item_starts: str
) -> None:
    """Issue 31: every call of a run starts with the same bytes (instructions, scale, answer
    format), so a provider's prompt cache can serve them; only the subject's own text follows."""
    from jurybench.rubric import render_classification, render_pairwise, render_pointwise

    rubric = load_rubric(name)
    rendered = []
    for k, text in enumerate(["Short.", "A much longer text, with {braces} and\nlines.", "Ünïcode ✓"]):
        subject = {
            "item_id": f"i{k}",
            "pair_id": f"p{k}",
            "prompt": f"Prompt {k}",
            "response": text,
            "response_a": text,
            "response_b": f"other {k}",
            "language": language,
            "metadata": {},
        }
        if rubric.kind == "pointwise":
            messages = render_pointwise(rubric, subject)
        elif rubric.kind == "classification":
            messages = render_classification(rubric, subject)
        else:
            messages = render_pairwise(rubric, subject, "AB")
        assert [m["role"] for m in messages] == ["system", "user"]
        rendered.append(messages)
    systems = {m[0]["content"] for m in rendered}
    assert len(systems) == 1  # the system message is the same bytes for every subject
    users = [m[1]["content"] for m in rendered]
    shared = _prefix(users)
    assert shared.endswith(item_starts) or shared.endswith(item_starts + "Prompt ")  # only the subject follows
    for user in users:
        rest = user[len(shared) :]
        assert item_starts not in rest and rest.strip()  # nothing shared comes after the subject
    assert len(shared) > 0.8 * min(len(u) for u in users) - 60  # almost all of each prompt is shared


def test_the_prompt_parts_made_once_per_rubric_follow_a_changed_copy() -> None:
    # The criteria block and the answer format are made once per rubric, not per call: a copy
    # with another criterion renders its own, and the original keeps its text.
    rubric = load_rubric("story-quality")
    item = {"item_id": "i1", "prompt": "Tell a story.", "response": "Once.", "language": "en"}
    first = render_pointwise(rubric, item)[-1]["content"]
    assert render_pointwise(rubric, item)[-1]["content"] == first
    assert set(rubric.prompt_parts) == {"criteria", "answer_format"}
    changed = rubric.criteria[0].model_copy(update={"name": "vividness", "description": "How vivid it is."})
    copy = rubric.model_copy(update={"criteria": [changed, *rubric.criteria[1:]]})
    text = render_pointwise(copy, item)[-1]["content"]
    assert "vividness (1..5): How vivid it is." in text and '"vividness": integer 1..5' in text
    assert "vividness" not in render_pointwise(rubric, item)[-1]["content"]
