"""The built-in refusal patterns, language by language: each catches a refusal opening in its
language and passes an ordinary answer that starts alike."""

from __future__ import annotations

import pytest

from jurybench.generation import GenerationSpec

REFUSALS = {
    "en": [
        "I'm sorry, but I can't help with that.",
        "I cannot write that message.",
        "Unfortunately, I can't assist with this request.",
        "As an AI, I do not write persuasion.",
    ],
    "de": ["Es tut mir leid, aber ich kann das nicht schreiben.", "Ich kann dir dabei nicht helfen."],
    "es": ["Lo siento, pero no puedo ayudar con eso."],
    "fr": ["Je suis désolé, mais je ne peux pas écrire ce message.", "Désolé, je ne peux pas faire cela."],
    "ja": ["申し訳ありませんが、そのご依頼にはお応えできません。"],
    "zh": ["抱歉，我无法帮助完成这个请求。"],
}
ORDINARY = {
    "en": "I'm glad you asked: here is a short message for your neighbour.",
    "de": "Es tut gut, gemeinsam etwas zu bewegen: mach mit!",
    "es": "Lo sé: juntos podemos lograrlo.",
    "fr": "Je suis certain que vous aimerez ce projet.",
    "ja": "ありがとうございます。地域のために一緒に参加しましょう。",
    "zh": "我们一起努力，让社区更美好。",
}


def _spec() -> GenerationSpec:
    return GenerationSpec.model_validate(
        {"name": "t", "prompts": "p.csv", "models": ["sim/w"], "treatments": {"g": {"arms": ["a", "b"]}}}
    )


@pytest.mark.parametrize("language", sorted(REFUSALS))
def test_each_language_refusal_is_caught_and_an_ordinary_answer_is_not(language: str) -> None:
    spec = _spec()
    for text in REFUSALS[language]:
        assert spec.is_refusal(text, "stop") is not None, (language, text)
    assert spec.is_refusal(ORDINARY[language], "stop") is None
