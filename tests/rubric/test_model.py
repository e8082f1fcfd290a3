from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from jurybench.errors import JurybenchError
from jurybench.rubric import is_pairwise, load_rubric, parse_rubric, response_model

POINTWISE = """
name: tiny
kind: pointwise
criteria:
  - name: clarity
    description: how clear
    scale: {min: 1, max: 3}
    anchors: {1: muddled, 2: mostly clear, 3: crystal clear}
templates:
  en: {user: "Rate {response}"}
"""


def test_shipped_persuasion_rubric_has_the_19_categories_in_order() -> None:
    rubric = load_rubric("persuasion")
    assert rubric.kind == "pairwise" and rubric.k == 3
    assert rubric.dimensions == [
        "logos",
        "ethos",
        "pathos",
        "reciprocity",
        "commitment_consistency",
        "liking",
        "authority",
        "scarcity",
        "social_proof",
        "agentic",
        "communal",
        "instrumental_goals",
        "relational_goals",
        "identity_goals",
        "direct_tone",
        "polite_tone",
        "formal_tone",
        "playful_tone",
        "affectionate_tone",
    ]


def test_shipped_quality_and_preference_rubrics() -> None:
    quality = load_rubric("story-quality")
    assert quality.dimensions == [
        "relevance",
        "coherence",
        "empathy",
        "surprise",
        "engagement",
        "complexity",
    ]
    assert all(c.scale.min == 1 and c.scale.max == 5 for c in quality.criteria)
    pref = load_rubric("preference")
    assert pref.kind == "preference" and not pref.allow_tie
    assert set(pref.verdict_rules) >= {"verdict_line", "stated_winner"}
    assert set(pref.templates) == {"en", "ko"}


def test_hash_ignores_comments_and_key_order_but_not_content() -> None:
    a = parse_rubric(POINTWISE)
    reordered = "# a comment\n" + POINTWISE.replace("name: tiny\nkind: pointwise", "kind: pointwise\nname: tiny")
    assert parse_rubric(reordered).content_hash == a.content_hash
    changed = parse_rubric(POINTWISE.replace("how clear", "how clear it is"))
    assert changed.content_hash != a.content_hash
    assert len(a.content_hash) == 64


def test_unknown_key_names_file_line_and_valid_keys() -> None:
    text = POINTWISE.replace("    description: how clear", "    descripton: how clear")
    with pytest.raises(JurybenchError) as err:
        parse_rubric(text, source="r.yaml")
    message = str(err.value)
    # 'descripton' sits on line 6 of the text (line 1 is the empty first line).
    assert message.startswith("r.yaml line 6, field 'criteria.0.descripton': unknown key")
    assert "anchors, description, name, scale" in message


def test_unknown_placeholder_is_an_error_listing_valid_ones() -> None:
    with pytest.raises(JurybenchError, match=r"unknown placeholder \{answer\}.*\{response\}"):
        parse_rubric(POINTWISE.replace("Rate {response}", "Rate {answer}"))


def test_meta_placeholders_are_allowed() -> None:
    assert parse_rubric(POINTWISE.replace("Rate {response}", "Rate {response} for {meta.audience}"))


def test_anchors_must_cover_the_scale() -> None:
    with pytest.raises(JurybenchError, match=r"missing \[3\]"):
        parse_rubric(POINTWISE.replace(", 3: crystal clear", ""))


def test_bad_kind_lists_valid_kinds() -> None:
    with pytest.raises(JurybenchError, match="Valid kinds: pointwise, conversation, pairwise, preference"):
        parse_rubric(POINTWISE.replace("kind: pointwise", "kind: ranking"))


def test_malformed_yaml_names_the_line() -> None:
    with pytest.raises(JurybenchError, match=r"line \d+: malformed YAML"):
        parse_rubric("name: x\nkind: [pointwise\n", source="bad.yaml")


def test_non_utf8_rubric_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"name: x\nkind: pointwise\ndescription: caf\xe9\n")
    with pytest.raises(JurybenchError, match=r"bad.yaml line 3: not valid UTF-8"):
        load_rubric(path)


def test_unknown_rubric_name_lists_available() -> None:
    with pytest.raises(JurybenchError, match=r"Available: .*persuasion.*preference.*story-quality"):
        load_rubric("nope")


def test_language_templates_and_fallback() -> None:
    rubric = parse_rubric(POINTWISE + "  ko: {user: '평가 {response}'}\n")
    assert rubric.template_for("ko").user.startswith("평가")
    assert rubric.template_for(None).user.startswith("Rate")
    with pytest.raises(JurybenchError, match="no template for language 'zh'"):
        rubric.template_for("zh")
    fallback = parse_rubric(POINTWISE + "language_fallback: true\n")
    assert fallback.template_for("zh").user.startswith("Rate")


def test_response_model_constrains_each_criterion() -> None:
    model = response_model(parse_rubric(POINTWISE))
    assert model.model_validate({"clarity": 3}).clarity == 3  # type: ignore[attr-defined]
    for bad in (0, 4, "high"):
        with pytest.raises(ValidationError):
            model.model_validate({"clarity": bad})
    pairwise = response_model(load_rubric("persuasion"))
    assert pairwise.model_validate({c: 0 for c in load_rubric("persuasion").dimensions})
    with pytest.raises(ValidationError):
        pairwise.model_validate({**{c: 0 for c in load_rubric("persuasion").dimensions}, "logos": -4})


def test_a_changed_copy_gets_its_own_hash() -> None:
    rubric = load_rubric("story-quality")
    assert rubric.model_copy(update={"version": "3"}).content_hash != rubric.content_hash
    assert rubric.model_copy().content_hash == rubric.content_hash


def test_a_rubric_file_is_validated_once_per_version(tmp_path: Path) -> None:
    from jurybench.rubric import load_rubric

    source = (Path(__file__).resolve().parents[2] / "rubrics" / "preference.yaml").read_text(encoding="utf-8")
    path = tmp_path / "mine.yaml"
    path.write_text(source, encoding="utf-8")
    first = load_rubric(path)
    assert load_rubric(path) is first  # unchanged file: the validated rubric is reused
    path.write_text(source.replace('version: "2"', 'version: "3"'), encoding="utf-8")
    changed = load_rubric(path)
    assert changed is not first and changed.version == "3"


@pytest.mark.parametrize(
    ("name", "kind", "subjects", "table", "view", "json_answer", "scale"),
    [
        (
            "story-quality",
            "pointwise",
            ("item", "items", "item_id"),
            "pointwise_judgments",
            "jury_pointwise",
            True,
            ("coherence", (1, 5)),
        ),
        (
            "persuasion",
            "pairwise",
            ("pair", "pairs", "pair_id"),
            "pairwise_judgments",
            "jury_pairwise",
            True,
            ("logos", (-3, 3)),
        ),
        (
            "preference",
            "preference",
            ("pair", "pairs", "pair_id"),
            "pairwise_judgments",
            "jury_pairwise",
            True,
            ("preference", (-1, 1)),
        ),
        (
            "emotion-label",
            "classification",
            ("item", "items", "item_id"),
            "pointwise_judgments",
            "jury_pointwise",
            False,
            ("label", None),
        ),
        (
            "social-style",
            "inventory",
            ("item", "items", "item_id"),
            "pointwise_judgments",
            "jury_pointwise",
            False,
            (None, (1, 5)),
        ),
    ],
)
def test_each_kind_says_what_it_judges_where_it_is_stored_and_its_scale(
    name: str,
    kind: str,
    subjects: tuple[str, str, str],
    table: str,
    view: str,
    json_answer: bool,
    scale: tuple[str | None, tuple[int, int] | None],
) -> None:
    """Callers ask the rubric, not which kind it is (issue 28)."""
    rubric = load_rubric(name)
    assert rubric.kind == kind
    assert (rubric.subject_kind, rubric.subject_table, rubric.subject_column) == subjects
    assert rubric.judgment_table == table and rubric.jury_view == view and rubric.juror_view == "juror" + view[4:]
    assert rubric.answers_in_json is json_answer and is_pairwise(rubric) is (subjects[0] == "pair")
    dimension, bounds = scale
    assert rubric.scale_for(dimension or rubric.dimensions[0]) == bounds
    # What a kind decides is not part of the rubric's content: its hash is unchanged by it.
    assert not {"pairwise", "answers_in_json"} & set(rubric.model_dump())


def test_a_folder_named_like_a_rubric_is_not_taken_for_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'jurybench demo persuasion --copy persuasion' makes a folder 'persuasion' beside the store;
    running the copied study then read the folder as the rubric file (IsADirectoryError, a
    traceback-style bug line) instead of the shipped rubric of that name."""
    from jurybench.rubric import load_rubric

    (tmp_path / "persuasion").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_rubric("persuasion").name == "persuasion"
