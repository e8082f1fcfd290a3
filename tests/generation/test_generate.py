"""Generation under paired treatments: items, pairs, refusals, exclusion, cache and resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.generation import GenerationSpec, generate, generators_of, load_prompts
from jurybench.jurors import FakeBackend, parse_juror
from jurybench.rubric import load_rubric
from tests.conftest import write

QUIET = EngineOptions(progress=False)


def _spec(**changes: Any) -> GenerationSpec:
    body: dict[str, Any] = {
        "name": "letters",
        "system": "You write short letters.",
        "user": "Write to {recipient_gender} ({intent}): {prompt}",
        "treatments": {
            "recipient_gender": {"arms": ["female", "male"], "text": {"female": "a woman", "male": "a man"}},
            "intent": {"arms": ["noble", "ignoble"]},
        },
        "pair_on": ["recipient_gender"],
    }
    if "treatments" in changes:
        body.update(user="Write: {prompt}", pair_on=None)
    body.update(changes)
    return GenerationSpec.model_validate(body)


def _prompts(tmp_path: Path, n: int = 3) -> Any:
    rows = ["prompt_id,prompt,topic"] + [f"p{k},Ask for help {k},t{k % 2}" for k in range(n)]
    return load_prompts(write(tmp_path / "prompts.csv", "\n".join(rows) + "\n"))


def test_every_prompt_arm_model_sample_becomes_an_item_and_pairs_link_the_arms(con: Any, tmp_path: Path) -> None:
    spec = _spec(samples=2)
    gens = generators_of(spec, ["fake/a", "fake/b,name=bee"])
    report = generate(con, spec, gens, _prompts(tmp_path), run_id="g", options=QUIET)
    # 3 prompts x 4 arm combinations x 2 models x 2 samples
    assert report.run.n_tasks == 48 and report.items_inserted == 48
    # pairs over recipient_gender only: per prompt x intent x model x sample
    assert report.pairs_inserted == 3 * 2 * 2 * 2
    item = con.execute(
        "SELECT prompt, model, treatment, dataset, metadata FROM items WHERE item_id = 'letters/p1/bee/recipient_gender=male,intent=ignoble/1'"
    ).fetchall()[0]
    assert item[0] == "Write to a man (ignoble): Ask for help 1" and item[1] == "bee"
    assert json.loads(item[2]) == {"intent": "ignoble", "recipient_gender": "male"} and item[3] == "letters"
    assert json.loads(item[4])["topic"] == "t1"
    a, b, meta = con.execute(
        "SELECT item_a, item_b, metadata FROM pairs WHERE pair_id = 'letters/p0/fake/a/recipient_gender:female-male/intent=noble/0'"
    ).fetchall()[0]
    assert a.endswith("recipient_gender=female,intent=noble/0") and b.endswith("recipient_gender=male,intent=noble/0")
    assert json.loads(meta)["variable"] == "recipient_gender"
    # The same machinery as judging: calls in the store, a run with mode 'generation', a cache.
    assert con.execute("SELECT mode, status FROM runs WHERE run_id = 'g'").fetchall() == [("generation", "finished")]
    again = generate(con, spec, gens, _prompts(tmp_path), run_id="g2", options=QUIET)
    assert again.run.n_cached == 48 and again.run.n_called == 0 and again.items_inserted == 0


def test_refusals_are_detected_stored_and_counted_per_model_and_arm(con: Any, tmp_path: Path) -> None:
    spec = _spec(treatments={"recipient_gender": {"arms": ["female", "male"]}})
    # fake/a answers in task order: p0 female, p0 male, p1 female, p1 male.
    FakeBackend.enqueue("a", "Dear friend, ...", "I'm sorry, but I can't help with that request.", "Hi!", "Hello.")
    report = generate(con, spec, generators_of(spec, ["fake/a"]), _prompts(tmp_path, 2), options=QUIET)
    assert report.n_refused == 1 and report.items_inserted == 3 and report.pairs_inserted == 1
    rows = con.execute("SELECT arm, n_answered, n_refused, refusal_rate FROM refusal_rates ORDER BY arm").fetchall()
    assert rows == [("female", 2, 0, 0.0), ("male", 2, 1, 0.5)]
    why = con.execute("SELECT refusal_reason, excluded FROM generations WHERE refused").fetchall()
    assert why[0][0].startswith("matches refusal pattern") and why[0][1] == "refused"
    assert con.execute("SELECT status FROM calls WHERE status = 'refusal'").fetchall() == [("refusal",)]


def test_consistent_exclusion_drops_a_refused_prompt_for_every_model(con: Any, tmp_path: Path) -> None:
    spec = _spec(treatments={"recipient_gender": {"arms": ["female", "male"]}}, refusal={"exclusion": "prompt"})
    # Tasks run model by model within a prompt: p0 (a f, a m, b f, b m), then p1.
    FakeBackend.enqueue("a", "ok a0f", "ok a0m", "ok a1f", "ok a1m")
    FakeBackend.enqueue("b", "ok b0f", "Sorry, I can't write that.", "ok b1f", "ok b1m")
    report = generate(
        con,
        spec,
        generators_of(spec, ["fake/a", "fake/b"]),
        _prompts(tmp_path, 2),
        options=EngineOptions(progress=False, concurrency=1),
    )
    assert report.excluded_prompts == ["p0"]
    assert report.items_inserted == 4  # p1 only, both models and arms
    models = con.execute("SELECT DISTINCT json_extract_string(metadata, '$.prompt_id') FROM items").fetchall()
    assert models == [("p1",)]
    reasons = dict(con.execute("SELECT item_id, excluded FROM generations WHERE prompt_id = 'p0'").fetchall())
    assert reasons["letters/p0/fake/a/recipient_gender=female/0"] == "prompt refused by fake/b"


def test_sim_generator_plants_an_effect_a_sim_jury_recovers(con: Any, tmp_path: Path) -> None:
    spec = _spec(treatments={"recipient_gender": {"arms": ["female", "male"]}})
    writer = "sim/writer,effect=1.5,effect_on=logos|pathos|communal,effect_arm=recipient_gender=female"
    generate(con, spec, generators_of(spec, [writer]), _prompts(tmp_path, 40), options=QUIET)
    score(con, load_rubric("persuasion"), [parse_juror("sim/judge,noise=0.3")], run_id="j", options=QUIET)
    from jurybench.stats.builtin.directional import directional

    out = directional.compute(con, "j")
    d = {c["category"]: c for g in out["groups"].values() for c in g["categories"]}
    for planted in ("logos", "pathos", "communal"):
        assert d[planted]["D"] > 0.8 and d[planted]["p_holm"] < 0.01
    others = [c for name, c in d.items() if name not in ("logos", "pathos", "communal")]
    assert all(abs(c["D"]) < 0.5 for c in others)


def test_sim_generator_refusal_rates_by_arm(con: Any, tmp_path: Path) -> None:
    spec = _spec(treatments={"intent": {"arms": ["noble", "ignoble"]}})
    gen = "sim/cautious,refusal_arm=intent=ignoble,arm_refusal_rate=0.6"
    generate(con, spec, generators_of(spec, [gen]), _prompts(tmp_path, 60), options=QUIET)
    rates = dict(con.execute("SELECT arm, refusal_rate FROM refusal_rates").fetchall())
    assert rates["noble"] == 0.0 and 0.4 < rates["ignoble"] < 0.8


def test_bad_specs_and_prompt_files_say_where(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="unknown placeholder"):
        _spec(user="Write to {recipient}")
    with pytest.raises(Exception, match="pair_on names 'colour'"):
        _spec(pair_on=["colour"])
    bad = write(tmp_path / "p.csv", "prompt_id,prompt\np1,a\np1,b\n")
    with pytest.raises(JurybenchError, match=r"p.csv row 3, field 'prompt_id': duplicate id 'p1'"):
        load_prompts(bad)


def test_a_real_provider_path_against_the_loopback_stub(con: Any, tmp_path: Path) -> None:
    from jurybench.testing import StubServer

    spec = _spec(treatments={"recipient_gender": {"arms": ["female", "male"]}}, temperature=0.7, max_tokens=200)
    with StubServer("Dear reader, here is my letter.") as stub:
        stub.script.append((200, "I'm sorry, but I can't help with writing that."))
        model = f"openai/stub-writer,api_base={stub.api_base},api_key=sk-test"
        report = generate(
            con,
            spec,
            generators_of(spec, [model]),
            _prompts(tmp_path, 2),
            options=EngineOptions(progress=False, concurrency=1, retry_base_s=0.001),
        )
        sent = stub.requests[0]
    assert sent["temperature"] == 0.7 and sent["max_tokens"] == 200
    assert "response_format" not in sent  # free text, not JSON mode
    assert sent["messages"][0] == {"role": "system", "content": "You write short letters."}
    assert report.n_refused == 1 and report.items_inserted == 3 and report.pairs_inserted == 1


def test_the_providers_own_refusal_signal_marks_a_refusal(con: Any, tmp_path: Path) -> None:
    from jurybench.testing import StubServer

    spec = _spec(treatments={"recipient_gender": {"arms": ["female", "male"]}})
    with StubServer("A letter.") as stub:
        stub.script.append((200, {"content": None, "refusal": "This request goes against the usage policy."}))
        model = f"openai/stub-writer,api_base={stub.api_base},api_key=sk-test"
        report = generate(
            con,
            spec,
            generators_of(spec, [model]),
            _prompts(tmp_path, 1),
            options=EngineOptions(progress=False, concurrency=1),
        )
    assert report.n_refused == 1 and report.items_inserted == 1
    reason = con.execute("SELECT refusal_reason FROM generations WHERE refused").fetchall()[0][0]
    assert reason == "provider refusal: This request goes against the usage policy."


def test_failed_calls_exit_3_and_a_rerun_generates_only_those(con: Any, tmp_path: Path, db_path: Path) -> None:
    import duckdb

    from jurybench.testing import StubServer
    from tests.conftest import run_cli

    _prompts(tmp_path, 6)
    con.close()
    with StubServer("A letter.") as stub:
        spec_file = write(
            tmp_path / "g.yaml",
            "name: g\nprompts: prompts.csv\nuser: '{prompt} ({tone})'\ntreatments: {tone: {arms: [warm, cold]}}\n"
            f"models: ['openai/stub-writer,api_base={stub.api_base},api_key=sk-test,retries=0']\n",
        )
        stub.script.extend([(500, "down")] * 3)
        args = ("generate", str(spec_file), "--run", "g", "--db", str(db_path), "--no-progress", "--concurrency", "1")
        first = run_cli(*args)
        assert first.exit_code == 3 and "3 of 12 calls ended in error" in first.stderr
        check = duckdb.connect(str(db_path), read_only=True)
        assert check.execute("SELECT count(*) FROM items").fetchall() == [(9,)]
        check.close()
        before = len(stub.requests)
        again = run_cli(*args)
        assert again.exit_code == 0, again.stderr
        assert len(stub.requests) - before == 3  # only the failed ones
    check = duckdb.connect(str(db_path), read_only=True)
    assert check.execute("SELECT count(*), count(DISTINCT item_id) FROM items").fetchall() == [(12, 12)]
    assert check.execute("SELECT count(*) FROM pairs").fetchall() == [(6,)]
    assert check.execute("SELECT status FROM runs WHERE run_id = 'g'").fetchall() == [("finished",)]
    check.close()


def test_generate_keeps_a_budget_and_a_higher_one_finishes(con: Any, tmp_path: Path, db_path: Path) -> None:
    import duckdb

    from jurybench.testing import RateLimits, StubServer
    from tests.conftest import run_cli

    _prompts(tmp_path, 6)
    con.close()
    # RateLimits() with no limits: the stub reports real usage, which litellm prices as gpt-4o-mini.
    with StubServer("A letter.", limits=RateLimits()) as stub:
        spec_file = write(
            tmp_path / "g.yaml",
            "name: g\nprompts: prompts.csv\nuser: '{prompt} ({tone})'\ntreatments: {tone: {arms: [warm, cold]}}\n"
            f"models: ['openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-test,max_tokens=50']\n",
        )
        args = ("generate", str(spec_file), "--run", "g", "--db", str(db_path), "--no-progress", "--concurrency", "1")
        first = run_cli(*args, "--max-cost", "0.00004")  # all 12 cost about $0.000059
        assert first.exit_code == 4, first.stdout + first.stderr
        made = len(stub.requests)
        assert 0 < made < 12
        check = duckdb.connect(str(db_path), read_only=True)
        assert check.execute("SELECT sum(cost_usd) <= 0.00004, count(*) FROM calls").fetchone() == (True, made)
        check.close()
        done = run_cli(*args, "--max-cost", "1")
        assert done.exit_code == 0, done.stderr
        assert len(stub.requests) == 12  # the rest, none twice
    check = duckdb.connect(str(db_path), read_only=True)
    assert check.execute("SELECT count(DISTINCT item_id) FROM items").fetchone() == (12,)


def test_generate_plan_prices_responses_by_max_tokens_and_writes_nothing(
    con: Any, tmp_path: Path, db_path: Path, monkeypatch: Any
) -> None:
    from tests.conftest import run_cli

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _prompts(tmp_path, 3)
    con.close()
    spec_file = write(
        tmp_path / "g.yaml",
        "name: g\nprompts: prompts.csv\nuser: '{prompt} ({tone})'\ntreatments: {tone: {arms: [warm, cold]}}\n"
        "max_tokens: 200\nmodels: ['openai/gpt-4o-mini,api_base=http://127.0.0.1:9/v1']\n",
    )
    out = run_cli("generate", str(spec_file), "--plan", "--db", str(db_path))
    assert out.exit_code == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("openai/gpt-4o-mini"))
    # 3 prompts x 2 arms = 6 responses, each priced at its max_tokens: 6 x 200 = 1,200 output tokens.
    assert " 6 " in row and "1,200 (its max_tokens)" in row
    import duckdb

    check = duckdb.connect(str(db_path), read_only=True)
    assert check.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM generations)").fetchone() == (0, 0)
