"""Provider-native structured outputs and logprob-weighted scores over the real litellm path,
against the loopback stub: what is sent, what is stored, and that validation stays strict."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import parse_juror
from jurybench.jury import Jury
from jurybench.rubric import answer_schema, load_rubric
from jurybench.testing import StubServer

pytestmark = pytest.mark.usefixtures("both_transports")  # litellm's transport and the lean one

QUIET = EngineOptions(progress=False, retry_base_s=0.001)
FULL = {"relevance": 5, "coherence": 4, "empathy": 3, "surprise": 2, "engagement": 1, "complexity": 3}


def _juror(stub: StubServer, extra: str = "") -> Any:
    return parse_juror(f"openai/stub-judge,api_base={stub.api_base},api_key=sk-test{extra}")


def _modes(con: Any) -> set[Any]:
    return {r[0] for r in con.execute("SELECT structured FROM calls").fetchall()}


def test_auto_is_json_mode_where_litellm_knows_no_schema_support_and_the_mode_is_stored(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        score(small_store, load_rubric("story-quality"), [_juror(stub)], options=QUIET)
        assert stub.requests[0]["response_format"] == {"type": "json_object"}
    assert _modes(small_store) == {"json"}


def test_schema_mode_sends_the_rubrics_strict_schema_and_still_validates_bounds(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    out_of_range = {**FULL, "relevance": 7}  # a server that did not enforce the bound
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend([(200, json.dumps(out_of_range))] * 2)  # the answer and its re-ask
        score(
            small_store,
            rubric,
            [_juror(stub, ",structured=schema,concurrency=1")],
            where="item_id = 'i1'",
            options=QUIET,
        )
        sent = stub.requests[0]["response_format"]
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": answer_schema(rubric, enumerate_points=True), "strict": True},
    }
    schema = sent["json_schema"]["schema"]
    assert schema["required"] == [*rubric.dimensions, "rationale"] and schema["additionalProperties"] is False
    assert schema["properties"]["rationale"] == {"type": ["string", "null"]}
    # Issue 45, item 4: a server on this machine compiles the schema to a grammar, which enforces
    # an enum of the scale's points but not minimum/maximum (SmolLM2 counted 1..6 under the bounds)
    assert schema["properties"]["relevance"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    status, reason, mode = small_store.execute("SELECT status, reason, structured FROM calls").fetchall()[0]
    assert (status, mode) == ("invalid", "schema")
    assert reason.startswith("relevance:") and "less than or equal to 5" in reason


def test_schema_inside_json_object_for_servers_that_read_it_there(small_store: Any) -> None:
    rubric = load_rubric("preference")
    with StubServer(json.dumps({"verdict": "A"})) as stub:
        score(small_store, rubric, [_juror(stub, ",structured=schema,response_format=json_object")], options=QUIET)
        sent = stub.requests[0]["response_format"]
    assert sent == {"type": "json_object", "schema": answer_schema(rubric)}
    assert sent["schema"]["properties"]["verdict"] == {"type": "string", "enum": ["A", "B"]}  # no tie in this rubric


def _logprobs(answer: dict[str, int]) -> dict[str, Any]:
    """Tokens of json.dumps(answer) with each value its own token; at each value, the chosen
    point at p = 0.5 and the point below it at 0.25 (or above it at the scale's bottom), and
    0.25 on a token that is no value."""
    text = json.dumps(answer)
    content: list[dict[str, Any]] = []
    position = 0
    for key, value in answer.items():
        start = text.index(f'"{key}": ') + len(f'"{key}": ')
        content.append({"token": text[position:start], "logprob": 0.0, "top_logprobs": []})
        other = value - 1 if value > 1 else value + 1
        content.append(
            {
                "token": str(value),
                "logprob": math.log(0.5),
                "top_logprobs": [
                    {"token": str(value), "logprob": math.log(0.5)},
                    {"token": str(other), "logprob": math.log(0.25)},
                    {"token": "x", "logprob": math.log(0.25)},
                ],
            }
        )
        position = start + len(str(value))
    content.append({"token": text[position:], "logprob": 0.0, "top_logprobs": []})
    return {"content": content, "text": text}


def test_expected_scores_are_read_from_logprobs_stored_and_aggregated(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    payload = _logprobs(FULL)
    answer = {"content": payload.pop("text"), "logprobs": payload}
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.extend([(200, answer)] * 3)
        spec = _juror(stub, ",scores=expected,top_logprobs=5")
        result = score(small_store, rubric, Jury((spec,), scores="expected"), options=QUIET)
        sent = stub.requests[0]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 5
    # Issue 45, item 3: a self-hosted server samples without a repetition penalty, so the score
    # written is the most probable one in the probabilities it reports (llama.cpp's default 1.1
    # penalised digits already written and the two disagreed)
    assert sent["repeat_penalty"] == 1.0
    assert result.notes == []
    # relevance 5: p(5) = 0.5, p(4) = 0.25 (0.25 on "x" dropped): renormalised 2/3, 1/3;
    # expected = 5 * 2/3 + 4 * 1/3 = 14/3. engagement 1: p(1) 2/3, p(2) 1/3: expected 4/3.
    rows = dict(
        small_store.execute(
            "SELECT criterion, expected FROM pointwise_judgments WHERE item_id = 'i1' AND criterion IN "
            "('relevance', 'engagement')"
        ).fetchall()
    )
    assert rows["relevance"] == pytest.approx(14 / 3, abs=1e-12)
    assert rows["engagement"] == pytest.approx(4 / 3, abs=1e-12)
    dist = json.loads(
        small_store.execute(
            "SELECT distribution FROM pointwise_judgments WHERE item_id = 'i1' AND criterion = 'relevance'"
        ).fetchone()[0]
    )
    assert dist["p"] == pytest.approx({"5": 2 / 3, "4": 1 / 3}) and dist["coverage"] == pytest.approx(0.75)
    # The jury aggregates the expected scores; the discrete ones stay beside them.
    juror_score, discrete, expected = small_store.execute(
        "SELECT juror_score, juror_discrete, juror_expected FROM juror_pointwise WHERE item_id = 'i1' "
        "AND criterion = 'relevance'"
    ).fetchone()
    assert (discrete, juror_score) == (5, pytest.approx(14 / 3))
    assert expected == pytest.approx(14 / 3)
    jury = small_store.execute(
        "SELECT jury_score FROM jury_pointwise WHERE item_id = 'i1' AND criterion = 'relevance'"
    ).fetchone()[0]
    assert jury == pytest.approx(14 / 3)


def test_expected_scores_without_logprobs_fall_back_and_say_so(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        result = score(small_store, load_rubric("story-quality"), [_juror(stub, ",scores=expected")], options=QUIET)
    assert len(result.notes) == 1 and "3 valid answers came without token log probabilities" in result.notes[0]
    assert small_store.execute("SELECT count(expected), count(score) FROM pointwise_judgments").fetchone() == (0, 18)


def test_fake_jurors_give_expected_scores_and_the_jury_can_use_either(small_store: Any) -> None:
    rubric = load_rubric("story-quality")
    spec = parse_juror("fake/a,scores=expected")
    score(small_store, rubric, Jury((spec,), scores="expected"), options=QUIET, run_id="expected")
    score(small_store, rubric, [spec], options=QUIET, run_id="discrete")
    rows = small_store.execute(
        "SELECT run_id, sum(juror_score), sum(juror_expected), sum(juror_discrete) FROM juror_pointwise GROUP BY 1"
    ).fetchall()
    got = {r[0]: r[1:] for r in rows}
    assert got["expected"][0] == pytest.approx(got["expected"][1])
    assert got["discrete"][0] == got["discrete"][2]
    assert got["expected"][1] != pytest.approx(got["expected"][2])  # the expected scores differ from the points


@pytest.mark.parametrize(
    ("juror", "rubric", "message"),
    [
        ("fake/a,structured=strict", "story-quality", "structured='strict' is not valid"),
        ("fake/a,scores=weighted", "story-quality", "scores='weighted' is not valid"),
        ("fake/a,response_format=xml", "story-quality", "response_format='xml' is not valid"),
        ("fake/a,scores=expected", "emotion-label", "scores=expected is for rubrics answered in JSON"),
        ("fake/a,structured=schema,verdicts=verdict_line", "preference", "verdicts= reads free text"),
        ("fake/a,structured=instructor,scores=expected", "story-quality", "instructor does not pass on"),
    ],
)
def test_structured_settings_are_checked_before_any_call(
    small_store: Any, juror: str, rubric: str, message: str
) -> None:
    with pytest.raises(JurybenchError, match=message):
        score(small_store, load_rubric(rubric), [parse_juror(juror)], options=QUIET)


def test_the_cli_switches_a_run_to_expected_scores_without_a_call(tmp_path: Any) -> None:
    from tests.conftest import ITEMS_CSV, run_cli, write

    db = str(tmp_path / "cli.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "items.csv", ITEMS_CSV)), "--db", db).exit_code == 0
    juror = "fake/a,scores=expected"
    first = run_cli("score", "-r", "story-quality", "-j", juror, "--run", "r", "--no-progress", "--db", db)
    assert first.exit_code == 0, first.stderr
    query = "SELECT round(sum(jury_score), 6) FROM jury_pointwise WHERE run_id = 'r'"
    discrete = run_cli("sql", query, "--format", "json", "--db", db).stdout
    again = run_cli(
        "score", "-r", "story-quality", "-j", juror, "--run", "r", "--scores", "expected", "--no-progress", "--db", db
    )
    assert again.exit_code == 0 and "3 from cache, 0 called" in again.stdout
    expected = run_cli("sql", query, "--format", "json", "--db", db).stdout
    assert discrete != expected
    refused = run_cli("score", "-r", "story-quality", "-j", "fake/a", "--scores", "expected", "--db", db)
    assert refused.exit_code == 2 and "no juror reads them" in refused.stderr and "Traceback" not in refused.stderr
    bad = run_cli("score", "-r", "story-quality", "-j", juror, "--scores", "soft", "--db", db)
    assert bad.exit_code == 2 and "scores 'soft'" in bad.stderr


@pytest.mark.parametrize(
    ("juror", "local"),
    [
        ("openai/m,api_base=http://127.0.0.1:8080/v1", True),
        ("openai/m,api_base=http://localhost:11434", True),
        ("hosted_vllm/m,api_base=http://[::1]:8000/v1", True),
        ("ollama/llama3", True),
        ("ollama/llama3,api_base=http://10.0.0.5:11434", False),
        ("openai/m,api_base=https://api.example.com/v1", False),
        ("openai/gpt-4o-mini", False),
        ("openai/gpt-4o-mini,api_base=http://127.0.0.1:4000", False),  # a local proxy to a priced model
        ("openai/m,api_base=http://127.0.0.1:8080/v1,local=false", False),  # a loopback stand-in for a remote one
        ("openai/m,api_base=https://gpu-box.example/v1,local=true", True),
    ],
)
def test_a_juror_on_this_machine_is_local_and_priced_at_zero(juror: str, local: bool) -> None:
    from jurybench.jurors import is_local, price_of

    spec = parse_juror(juror)
    assert is_local(spec) is local
    if local:
        price = price_of(spec)
        assert price is not None and price.input == price.output == 0


def test_plan_prices_a_local_server_at_zero_and_says_so(small_store: Any, tmp_path: Any) -> None:
    from tests.conftest import ITEMS_CSV, run_cli, write

    db = str(tmp_path / "plan.duckdb")
    run_cli("items", "import", str(write(tmp_path / "items.csv", ITEMS_CSV)), "--db", db)
    out = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "openai/gemma,api_base=http://127.0.0.1:9/v1,api_key=x",
        "--plan",
        "--db",
        db,
    )
    assert out.exit_code == 0, out.stderr
    assert "priced at $0: openai/gemma (a server on this machine" in out.stdout
    assert "price unknown" not in out.stdout


def test_cached_prompt_tokens_are_stored_per_call_and_priced_at_the_cached_rate(small_store: Any) -> None:
    """The stub reports 1,000 prompt tokens, 800 of them read from its cache, and 10 completion
    tokens. Stored as said; at gpt-4o-mini's prices ($0.15 / M input, $0.075 / M cached, $0.60 / M
    output): 200 x 0.15e-6 + 800 x 0.075e-6 + 10 x 0.6e-6 = 3.0e-5 + 6.0e-5 + 0.6e-5 = $0.000096."""
    from jurybench.jurors import Completion, priced
    from jurybench.jurors._price_map import listed_price

    headers = {"x-stub-prompt-tokens": 1000, "x-stub-cached-tokens": 800, "x-stub-completion-tokens": 10}
    with StubServer(json.dumps(FULL)) as stub:
        stub.script.append((200, json.dumps(FULL), headers))
        score(small_store, load_rubric("story-quality"), [_juror(stub)], where="item_id = 'i1'", options=QUIET)
    row = small_store.execute("SELECT prompt_tokens, cached_tokens, completion_tokens FROM calls").fetchone()
    assert row == (1000, 800, 10)
    price = listed_price(parse_juror("openai/gpt-4o-mini"))
    assert price is not None and price.input_cached == pytest.approx(0.075e-6)
    cost = priced(Completion("x", prompt_tokens=1000, cached_tokens=800, completion_tokens=10), price)
    assert cost == pytest.approx(200 * 0.15e-6 + 800 * 0.075e-6 + 10 * 0.6e-6, rel=1e-12)


def test_anthropic_jurors_mark_the_shared_system_prompt_for_caching() -> None:
    from jurybench.jurors._kind_litellm import cache_marked

    messages = [{"role": "system", "content": "rules shared by every call"}, {"role": "user", "content": "item 7"}]
    marked = cache_marked(messages)
    assert marked[0] == {
        "role": "system",
        "content": [{"type": "text", "text": "rules shared by every call", "cache_control": {"type": "ephemeral"}}],
    }
    assert marked[1] == messages[1] and messages[0]["content"] == "rules shared by every call"  # not modified


def _long_rubric(item_first: bool) -> Any:
    """One criterion whose scale is described at length (about 1,300 tokens), shown before the
    item (jurybench's layout) or after it."""
    from jurybench.rubric import parse_rubric

    anchors = {
        level: f"Level {level}. " + " ".join(f"clause {level}-{k} of a long description" for k in range(30))
        for level in range(1, 6)
    }
    item = "Text:\n{response}"
    shared = "Rate the text on the criterion below.\n\n{criteria}\n\n{answer_format}"
    user = f"{item}\n\n{shared}" if item_first else f"{shared}\n\n{item}"
    body = {
        "name": "long",
        "kind": "pointwise",
        "rationale": False,
        "templates": {"en": {"system": "Judge.", "user": user}},
        "criteria": [
            {
                "name": "quality",
                "description": "How good the text is.",
                "scale": {"min": 1, "max": 5},
                "anchors": anchors,
            }
        ],
    }
    return parse_rubric(json.dumps(body))


@pytest.mark.parametrize("item_first", [False, True])
def test_a_prompt_cache_reads_the_shared_part_when_it_comes_first(small_store: Any, item_first: bool) -> None:
    """The stub's prompt cache (OpenAI's rule: 1,024 tokens or more, in blocks of 128) serves the
    rubric's part that every call shares only when it comes before the item."""
    from jurybench.testing import PromptCache

    rubric = _long_rubric(item_first)
    with StubServer(json.dumps({"quality": 3}), cache=PromptCache()) as stub:
        score(small_store, rubric, [_juror(stub, ",concurrency=1")], options=QUIET)
        n = len(stub.requests)
    rows = small_store.execute("SELECT prompt_tokens, cached_tokens FROM calls ORDER BY cached_tokens").fetchall()
    assert len(rows) == n >= 3
    if item_first:
        assert all(cached == 0 for _, cached in rows)  # the items differ from the first character on
    else:
        first, *rest = rows
        assert first[1] == 0 and all(cached >= 1024 and cached % 128 == 0 for _, cached in rest)
        assert all(cached > 0.9 * tokens - 128 for tokens, cached in rest)  # nearly the whole prompt


def test_only_self_hosted_servers_get_sampling_parameters_of_their_own() -> None:
    from jurybench.jurors._kind_litellm import self_hosted

    assert self_hosted(parse_juror("openai/local,api_base=http://127.0.0.1:8080/v1"))
    assert self_hosted(parse_juror("hosted_vllm/m,api_base=http://gpu-box:8000/v1"))
    assert self_hosted(parse_juror("ollama_chat/llama3"))
    assert not self_hosted(parse_juror("openai/gpt-4o-mini"))
    assert not self_hosted(parse_juror("openai/gpt-4o-mini,api_base=https://api.openai.com/v1"))
    assert not self_hosted(parse_juror("anthropic/claude-3-5-haiku-latest"))


def test_discrete_scores_leave_the_servers_sampling_alone(small_store: Any) -> None:
    with StubServer(json.dumps(FULL)) as stub:
        score(small_store, load_rubric("story-quality"), [_juror(stub)], where="item_id = 'i1'", options=QUIET)
        assert "repeat_penalty" not in stub.requests[0]


def test_a_hosted_provider_gets_the_scales_bounds() -> None:
    from jurybench.jurors._kind_litellm import _response_format

    rubric = load_rubric("story-quality")
    hosted = _response_format(parse_juror("openai/gpt-4o-mini,structured=schema"), rubric, "schema", True)
    local = _response_format(
        parse_juror("openai/x,api_base=http://127.0.0.1:9/v1,structured=schema,response_format=json_object"),
        rubric,
        "schema",
        True,
    )
    assert hosted is not None and local is not None
    assert hosted["json_schema"]["schema"]["properties"]["coherence"] == {"type": "integer", "minimum": 1, "maximum": 5}  # type: ignore[index]
    assert local == {"type": "json_object", "schema": answer_schema(rubric, enumerate_points=True)}


# Issue 52: a plug-in rubric kind (docs/extending.md's Checklist) answered in JSON is judged by
# a real juror as a built-in kind is: jurors.answers_in_json listed three kind names, so the
# checklist got no schema, and structured=schema / scores=expected were refused for it.
@pytest.fixture
def checklist(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The docs' own Checklist kind and its rubric file, as docs/extending.md's example makes them."""
    from jurybench.rubric import unregister_kind
    from tests.rubric.test_kinds import _example

    monkeypatch.chdir(tmp_path)
    try:
        exec(compile(_example(), "docs/extending.md", "exec", dont_inherit=True), {})
        yield load_rubric(str(tmp_path / "story-checks.yaml"))
    finally:
        unregister_kind("checklist")


def test_a_plug_in_kind_gets_its_schema_sent_by_a_real_juror(small_store: Any, checklist: Any) -> None:
    answer = {"ending": "yes", "names": "no"}
    with StubServer(json.dumps(answer)) as stub:
        score(small_store, checklist, [_juror(stub, ",structured=schema")], options=QUIET)
        sent = stub.requests[0]["response_format"]
    assert sent["type"] == "json_schema"
    schema = sent["json_schema"]["schema"]
    assert schema == answer_schema(checklist, enumerate_points=True)
    assert schema["properties"]["ending"]["enum"] == ["yes", "no"] and schema["required"] == ["ending", "names"]
    assert _modes(small_store) == {"schema"}
    rows = small_store.execute(
        "SELECT criterion, min(score), max(score), count(*) FROM pointwise_judgments GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("ending", 1, 1, 3), ("names", 0, 0, 3)]


def test_a_plug_in_kind_gives_expected_scores_from_token_probabilities(small_store: Any, checklist: Any) -> None:
    text = json.dumps({"ending": "yes", "names": "no"})
    content = []
    position = 0
    for key, value, other in (("ending", "yes", "no"), ("names", "no", "yes")):
        start = text.index(f'"{key}": "') + len(f'"{key}": "')
        content.append({"token": text[position:start], "logprob": 0.0, "top_logprobs": []})
        alternatives = [(value, 0.5), (other, 0.25), ("maybe", 0.25)]
        content.append(
            {
                "token": value,
                "logprob": math.log(0.5),
                "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alternatives],
            }
        )
        position = start + len(value)
    content.append({"token": text[position:], "logprob": 0.0, "top_logprobs": []})
    with StubServer(text) as stub:
        stub.script.extend([(200, {"content": text, "logprobs": {"content": content}})] * 3)
        spec = _juror(stub, ",scores=expected,top_logprobs=5")
        result = score(small_store, checklist, Jury((spec,), scores="expected"), options=QUIET)
        assert stub.requests[0]["logprobs"] is True
    assert result.notes == []
    # ending: yes 0.5, no 0.25 ("maybe" is no value: dropped), renormalised 2/3 and 1/3, so the
    # expected score is 1 x 2/3 + 0 x 1/3 = 2/3; names: no 2/3, yes 1/3, expected 1/3.
    rows = dict(
        small_store.execute("SELECT criterion, expected FROM pointwise_judgments WHERE item_id = 'i1'").fetchall()
    )
    assert rows == {"ending": pytest.approx(2 / 3, abs=1e-12), "names": pytest.approx(1 / 3, abs=1e-12)}
