"""Issue 82, item 4: every number a user can type is handled. Each declared number names its kind
(jurybench.declare.NUMBERS), whose bounds every face keeps; what a server grants is the HTTP
body's alone; a value the help documents beyond the bounds is accepted on every face; and the
inputs that reached "a jurybench bug" or a 500 are one line with exit code 2."""

from __future__ import annotations

import csv
import gzip
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest

import jurybench as jb
from jurybench.declare import NUMBERS, Parameter, check_bounds, param, parameters_of
from jurybench.errors import JurybenchError
from tests.conftest import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "released"


def _declared() -> Iterator[tuple[str, Callable[..., object]]]:
    """Every declared function: score, generate, the declared commands and the statistics."""
    from jurybench import api
    from jurybench.stats import statistics
    from tests.test_declare import DECLARED_COMMANDS

    yield "score", jb.score
    yield "generate", jb.generate
    for path, (name, _, _) in DECLARED_COMMANDS.items():
        yield path, getattr(api, name)
    for name, stat in statistics().items():
        yield f"stats {name}", stat.compute


def _numbers() -> list[tuple[str, Parameter]]:
    out = []
    for owner, function in _declared():
        for p in parameters_of(function):
            args = getattr(p.annotation, "__args__", None) or (p.annotation,)
            if any(a in (int, float) for a in args):
                out.append((owner, p))
    return out


NUMBERED = _numbers()


def test_every_declared_number_names_a_kind_and_a_new_one_cannot_forget() -> None:
    assert len(NUMBERED) > 60
    assert all(p.meaning.number in NUMBERS for _, p in NUMBERED)

    def forgetful(con: object, *, seed: Annotated[int, param("A seed.")] = 0) -> None: ...

    with pytest.raises(JurybenchError, match="'seed' is a number; say which kind"):
        parameters_of(forgetful)


# What each kind of number can never be, on any face.
NEVER: dict[str, list[object]] = {
    "seed": [-1, 2**63, 2**64, 1.5],
    "count": [-1, 2.5],
    "alpha": [0.0, 1e-300, 1.0, 2.0],
    "share": [-0.1, 1.1],
    "dollars": [-1.0],
    "seconds": [0.0, -5.0],
    "amount": [-0.5],
    "value": [],
}


@pytest.mark.parametrize(("owner", "p"), NUMBERED, ids=[f"{o}:{p.name}" for o, p in NUMBERED])
def test_every_declared_number_refuses_what_its_kind_cannot_be_on_every_face(owner: str, p: Parameter) -> None:
    """Seeds -1, 2^63 and 2^64 (anchors add took them and crashed), an alpha of 1e-300 (empty
    intervals and NaN with exit 0), a fractional count, infinity: one line on every face that
    offers the parameter, naming it as that face does; its default passes."""
    assert p.meaning.number is not None
    bad = [*NEVER[p.meaning.number], math.inf, math.nan]
    for face in sorted(p.meaning.faces):
        for value in bad:
            if value in p.meaning.special:
                continue
            with pytest.raises(JurybenchError, match=p.label(face).replace("-", r"\-")):
                check_bounds(p, value, face)
        if isinstance(p.default, int | float) and not isinstance(p.default, bool):
            check_bounds(p, p.default, face)


def test_a_value_the_help_documents_is_accepted_on_every_face(tmp_path: Path) -> None:
    """stats disparity --max-invalid-rate -1 ("negative: keep all", the emotion-classification
    study's documented use) exited 2 once the bounds were declared for every face."""
    specials = [(o, p) for o, p in NUMBERED if p.meaning.special]
    assert ("stats disparity", "max_invalid_rate") in [(o, p.name) for o, p in specials]
    for _, p in specials:
        assert any(str(v).rstrip("0").rstrip(".") in p.meaning.help for v in p.meaning.special), p.name
        for face in p.meaning.faces:
            for value in p.meaning.special:
                check_bounds(p, value, face)
    data = tmp_path / "groups.csv"
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["grp", "category", "correct", "invalid"])
        for k in range(40):
            w.writerow(["en" if k % 2 else "de", f"c{k % 4}", int(k % 3 != 0), int(k % 7 == 0)])
    db = tmp_path / "d.duckdb"
    cli = run_cli(
        "stats", "disparity", "--file", str(data), "--max-invalid-rate", "-1", "--format", "json", "--db", str(db)
    )
    assert cli.exit_code == 0, cli.stdout + cli.stderr
    with jb.open(db) as store:
        assert len(jb.stats.disparity(store, file=data, max_invalid_rate=-1)) > 0
    from tests.service.conftest import make_client

    values = ", ".join(
        f"('{r['grp']}', '{r['category']}', {r['correct']}, {r['invalid']})" for r in csv.DictReader(data.open())
    )
    sql = f"SELECT * FROM (VALUES {values}) AS t(grp, category, correct, invalid)"
    with make_client(db) as client:
        answer = client.post("/v1/stats/disparity", json={"sql": sql, "max_invalid_rate": -1})
        assert answer.status_code == 200, answer.text
        assert client.post("/v1/stats/disparity", json={"sql": sql, "max_invalid_rate": 2}).status_code == 422


# -- the inputs that reached "a jurybench bug" or a 500 ------------------------------------------------
def _one_line(done: Any, *needles: str) -> None:
    text = done.stdout + done.stderr
    assert done.exit_code == 2, text
    assert "Traceback" not in text and "jurybench bug" not in text, text
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


def test_a_score_past_a_floats_range_is_one_line_in_every_reader(tmp_path: Path) -> None:
    """A JSON score of 10**400 (a whole number no float holds) ended in OverflowError in the
    mt-bench-single, lm-eval and row JSONL readers; the message shows it cut short."""
    db = tmp_path / "n.duckdb"
    huge = 10**400
    with gzip.open(FIXTURES / "mt_bench" / "gpt-4_single.jsonl.gz", "rt") as f:
        record = json.loads(f.readline())
    (tmp_path / "single.jsonl").write_text(json.dumps({**record, "score": huge}) + "\n")
    _one_line(
        run_cli(
            "judgments",
            "import",
            str(tmp_path / "single.jsonl"),
            "--run",
            "a",
            "--format",
            "mt-bench-single",
            "--db",
            str(db),
        ),
        "field 'score'",
        "(401 characters) is not a number",
    )
    lm = {
        "doc_id": 0,
        "doc": {},
        "target": "a",
        "arguments": {"gen_args_0": {"arg_0": "q"}},
        "resps": [["a"]],
        "filtered_resps": ["a"],
        "filter": "none",
        "metrics": ["acc"],
        "acc": huge,
    }
    (tmp_path / "samples_t_2024.jsonl").write_text(json.dumps(lm) + "\n")
    _one_line(
        run_cli(
            "judgments",
            "import",
            str(tmp_path / "samples_t_2024.jsonl"),
            "--run",
            "b",
            "--format",
            "lm-eval",
            "--db",
            str(db),
        ),
        "field 'acc'",
        "is outside 0..1",
    )
    (tmp_path / "items.jsonl").write_text(json.dumps({"item_id": "i1", "response": "r", "prompt": "p"}) + "\n")
    assert run_cli("items", "import", str(tmp_path / "items.jsonl"), "--db", str(db)).exit_code == 0
    (tmp_path / "rows.jsonl").write_text(json.dumps({"item_id": "i1", "criterion": "coherence", "score": huge}) + "\n")
    _one_line(
        run_cli(
            "judgments",
            "import",
            str(tmp_path / "rows.jsonl"),
            "--run",
            "c",
            "--rubric",
            "story-quality",
            "--juror",
            "j",
            "--db",
            str(db),
        ),
        "row 1, field 'score'",
    )
    assert run_cli("sql", "SELECT count(*) AS n FROM runs", "--format", "csv", "--db", str(db)).stdout == "n\n0\n"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("numbers") / "b.duckdb"
    with jb.open(db) as store:
        store.import_items(
            [{"item_id": f"i{k}", "prompt": f"p{k % 20}", "response": f"r {k} " + "w" * (k % 7)} for k in range(60)]
        )
        jb.score(store, rubric="story-quality", jury=["sim/a,noise=0.5", "sim/b,noise=0.7"], run="r")
        store.simulate_annotations(rubric="story-quality")
    assert run_cli("annotations", "sample", "--run", "r", "--n", "20", "--db", str(db)).exit_code == 0
    return db


@pytest.mark.parametrize("seed", ["-1", str(2**63), str(2**64)])
def test_anchors_add_refuses_a_seed_outside_what_a_seed_can_be(labelled: Path, seed: str) -> None:
    _one_line(
        run_cli("anchors", "add", "--run", "r", "--n", "5", "--seed", seed, "--db", str(labelled)),
        "--seed must be a whole number from 0 to 2^63 - 1",
    )


def test_ppi_plans_any_width_and_refuses_an_alpha_too_small_to_mean_anything(labelled: Path) -> None:
    """--plan --width 1e300 crashed (OverflowError); --alpha 1e-300 printed empty intervals."""
    plan = run_cli(
        "stats", "ppi", "--run", "r", "--plan", "--width", "1e300", "--format", "json", "--db", str(labelled)
    )
    assert plan.exit_code == 0, plan.stderr
    rows = json.loads(plan.stdout)["result"]["rows"]
    assert {r["labels_with_jury"] for r in rows} == {2} == {r["labels_without_jury"] for r in rows}  # the fewest
    table = run_cli("stats", "ppi", "--run", "r", "--plan", "--width", "1e300", "--db", str(labelled))
    assert "1e+300" in table.stdout and "0000000000" not in table.stdout
    _one_line(
        run_cli("stats", "ppi", "--run", "r", "--alpha", "1e-300", "--db", str(labelled)),
        "--alpha must be at least 1e-10",
    )


def test_a_bias_feature_that_is_infinite_or_nested_a_thousand_deep_is_one_line(labelled: Path) -> None:
    """An infinite feature gave LinAlgError (HTTP 500); a 990-term sql: feature a RecursionError."""
    infinite = "sql:CASE WHEN length(response) > 5 THEN 'infinity'::DOUBLE ELSE 1 END"
    _one_line(run_cli("stats", "bias", "--run", "r", "--feature", infinite, "--db", str(labelled)), "which is infinite")
    deep = "sql:length(response)+" + "+".join(["1"] * 990)  # under the HTTP body's 2,000 characters
    _one_line(run_cli("stats", "bias", "--run", "r", "--feature", deep, "--db", str(labelled)), "nested too deeply")
    from tests.service.conftest import make_client

    with make_client(labelled) as client:
        for feature in (infinite, deep):
            answer = client.post("/v1/stats/bias", json={"run": "r", "feature": [feature]})
            assert answer.status_code == 400, answer.text
