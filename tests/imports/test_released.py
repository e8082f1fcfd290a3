"""Issue 58, item 1: every reader on the real released files, not on files of our own shape.
The fixtures in tests/fixtures/released/ are cut from each upstream repository's files, records
as they are (their source, commit and licence in tests/fixtures/released/SOURCES.md)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import run_cli, sql_rows

RELEASED = Path(__file__).resolve().parents[1] / "fixtures" / "released"


def released(tmp_path: Path, name: str) -> Path:
    """A released file as upstream ships it (the gzipped fixtures unpacked, byte for byte)."""
    source = RELEASED / name
    if source.suffix == ".gz":
        target = tmp_path / source.stem
        target.write_bytes(gzip.decompress(source.read_bytes()))
        return target
    return source


def _import(db: Path, file: Path, run: str, *extra: str) -> str:
    done = run_cli("judgments", "import", str(file), "--run", run, *extra, "--db", str(db))
    assert done.exit_code == 0, done.stderr
    return done.stdout


def _agreement(db: Path, run: str, *extra: str) -> dict:  # type: ignore[type-arg]
    done = run_cli("agreement", "--run", run, "--boot", "10", "--format", "json", *extra, "--db", str(db))
    assert done.exit_code == 0, done.stderr
    (block,) = json.loads(done.stdout)
    return block  # type: ignore[no-any-return]


# PandaLM's README (commit 6fdac72) and its test set's description: the judges' accuracy,
# precision, recall and F1 (macro, in %) against the annotators' majority, the annotators'
# Cohen's kappas, and the majority labels' counts (0 tie, 1, 2)
PANDALM_PUBLISHED = {
    "gpt-3.5-turbo": (71.07, 58.79, 57.36, 57.55),
    "pandalm-7b": (66.77, 57.38, 57.50, 57.43),
}
PANDALM_KAPPAS = {
    ("annotator1", "annotator2"): 0.85,
    ("annotator1", "annotator3"): 0.88,
    ("annotator2", "annotator3"): 0.86,
}
PANDALM_LABELS = {"tie": 105, "A": 422, "B": 472}


def test_pandalms_table_from_its_released_files(tmp_path: Path) -> None:
    """One import per released file, then agreement --invalid tie: all 14 published figures.
    The test set's six JSON booleans are kept as text; the judges' files (idx and verdicts only)
    are joined to the test set by idx; gpt-3.5's "Tie" is a tie and its 25 "garbage" answers
    are stored invalid (PandaLM counts them as ties)."""
    db = tmp_path / "panda.duckdb"
    test_set = released(tmp_path, "pandalm/testset-v1.json.gz")
    out = _import(db, test_set, "gpt")
    assert "6 responses given as JSON true/false" in out and "2997 human labels" in out.replace(",", "")
    assert sql_rows(db, "SELECT response FROM items WHERE item_id = 'pandalm-157-1'") == [("true",)]
    assert sql_rows(db, "SELECT model FROM items WHERE item_id = 'pandalm-0-1'") == [("bloom-7b",)]
    for run, file in (("gpt", "gpt-3.5-turbo"), ("panda", "pandalm-7b")):
        out = _import(
            db,
            released(tmp_path, f"pandalm/{file}-testset-v1.json.gz"),
            run,
            "--option",
            f"testset={test_set}",
            "--option",
            f"judge={file}",
        )
        if file == "gpt-3.5-turbo":
            assert "25 unusable judge answers kept as invalid" in out
    counts = dict(
        sql_rows(
            db,
            "SELECT coalesce(CAST(score AS VARCHAR), status), count(*) FROM pairwise_judgments "
            "JOIN jurors USING (juror_key) WHERE name = 'gpt-3.5-turbo' GROUP BY 1",
        )
    )
    assert counts == {"1": 460, "-1": 476, "0": 38, "invalid": 25}
    for run, judge in (("gpt", "gpt-3.5-turbo"), ("panda", "pandalm-7b")):
        block = _agreement(db, run, "--invalid", "tie")
        (row,) = block["jurors"]
        assert row["juror"] == judge and row["n"] == 999
        figures = tuple(round(100 * row[k], 2) for k in ("accuracy", "macro_precision", "macro_recall", "macro_f1"))
        assert figures == PANDALM_PUBLISHED[judge]
        assert block["human_labels"] == PANDALM_LABELS
        kappas = {tuple(p["annotators"]): round(p["cohen_kappa"], 2) for p in block["humans"]["pairs"]}
        assert kappas == PANDALM_KAPPAS


def test_a_pandalm_judges_file_without_its_test_set_is_named_in_one_line(tmp_path: Path) -> None:
    judge = released(tmp_path, "pandalm/pandalm-7b-testset-v1.json.gz")
    done = run_cli("judgments", "import", str(judge), "--run", "p", "--db", str(tmp_path / "x.duckdb"))
    assert done.exit_code == 2 and "--option testset=FILE" in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2 and "Traceback" not in done.stderr
    assert not (tmp_path / "x.duckdb").exists() or sql_rows(tmp_path / "x.duckdb", "SELECT count(*) FROM items") == [
        (0,)
    ]


# Arena-Hard-Auto: the released judgment files (data/arena-hard-v*/model_judgment/...) are absent
# from the offline snapshot of lmarena/arena-hard-auto (listed, too large to hold), so these
# records follow the shape its gen_judgment.py writes at commit 196f6b8 (judgment(): uid,
# category, judge, model, baseline, games; pairwise_judgment(): score, judgment {"answer"},
# prompt [system, user]; https://github.com/lmarena/arena-hard-auto/blob/196f6b8/gen_judgment.py)
# and that v0.1 files rewritten by it have (user_prompt and judgment text in each game).
ARENA_TEMPLATE = (
    "<|User Prompt|>\n{q}\n\n<|The Start of Assistant A's Answer|>\n{a}\n<|The End of Assistant A's Answer|>"
    "\n\n<|The Start of Assistant B's Answer|>\n{b}\n<|The End of Assistant B's Answer|>"
)


def _v2_game(q: str, a: str, b: str, score: str | None) -> dict[str, object]:
    return {
        "score": score,
        "judgment": {"answer": f"My final verdict: [[{score}]]"},
        "prompt": [
            {"role": "system", "content": "judge"},
            {"role": "user", "content": ARENA_TEMPLATE.format(q=q, a=a, b=b)},
        ],
    }


def test_arena_hard_v2_records_as_gen_judgment_writes_them(tmp_path: Path) -> None:
    """v2.0: uid and the record's own baseline; a null game (the call failed) and a null label
    kept invalid; the mirrored label B<<A is A's decisive win; category kept as metadata. Battles
    as show_result.py counts them with weight 3: u1 game 1 A>>B (baseline wins 3), game 2 B<<A
    (model shown as A wins decisively: 3); u2 game 1 A=B (1 tie), game 2 null; u3 game 1 null."""
    q = [("u1", "Sum 2+2.", "4", "5"), ("u2", "Name a colour.", "Red.", "Blue."), ("u3", "Say hi.", "Hi", "Hey")]
    lines = [
        {
            "uid": "u1",
            "category": "hard_prompt",
            "judge": "gpt-4.1",
            "model": "qwq-32b",
            "baseline": "o3-mini",
            "games": [_v2_game(q[0][1], q[0][2], q[0][3], "A>>B"), _v2_game(q[0][1], q[0][3], q[0][2], "B<<A")],
        },
        {
            "uid": "u2",
            "category": "creative_writing",
            "judge": "gpt-4.1",
            "model": "qwq-32b",
            "baseline": "o3-mini",
            "games": [_v2_game(q[1][1], q[1][2], q[1][3], "A=B"), None],
        },
        {
            "uid": "u3",
            "category": "hard_prompt",
            "judge": "gpt-4.1",
            "model": "qwq-32b",
            "baseline": "o3-mini",
            "games": [None, _v2_game(q[2][1], q[2][3], q[2][2], None)],
        },
    ]
    file = tmp_path / "qwq-32b.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    db = tmp_path / "a.duckdb"
    out = _import(db, file, "v2")
    assert "3 games without a verdict label kept as invalid" in out and "baseline model: o3-mini" in out
    assert sql_rows(db, "SELECT item_id, response, model, metadata->>'category' FROM items ORDER BY 1") == [
        ("arena-u1-o3-mini", "4", "o3-mini", "hard_prompt"),
        ("arena-u1-qwq-32b", "5", "qwq-32b", "hard_prompt"),
        ("arena-u2-o3-mini", "Red.", "o3-mini", "creative_writing"),
        ("arena-u2-qwq-32b", "Blue.", "qwq-32b", "creative_writing"),
        ("arena-u3-o3-mini", "Hi", "o3-mini", "hard_prompt"),  # read from game 2, where it is B
        ("arena-u3-qwq-32b", "Hey", "qwq-32b", "hard_prompt"),
    ]
    scores = sql_rows(db, "SELECT pair_id, presented_order, score, status FROM pairwise_judgments ORDER BY 1, 2")
    assert scores == [  # in the order shown: the first-shown answer's margin
        ("arena-u1-qwq-32b-vs-o3-mini", "AB", 2, "valid"),
        ("arena-u1-qwq-32b-vs-o3-mini", "BA", 2, "valid"),  # B<<A: the model, shown first, won decisively
        ("arena-u2-qwq-32b-vs-o3-mini", "AB", 0, "valid"),
        ("arena-u2-qwq-32b-vs-o3-mini", "BA", None, "invalid"),
        ("arena-u3-qwq-32b-vs-o3-mini", "AB", None, "invalid"),
        ("arena-u3-qwq-32b-vs-o3-mini", "BA", None, "invalid"),
    ]
    board = run_cli(
        "stats", "leaderboard", "--run", "v2", "--strong", "2:3", "--boot", "20", "--format", "json", "--db", str(db)
    )
    assert board.exit_code == 0, board.stderr
    models = {m["model"]: m for m in json.loads(board.stdout)["result"]["boards"]["jury"]["models"]}
    assert models["qwq-32b"]["battles"] == 7 and models["qwq-32b"]["wins"] == 3 and models["qwq-32b"]["ties"] == 1


def test_arena_hard_v01_records_with_uid_import(tmp_path: Path) -> None:
    """v0.1 files as the current repository holds them: uid, baseline named, games with
    user_prompt and judgment text."""
    record = {
        "uid": "b4b1",
        "category": "arena-hard-v0.1",
        "judge": "gpt-4-1106-preview",
        "model": "gpt-4-0613",
        "baseline": "gpt-4-0314",
        "games": [
            {"user_prompt": ARENA_TEMPLATE.format(q="Odd?", a="base", b="mine"), "judgment": "[[A>B]]", "score": "A>B"},
            {"user_prompt": ARENA_TEMPLATE.format(q="Odd?", a="mine", b="base"), "judgment": "[[B>A]]", "score": "B>A"},
        ],
    }
    file = tmp_path / "gpt-4-0613.jsonl"
    file.write_text(json.dumps(record) + "\n", encoding="utf-8")
    db = tmp_path / "a.duckdb"
    _import(db, file, "v01")
    # game 2's B>A: the baseline, shown second, is better: -1 in the order shown
    assert sql_rows(db, "SELECT presented_order, score FROM pairwise_judgments ORDER BY 1") == [("AB", 1), ("BA", -1)]
    assert sql_rows(db, "SELECT response FROM items WHERE item_id = 'arena-b4b1-gpt-4-0613'") == [("mine",)]


def _alpaca_store(tmp_path: Path, name: str, models: tuple[str, ...]) -> Path:
    db = tmp_path / f"{name}.duckdb"
    for model in models:
        _import(db, released(tmp_path, f"alpaca_eval/{model}.annotations.json.gz"), "ae")
    return db


def test_alpaca_eval_annotations_as_released(tmp_path: Path) -> None:
    """AlpacaEval 2's weighted annotations of phi-2 and phi-2-sft (the first 40 records of each):
    the win-rate figures equal AlpacaEval's get_winrate on the same records (win_rate: 100 mean
    of preference - 1, a draw 0 counted 1.5; n_wins: preference above 1.5), and the
    length-controlled figure does not depend on the order the two files were imported in."""
    expected = {}
    for model in ("phi-2", "phi-2-sft"):
        rows = json.loads(released(tmp_path, f"alpaca_eval/{model}.annotations.json.gz").read_text(encoding="utf-8"))
        prefs = [1.5 if r["preference"] == 0 else r["preference"] for r in rows if r["preference"] is not None]
        expected[model] = (100 * sum(p - 1 for p in prefs) / len(prefs), sum(p > 1.5 for p in prefs), len(prefs))
    difficulty = tmp_path / "difficulty.csv"
    difficulty.write_text("index,instruction_difficulty\n" + "".join(f"{k},{(k % 7) / 3 - 1}\n" for k in range(40)))
    outputs = []
    for name, order in (("forward", ("phi-2", "phi-2-sft")), ("reverse", ("phi-2-sft", "phi-2"))):
        db = _alpaca_store(tmp_path, name, order)
        done = run_cli(
            "stats",
            "winrate",
            "--run",
            "ae",
            "--reference",
            "gpt4_1106_preview",
            "--length-controlled",
            "alpaca-eval",
            "--difficulty",
            str(difficulty),
            "--format",
            "json",
            "--db",
            str(db),
        )
        assert done.exit_code == 0, done.stderr
        models = {m["model"]: m for m in json.loads(done.stdout)["result"]["boards"]["jury"]["models"]}
        for model, (rate, wins, n) in expected.items():
            assert models[model]["win_rate"] == pytest.approx(rate, abs=1e-9)
            assert (models[model]["n_wins"], models[model]["n_total"]) == (wins, n)
        outputs.append(models)
    assert outputs[0] == outputs[1]


def test_mt_bench_single_and_pair_judgments_as_fastchat_writes_them(tmp_path: Path) -> None:
    """FastChat's gen_judgment.py output (gpt-4_single.jsonl and gpt-4_pair.jsonl, 24 lines each:
    single-v1, multi-turn and math prompts; pair-v2 and pair-math-v1): every grade stored as
    given, per (question, turn); every pair's symmetrized score the mean of its two games in the
    pair's frame (model_1 phi-3 is item_a: g1 shows it first, g2 second)."""
    db = tmp_path / "mt.duckdb"
    single = released(tmp_path, "mt_bench/gpt-4_single.jsonl.gz")
    _import(db, single, "single")
    given = {}
    for line in single.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        given[f"mtbench-{r['question_id']}-{r['model']}-t{r['turn']}"] = float(r["score"])
    stored = dict(sql_rows(db, "SELECT item_id, juror_score FROM juror_pointwise WHERE run_id = 'single'"))
    assert stored == given and len(given) == 24
    # a multi-turn prompt shows the conversation as Assistant A's; the item is the second turn
    ((prompt, response),) = sql_rows(db, "SELECT prompt, response FROM items WHERE item_id = 'mtbench-81-phi-3-dpo-t2'")
    assert prompt.startswith("Rewrite your previous response. Start every sentence with the letter A.")
    assert response and "### User:" not in response and "Compose an engaging travel blog" not in prompt
    pair = released(tmp_path, "mt_bench/gpt-4_pair.jsonl.gz")
    _import(db, pair, "pair")
    side = {"model_1": 1.0, "model_2": -1.0, "tie": 0.0}
    expected = {}
    for line in pair.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        assert (r["model_1"], r["model_2"]) == ("phi-3", "phi-3-dpo")  # name order: model_1 is item_a
        key = f"mtbench-{r['question_id']}-t{r['turn']}-phi-3-vs-phi-3-dpo"
        expected[key] = (side[r["g1_winner"]] + side[r["g2_winner"]]) / 2
    stored = dict(sql_rows(db, "SELECT pair_id, juror_epsilon FROM juror_pairwise WHERE run_id = 'pair'"))
    assert stored == expected and len(expected) == 24


def _inspect_samples(path: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    import zipfile

    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            header = json.loads(archive.read("header.json"))
            names = [n for n in archive.namelist() if n.startswith("samples/")]
            return header, [json.loads(archive.read(n)) for n in names]
    data = json.loads(path.read_text(encoding="utf-8"))
    return data, data["samples"]


@pytest.mark.parametrize(
    "name",
    [
        "2025-05-12T20-28-13-04-00_popularity.json",
        "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
        "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json",
        "2024-11-05T13-32-37-05-00_input-task_hxs4q9azL3ySGkjJirypKZ.eval",
    ],
)
def test_inspect_logs_from_inspects_own_repository(tmp_path: Path, name: str) -> None:
    """Logs Inspect AI itself wrote (its repository's test logs, .json and .eval): every sample's
    scorer value stored as Inspect's value_to_float reads it (C 1, I 0), on the item named by
    task, sample id, epoch and model, with the model's output as the response."""
    file = released(tmp_path, f"inspect/{name}")
    header, samples = _inspect_samples(file)
    task, model = header["eval"]["task"], header["eval"]["model"]  # type: ignore[index]
    expected, responses = {}, {}
    for sample in samples:
        item = f"inspect-{task}-{sample['id']}-e{sample.get('epoch', 1)}-{model}"
        for scorer, score in (sample.get("scores") or {}).items():  # type: ignore[union-attr]
            expected[(item, scorer)] = {"C": 1.0, "I": 0.0}[score["value"]]
        output = sample["output"]
        responses[item] = output.get("completion") or output["choices"][0]["message"]["content"]  # type: ignore[index]
    db = tmp_path / "i.duckdb"
    _import(db, file, "inspect")
    stored = {(i, j): s for i, j, s in sql_rows(db, "SELECT item_id, juror, juror_score FROM juror_pointwise")}
    assert stored == expected and expected
    assert dict(sql_rows(db, "SELECT item_id, response FROM items")) == responses


# lm-evaluation-harness: no samples file is in its repository, so these lines are written as its
# evaluation tracker writes them (lm_eval/loggers/evaluation_tracker.py, save_results_samples,
# at commit 4e7e0d4: arguments as gen_args_N / arg_M, responses sanitized to text, target as
# text) with the fields of SampleResult in lm_eval/result_schema.py (the documented field list,
# https://github.com/EleutherAI/lm-evaluation-harness/blob/4e7e0d4/lm_eval/result_schema.py).
def _lm_eval_line(
    doc_id: int,
    arguments: list[tuple[str, object]],
    resps: list,
    filtered: list,
    filter_name: str,
    metrics: dict[str, float],
    target: object,
) -> str:
    sample = {
        "doc_id": doc_id,
        "doc": {"question": f"Q{doc_id}"},
        "target": str(target),
        "arguments": {f"gen_args_{i}": {f"arg_{j}": a for j, a in enumerate(arg)} for i, arg in enumerate(arguments)},
        "resps": resps,
        "filtered_resps": filtered,
        "filter": filter_name,
        "metrics": list(metrics),
        "doc_hash": "d",
        "prompt_hash": "p",
        "target_hash": "t",
        **metrics,
    }
    return json.dumps(sample, ensure_ascii=False) + "\n"


def test_lm_eval_samples_as_its_evaluation_tracker_writes_them(tmp_path: Path) -> None:
    """A generation task with two filters (two lines per document: each filter its own judge)
    and a multiple-choice task (the response is the choice ranked highest)."""
    folder = tmp_path / "my-model"
    folder.mkdir()
    gen = folder / "samples_gsm8k_2026-01-02T03-04-05.678901.jsonl"
    gen.write_text(
        _lm_eval_line(
            0, [("Q: 2+2?", {"until": ["\n"]})], [["It is 4. #### 4"]], ["4"], "strict-match", {"exact_match": 1.0}, 4
        )
        + _lm_eval_line(
            0,
            [("Q: 2+2?", {"until": ["\n"]})],
            [["It is 4. #### 4"]],
            ["4"],
            "flexible-extract",
            {"exact_match": 1.0},
            4,
        )
        + _lm_eval_line(
            1, [("Q: 3+3?", {"until": ["\n"]})], [["Six, 6"]], ["[invalid]"], "strict-match", {"exact_match": 0.0}, 6
        )
        + _lm_eval_line(
            1, [("Q: 3+3?", {"until": ["\n"]})], [["Six, 6"]], ["6"], "flexible-extract", {"exact_match": 1.0}, 6
        ),
        encoding="utf-8",
    )
    mc = folder / "samples_arc_easy_2026-01-02T03-04-05.678901.jsonl"
    choices = [("Sky is", " blue"), ("Sky is", " green")]
    mc.write_text(
        _lm_eval_line(
            0,
            choices,
            [[["-1.5", "True"]], [["-4.0", "False"]]],
            [["-1.5", "True"], ["-4.0", "False"]],
            "none",
            {"acc": 1.0, "acc_norm": 1.0},
            0,
        ),
        encoding="utf-8",
    )
    db = tmp_path / "lm.duckdb"
    _import(db, gen, "gsm8k")
    assert sorted(sql_rows(db, "SELECT item_id, juror, juror_score FROM juror_pointwise WHERE run_id = 'gsm8k'")) == [
        ("lm-eval-gsm8k-0-my-model", "exact_match:flexible-extract", 1.0),
        ("lm-eval-gsm8k-0-my-model", "exact_match:strict-match", 1.0),
        ("lm-eval-gsm8k-1-my-model", "exact_match:flexible-extract", 1.0),
        ("lm-eval-gsm8k-1-my-model", "exact_match:strict-match", 0.0),
    ]
    assert sql_rows(db, "SELECT prompt, response FROM items WHERE item_id = 'lm-eval-gsm8k-1-my-model'") == [
        ("Q: 3+3?", "Six, 6")
    ]
    _import(db, mc, "arc")
    assert sql_rows(db, "SELECT response, reference FROM items WHERE item_id = 'lm-eval-arc_easy-0-my-model'") == [
        ("blue", "0")
    ]
    assert sql_rows(db, "SELECT juror, juror_score FROM juror_pointwise WHERE run_id = 'arc'") == [("acc", 1.0)]


def test_promptfoo_export_from_promptfoos_own_fixtures(tmp_path: Path) -> None:
    """promptfoo's sample export (its test/__fixtures__/sample-export.json: two riddles, two
    providers, llm-rubric beside cost, latency and contains assertions): the llm-rubric grades
    become judgments (four, all 1), the other assertions are not a model's grade and are left out,
    and each item carries its prompt and the provider's output."""
    file = RELEASED / "promptfoo" / "sample-export.json"
    released_rows = json.loads(file.read_text(encoding="utf-8"))["results"]["results"]
    db = tmp_path / "pf.duckdb"
    out = _import(db, file, "pf")
    assert "4 judgments" in out
    stored = sql_rows(db, "SELECT item_id, juror, juror_score FROM juror_pointwise ORDER BY 1")
    assert stored == [
        ("promptfoo-0-0-openai:gpt-5", "llm-rubric", 1.0),
        ("promptfoo-0-1-openai:gpt-5-mini", "llm-rubric", 1.0),
        ("promptfoo-1-0-openai:gpt-5", "llm-rubric", 1.0),
        ("promptfoo-1-1-openai:gpt-5-mini", "llm-rubric", 1.0),
    ]
    items = dict(sql_rows(db, "SELECT item_id, response FROM items"))
    for row in released_rows:
        key = f"promptfoo-{row['testIdx']}-{row['promptIdx']}-{row['provider']['id']}"
        assert items[key] == row["response"]["output"]
    reasons = {r for (r,) in sql_rows(db, "SELECT response_text FROM calls")}
    assert "The output does not contain any apology or apologetic language." in reasons


def test_python_and_the_command_line_take_a_released_file_alike(tmp_path: Path) -> None:
    """Issue 52: judgments import is declared once, so Store.import_judgments takes a file as
    released (detected, or fmt=) as the command line does, and refuses what it refuses."""
    import jurybench as jb
    from jurybench.errors import JurybenchError

    file = released(tmp_path, "alpaca_eval/phi-2.annotations.json.gz")
    cli_db, py_db = tmp_path / "cli.duckdb", tmp_path / "py.duckdb"
    _import(cli_db, file, "ae")
    with jb.open(py_db) as store:
        bundle = store.import_judgments(file, run="ae")  # detected: alpaca-eval
        with pytest.raises(JurybenchError, match="--continuous is for files of one judgment a row"):
            store.import_judgments(file, run="again", continuous=True)
        with pytest.raises(JurybenchError, match="--option is for released formats"):
            store.import_judgments([{"pair_id": "p"}], run="rows", rubric="preference", juror="j", options={"a": "b"})
    assert getattr(bundle, "format", None) == "alpaca-eval"
    query = "SELECT juror_key, count(*) FROM calls GROUP BY ALL ORDER BY ALL"
    assert sql_rows(py_db, query) == sql_rows(cli_db, query) and sql_rows(py_db, query)
