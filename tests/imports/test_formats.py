"""Released judgment formats read as they are (issue 44, item 1): each reader on a small file in
the upstream shape (our own rows), imported with one command, then a statistic on it."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.conftest import run_cli, write


def _db(tmp_path: Path) -> str:
    return str(tmp_path / "formats.duckdb")


def _import(db: str, file: Path, run: str, *extra: str) -> str:
    done = run_cli("judgments", "import", str(file), "--run", run, *extra, "--db", db)
    assert done.exit_code == 0, done.stderr
    return done.stdout


def _nothing_written(db: str) -> bool:
    """A refused import leaves no store behind when it made the file, and no items in one it found."""
    return not Path(db).exists() or _sql(db, "SELECT count(*) FROM items") == [(0,)]


def _sql(db: str, query: str) -> list[tuple[object, ...]]:
    from jurybench.store import connect

    con = connect(Path(db), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _alpaca(model: str, rows: list[tuple[str, str, object]]) -> str:
    return json.dumps(
        [
            {
                "instruction": instruction,
                "output_1": f"reference answer to {instruction}",
                "generator_1": "gpt4_ref",
                "output_2": output,
                "generator_2": model,
                "annotator": "weighted_judge",
                "preference": preference,
                "price_per_example": 0.001,
            }
            for instruction, output, preference in rows
        ]
    )


def test_alpaca_eval_annotations_import_as_released_with_draws_and_failures(tmp_path: Path) -> None:
    """Model x: preferences 1.75, 0 (AlpacaEval's draw code), 1.0 and null (no usable answer):
    p = 0.75, 0.5, 0 over three valid pairs, win rate 100 (1.25/3) = 41.667, one draw. Model y's
    file shares the reference's items. Before, the file was refused ("cannot tell the file
    format") and the documented p_b = preference - 1 turned the draw into -1."""
    db = _db(tmp_path)
    x = write(
        tmp_path / "x" / "annotations.json",
        _alpaca("model-x", [("Q1", "a", 1.75), ("Q2", "b", 0), ("Q3", "c", 1.0), ("Q4", "d", None)]),
    )
    y = write(tmp_path / "y" / "annotations.json", _alpaca("model-y", [("Q1", "e", 2.0), ("Q2", "f", 1.5)]))
    out = _import(db, x, "alpaca")  # detected: no --format
    assert "alpaca-eval: 8 items, 4 pairs" in out and "1 draws (preference 0) read as p_b 0.5" in out
    assert "1 invalid or refusals kept as such" in out
    out = _import(db, y, "alpaca", "--format", "alpaca-eval")
    assert "alpaca-eval: 2 items, 2 pairs" in out  # the reference's answers were there already
    again = _import(db, x, "alpaca")
    assert "0 calls inserted, 4 already present" in again
    stats = run_cli("stats", "winrate", "--run", "alpaca", "--reference", "gpt4_ref", "--format", "json", "--db", db)
    assert stats.exit_code == 0, stats.stderr
    models = {m["model"]: m for m in json.loads(stats.stdout)["result"]["boards"]["jury"]["models"]}
    assert models["model-x"]["n_total"] == 3 and models["model-x"]["n_draws"] == 1
    assert models["model-x"]["win_rate"] == pytest.approx(100 * 1.25 / 3)
    assert models["model-y"]["win_rate"] == pytest.approx(75.0)
    assert _sql(db, "SELECT DISTINCT name FROM jurors") == [("weighted_judge",)]


def _pair_line(question: int, m1: str, m2: str, g1: str, g2: str, a: str, b: str) -> dict[str, object]:
    prompt = (
        f"[User Question]\nQuestion {question}?\n\n[The Start of Assistant A's Answer]\n{a}\n"
        f"[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{b}\n[The End of Assistant B's Answer]"
    )
    return {
        "question_id": question,
        "model_1": m1,
        "model_2": m2,
        "g1_winner": g1,
        "g2_winner": g2,
        "judge": ["gpt-4", "pair-v2"],
        "g1_user_prompt": prompt,
        "g1_judgment": "[[A]]",
        "g2_user_prompt": prompt,
        "g2_judgment": "[[B]]",
        "turn": 1,
        "tstamp": 1.0,
    }


def test_mt_bench_pairwise_single_and_human_judgments(tmp_path: Path) -> None:
    """Pairwise: question 81, model_1 = vicuna, model_2 = alpaca (stored in name order: item_a
    alpaca). g1 (vicuna first) says model_1, g2 (alpaca first) says model_1: consistent, vicuna
    wins both orders; question 82's g2 is an error (invalid). Single: a rating of 8 and a -1
    (unparsed: invalid). Human: two experts and GPT-4 on question 81's pair, given as
    (alpaca, vicuna): expert_0 model_b (vicuna), expert_1 tie."""
    db = _db(tmp_path)
    lines = [
        _pair_line(81, "vicuna", "alpaca", "model_1", "model_1", "V81", "A81"),
        _pair_line(82, "vicuna", "alpaca", "tie", "error", "V82", "A82"),
    ]
    pair_file = write(tmp_path / "gpt-4_pair.jsonl", "".join(json.dumps(r) + "\n" for r in lines))
    out = _import(db, pair_file, "mt-pair")
    assert "mt-bench: 4 items" not in out and "4 items, 2 pairs" in out
    rows = _sql(
        db, "SELECT pair_id, juror_score_ab, juror_score_ba FROM juror_pairwise WHERE run_id = 'mt-pair' ORDER BY 1"
    )
    # item_a = alpaca; vicuna (item_b) wins: shown AB (alpaca first) the first-shown lost (-1),
    # shown BA (vicuna first) the first-shown won (+1); q82: a tie shown BA (vicuna first), AB invalid
    assert rows == [("mtbench-81-t1-alpaca-vs-vicuna", -1.0, 1.0), ("mtbench-82-t1-alpaca-vs-vicuna", None, 0.0)]
    single = [
        {
            "question_id": 81,
            "model": "vicuna",
            "judge": ["gpt-4", "single-v1"],
            "score": 8,
            "turn": 1,
            "user_prompt": "[Question]\nQuestion 81?\n\n[The Start of Assistant's Answer]\nV81\n[The End of Assistant's Answer]",
            "judgment": "Rating: [[8]]",
        },
        {
            "question_id": 82,
            "model": "vicuna",
            "judge": ["gpt-4", "single-v1"],
            "score": -1,
            "turn": 1,
            "user_prompt": "[Question]\nQuestion 82?\n\n[The Start of Assistant's Answer]\nV82\n[The End of Assistant's Answer]",
            "judgment": "no rating",
        },
    ]
    out = _import(
        db, write(tmp_path / "gpt-4_single.jsonl", "".join(json.dumps(r) + "\n" for r in single)), "mt-single"
    )
    assert "mt-bench-single: 0 items" in out  # the answers were stored by the pairwise file
    assert "1 ratings FastChat could not parse (score -1) kept as invalid" in out
    assert _sql(db, "SELECT item_id, juror_score FROM juror_pointwise WHERE run_id = 'mt-single' ORDER BY 1") == [
        ("mtbench-81-vicuna-t1", 8.0),
        ("mtbench-82-vicuna-t1", None),
    ]

    def conversation(answer: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": "Question 81?"}, {"role": "assistant", "content": answer}]

    human = [
        {
            "question_id": 81,
            "model_a": "alpaca",
            "model_b": "vicuna",
            "winner": w,
            "judge": j,
            "turn": 1,
            "conversation_a": conversation("A81"),
            "conversation_b": conversation("V81"),
        }
        for w, j in (("model_b", "expert_0"), ("tie", "expert_1"), ("model_b", "gpt4_pair"))
    ]
    out = _import(db, write(tmp_path / "human.jsonl", "".join(json.dumps(r) + "\n" for r in human)), "mt-human")
    assert "2 human labels" in out
    labels = _sql(
        db, "SELECT annotator, label FROM human_labels WHERE subject_id = 'mtbench-81-t1-alpaca-vs-vicuna' ORDER BY 1"
    )
    assert labels == [("expert_0", "B"), ("expert_1", "tie")]
    agreement = run_cli("agreement", "--run", "mt-human", "--boot", "20", "--format", "json", "--db", db)
    assert agreement.exit_code == 0, agreement.stderr
    (block,) = json.loads(agreement.stdout)
    assert block["human_labels"] == {"tie": 1}  # B and tie share the top count: a tie


def test_arena_hard_games_become_both_orders_with_strong_verdicts(tmp_path: Path) -> None:
    """Game 1 shows the baseline first, game 2 the model. Question q1: "B>>A" then "A>B": the
    model wins decisively (pair frame -2) and then slightly (shown BA, A>B -> pair frame -1).
    q2: "A=B" then null (no verdict: invalid)."""
    db = _db(tmp_path)

    def prompt(question: str, a: str, b: str) -> str:
        return (
            f"<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{a}\n<|The End of Assistant A's Answer|>"
            f"\n\n<|The Start of Assistant B's Answer|>\n{b}\n<|The End of Assistant B's Answer|>"
        )

    lines = [
        {
            "question_id": "q1",
            "model": "m1",
            "judge": "gpt-4-1106-preview",
            "games": [
                {"user_prompt": prompt("Why?", "base", "mine"), "judgment": "[[B>>A]]", "score": "B>>A"},
                {"user_prompt": prompt("Why?", "mine", "base"), "judgment": "[[A>B]]", "score": "A>B"},
            ],
        },
        {
            "question_id": "q2",
            "model": "m1",
            "judge": "gpt-4-1106-preview",
            "games": [
                {"user_prompt": prompt("How?", "base2", "mine2"), "judgment": "[[A=B]]", "score": "A=B"},
                {"user_prompt": prompt("How?", "mine2", "base2"), "judgment": "unclear", "score": None},
            ],
        },
    ]
    out = _import(db, write(tmp_path / "m1.jsonl", "".join(json.dumps(r) + "\n" for r in lines)), "arena")
    assert "baseline model: gpt-4-0314" in out and "1 games without a verdict label kept as invalid" in out
    rows = _sql(
        db, "SELECT pair_id, juror_score_ab, juror_score_ba FROM juror_pairwise WHERE run_id = 'arena' ORDER BY 1"
    )
    # stored in the order shown: game 1 (AB) -2; game 2 (BA): the first shown (the model) won slightly: +1
    assert rows == [("arena-q1-m1-vs-gpt-4-0314", -2.0, 1.0), ("arena-q2-m1-vs-gpt-4-0314", 0.0, None)]
    board = run_cli(
        "stats", "leaderboard", "--run", "arena", "--strong", "2:3", "--boot", "20", "--format", "json", "--db", db
    )
    assert board.exit_code == 0, board.stderr
    models = {m["model"]: m for m in json.loads(board.stdout)["result"]["boards"]["jury"]["models"]}
    # battles: q1 game 1 (decisive: 3), q1 game 2 (1), q2 game 1 a tie (1)
    assert models["m1"]["battles"] == 5 and models["m1"]["wins"] == 4 and models["m1"]["ties"] == 1


def test_pandalm_test_set_and_a_judges_outputs_with_unusable_answers(tmp_path: Path) -> None:
    """Three annotators per pair (0 tie, 1 response1, 2 response2); the judge's file carries
    pandalm_result, one of them unusable (-1). With --invalid tie it counts as a tie, as PandaLM
    counts it: pair 2's humans say tie, so the judge is right there."""
    db = _db(tmp_path)
    base = [
        {
            "motivation_app": "x",
            "instruction": "Sum 2 and 2.",
            "input": "",
            "response1": "4",
            "response2": "5",
            "annotator1": 1,
            "annotator2": 1,
            "annotator3": 0,
        },
        {
            "motivation_app": "x",
            "instruction": "Greet.",
            "input": "formally",
            "response1": "Hello.",
            "response2": "Good day.",
            "annotator1": 0,
            "annotator2": 0,
            "annotator3": 2,
        },
    ]
    test_set = write(tmp_path / "testset-v1.json", json.dumps(base))
    out = _import(db, test_set, "panda")
    assert "6 human labels" in out and "import/" not in out
    judged = [dict(r, pandalm_result=v) for r, v in zip(base, (1, -1), strict=True)]
    out = _import(db, write(tmp_path / "pandalm-7b.json", json.dumps(judged)), "panda", "--option", "judge=pandalm-7b")
    assert "1 unusable judge answers kept as invalid" in out
    drop = json.loads(run_cli("agreement", "--run", "panda", "--boot", "20", "--format", "json", "--db", db).stdout)[0]
    tie = json.loads(
        run_cli(
            "agreement", "--run", "panda", "--boot", "20", "--invalid", "tie", "--format", "json", "--db", db
        ).stdout
    )[0]
    assert drop["jurors"][0]["n"] == 1 and drop["jurors"][0]["accuracy"] == 1.0
    assert tie["jurors"][0]["n"] == 2 and tie["jurors"][0]["accuracy"] == 1.0
    assert _sql(db, "SELECT prompt FROM items WHERE item_id = 'pandalm-1-1'") == [("Greet.\n\nformally",)]


def _inspect_sample(k: int, value: object) -> dict[str, object]:
    return {
        "id": k,
        "epoch": 1,
        "input": [{"role": "user", "content": f"What is {k}+{k}?"}],
        "target": str(2 * k),
        "output": {"model": "m", "completion": str(2 * k if value == "C" else 0)},
        "scores": {"model_graded_qa": {"value": value, "explanation": f"graded {value}"}},
    }


def test_inspect_logs_json_and_eval(tmp_path: Path) -> None:
    """Scores C, P, I and an unknown value X: 1, 0.5, 0 and invalid; the .eval zip holds the same."""
    db = _db(tmp_path)
    samples = [_inspect_sample(k, v) for k, v in enumerate(("C", "P", "I", "X"), start=1)]
    log = {"version": 2, "status": "success", "eval": {"task": "arith", "model": "openai/m"}, "samples": samples}
    out = _import(db, write(tmp_path / "log.json", json.dumps(log)), "inspect")
    assert "1 scores that are not C, P, I, N" in out
    rows = _sql(db, "SELECT item_id, juror_score FROM juror_pointwise WHERE run_id = 'inspect' ORDER BY 1")
    assert [r[1] for r in rows] == [1.0, 0.5, 0.0, None]
    assert rows[0][0] == "inspect-arith-1-e1-openai/m"
    archive = tmp_path / "log.eval"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("header.json", json.dumps({"eval": {"task": "arith", "model": "openai/m2"}}))
        for sample in samples[:2]:
            zipped.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
    _import(db, archive, "inspect-eval")
    assert _sql(
        db, "SELECT count(*) FROM juror_pointwise WHERE run_id = 'inspect-eval' AND juror_score IS NOT NULL"
    ) == [(2,)]


def test_promptfoo_results_and_lm_eval_samples(tmp_path: Path) -> None:
    """promptfoo: two tests, an llm-rubric score 0.8 and a failed one without a score (pass false:
    0); an equals assertion is not a model's grade and is left out. lm-eval: acc 1, 0."""
    db = _db(tmp_path)
    results = {
        "evalId": "e1",
        "results": {
            "version": 3,
            "results": [
                {
                    "testIdx": t,
                    "promptIdx": 0,
                    "provider": {"id": "openai:gpt-x"},
                    "prompt": {"raw": f"Tell joke {t}"},
                    "response": {"output": f"joke {t}"},
                    "success": t == 0,
                    "score": 0.8,
                    "gradingResult": {
                        "pass": t == 0,
                        "score": 0.8,
                        "componentResults": [
                            {
                                "pass": t == 0,
                                **({"score": 0.8} if t == 0 else {}),
                                "reason": "funny" if t == 0 else "not funny",
                                "assertion": {"type": "llm-rubric", "value": "is funny"},
                            },
                            {"pass": True, "score": 1, "assertion": {"type": "equals", "value": "x"}},
                        ],
                    },
                }
                for t in (0, 1)
            ],
        },
    }
    _import(db, write(tmp_path / "results.json", json.dumps(results)), "pf")
    assert _sql(db, "SELECT juror, juror_score FROM juror_pointwise WHERE run_id = 'pf' ORDER BY item_id") == [
        ("llm-rubric", 0.8),
        ("llm-rubric", 0.0),
    ]
    folder = tmp_path / "out" / "my-model"
    lines = [
        {
            "doc_id": d,
            "doc": {"q": f"q{d}"},
            "target": "yes",
            "arguments": [[f"Is {d} even?", {"until": ["\n"]}]],
            "resps": [["yes"]],
            "filtered_resps": ["yes" if d == 0 else "no"],
            "metrics": ["exact_match"],
            "exact_match": 1.0 if d == 0 else 0.0,
        }
        for d in (0, 1)
    ]
    samples = write(
        folder / "samples_evenness_2025-01-02T03-04-05.123.jsonl", "".join(json.dumps(r) + "\n" for r in lines)
    )
    _import(db, samples, "lm")
    assert _sql(db, "SELECT item_id, juror, juror_score FROM juror_pointwise WHERE run_id = 'lm' ORDER BY 1") == [
        ("lm-eval-evenness-0-my-model", "exact_match", 1.0),
        ("lm-eval-evenness-1-my-model", "exact_match", 0.0),
    ]


def test_bad_released_files_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    db = _db(tmp_path)
    bad = write(tmp_path / "annotations.json", _alpaca("model-x", [("Q1", "a", 1.5), ("Q2", "b", 7)]))
    done = run_cli("judgments", "import", str(bad), "--run", "r", "--format", "alpaca-eval", "--db", db)
    assert done.exit_code == 2 and "record 2, field 'preference': 7 is not an AlpacaEval preference" in done.stderr
    assert "Traceback" not in done.stderr
    assert _nothing_written(db)
    unknown = run_cli("judgments", "import", str(bad), "--run", "r", "--format", "nope", "--db", db)
    assert (
        unknown.exit_code == 2
        and "'nope' is not a judgment format" in unknown.stderr
        and "alpaca-eval" in unknown.stderr
    )
    option = run_cli(
        "judgments", "import", str(bad), "--run", "r", "--format", "alpaca-eval", "--option", "x=1", "--db", db
    )
    assert option.exit_code == 2 and "format 'alpaca-eval' has no such option" in option.stderr
    plain = write(tmp_path / "rows.csv", "pair_id,verdict\np,A\n")
    needs = run_cli("judgments", "import", str(plain), "--run", "r", "--db", db)
    assert needs.exit_code == 2 and "--rubric and --juror needed" in needs.stderr
    listed = run_cli("judgments", "formats")
    for name in (
        "alpaca-eval",
        "mt-bench-single",
        "mt-bench-pair",
        "mt-bench-human",
        "arena-hard",
        "pandalm",
        "inspect",
        "promptfoo",
        "lm-eval",
    ):
        assert name in listed.stdout


def test_a_plug_in_format_registers_like_the_built_ins(tmp_path: Path) -> None:
    from jurybench.imports import Bundle, JudgmentFormat, register_format
    from jurybench.imports._formats import REGISTRY

    def read(path: Path, options: object) -> Bundle:
        bundle = Bundle()
        bundle.item({"item_id": "t1", "response": path.read_text().strip()})
        bundle.judge("mine", {"item_id": "t1", "criterion": "score", "score": 1})
        return bundle

    register_format(JudgmentFormat("mine", "a test format", "graded", read))
    try:
        db = _db(tmp_path)
        out = _import(db, write(tmp_path / "x.txt", "an answer\n"), "plug", "--format", "mine")
        assert "mine: 1 items" in out
    finally:
        REGISTRY.unregister("mine")


def test_docs_formats_is_generated_from_the_readers() -> None:
    from jurybench.imports._formats import formats_markdown

    committed = (Path(__file__).parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    assert committed == formats_markdown(), "run make formats-doc"


def test_a_promptfoo_score_given_as_text_is_invalid_not_a_pass(tmp_path: Path) -> None:
    """Issue 57, item 4: a component whose score is the text "0.8" (with pass true) was stored as
    1.0 (its pass); a score that is given but is no number from 0 to 1 is invalid, never coerced."""
    db = _db(tmp_path)
    results = {
        "results": {
            "results": [
                {
                    "testIdx": 0,
                    "promptIdx": 0,
                    "provider": {"id": "openai:gpt-x"},
                    "prompt": {"raw": "Tell a joke"},
                    "response": {"output": "joke"},
                    "gradingResult": {
                        "componentResults": [
                            {"pass": True, "score": "0.8", "assertion": {"type": "llm-rubric", "value": "is funny"}}
                        ]
                    },
                }
            ]
        }
    }
    _import(db, write(tmp_path / "results.json", json.dumps(results)), "pf")
    assert _sql(
        db,
        "SELECT j.score, j.status FROM pointwise_judgments j JOIN run_calls c USING (call_key) WHERE c.run_id = 'pf'",
    ) == [(None, "invalid")]


def test_an_mt_bench_turn_0_is_refused_not_read_as_the_last_turn(tmp_path: Path) -> None:
    db = _db(tmp_path)
    record = {
        "question_id": 81,
        "model_a": "alpaca",
        "model_b": "vicuna",
        "winner": "model_a",
        "judge": "expert_0",
        "turn": 0,
        "conversation_a": [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A"}],
        "conversation_b": [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "V"}],
    }
    path = write(tmp_path / "human.jsonl", json.dumps(record) + "\n")
    done = run_cli("judgments", "import", str(path), "--run", "h", "--format", "mt-bench-human", "--db", db)
    assert done.exit_code == 2 and "record 1, field 'turn': 0 is not a turn" in done.stderr
    assert _nothing_written(db)


def _arena_line(score: object) -> str:
    game = {"user_prompt": "<|User Prompt|>\nWhy?", "judgment": "x", "score": score}
    return json.dumps({"question_id": "q1", "model": "m1", "judge": "j", "games": [game, game]}) + "\n"


def test_hostile_files_are_refused_in_one_line(tmp_path: Path) -> None:
    """Issue 57, item 4: files the red team made, each of which ended in "a jurybench bug" or
    filled memory: deeply nested JSON, UTF-16, an .eval whose header.json is a list or whose
    member decompresses to far more than it looks (a zip bomb), an Arena-Hard score that is a
    list or an object. Each is refused in one line, exit 2, and nothing is written."""
    import zipfile

    from jurybench.imports import _reading as _common

    db = _db(tmp_path)
    cases = [
        (write(tmp_path / "deep.json", "[" * 5000 + "]" * 5000), "alpaca-eval", "nested deeper than 64"),
        (write(tmp_path / "deeper.json", "[" * 100 + "]" * 100), "alpaca-eval", "nested deeper than 64"),
        (write(tmp_path / "deep.jsonl", '{"a": ' * 3000 + "1" + "}" * 3000 + "\n"), "arena-hard", "nested deeper"),
        (write(tmp_path / "arena-list.jsonl", _arena_line(["A>B"])), "arena-hard", "is not a verdict label"),
        (write(tmp_path / "arena-obj.jsonl", _arena_line({"v": "A>B"})), "arena-hard", "is not a verdict label"),
    ]
    utf16 = tmp_path / "annotations16.json"
    utf16.write_bytes(json.dumps([{"instruction": "x"}]).encode("utf-16"))
    cases.append((utf16, "alpaca-eval", "not UTF-8 text"))
    listed = tmp_path / "list.eval"
    with zipfile.ZipFile(listed, "w") as archive:
        archive.writestr("header.json", "[1, 2]")
    cases.append((listed, "inspect", "header.json is a list"))
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "header.json", '{"eval": {"task": "t"}, "pad": "' + " " * (_common.MAX_MEMBER_BYTES + 10) + '"}'
        )
    assert bomb.stat().st_size < 2_000_000  # a few hundred KB that would decompress past 256 MB
    cases.append((bomb, "inspect", "decompresses past 256 MB"))
    for path, fmt, message in cases:
        done = run_cli("judgments", "import", str(path), "--run", "x", "--format", fmt, "--db", db)
        assert done.exit_code == 2, (path.name, done.stdout, done.stderr)
        assert message in done.stderr and "jurybench bug" not in done.stderr, (path.name, done.stderr)
        assert len(done.stderr.strip().splitlines()) <= 2
    assert _nothing_written(db)
