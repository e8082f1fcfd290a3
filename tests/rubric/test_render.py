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
