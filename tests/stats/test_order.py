"""Issue 58, item 2: no figure depends on the order rows were stored in. The same files are
imported into two stores, once as written and once with every file's rows reversed, the same
runs are scored, and every statistic gives the same output in both (folds, bootstrap resamples,
permutations and sequential looks read rows in a defined order, not in storage order)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, write

PROMPTS, MODELS = 10, ("m1", "m2", "m3", "m4")


def _lines(header: str, rows: list[str], reverse: bool) -> str:
    return "\n".join([header, *(reversed(rows) if reverse else rows)]) + "\n"


def _draw(*parts: object) -> int:
    return int(hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest(), 16)


def _store(root: Path, reverse: bool) -> Path:
    root.mkdir()
    db = str(root / "s.duckdb")
    items, pairs, prefs, labels, votes = [], [], [], [], []
    for p in range(PROMPTS):
        for m in MODELS:
            for g in ("f", "m"):
                words = " ".join(["word"] * (1 + _draw(p, m, g) % 40))
                items.append(
                    f"p{p}-{m}-{g},Prompt {p},Reply {p} {m} {g} {words},{m},{g},{'north' if p % 2 else 'south'}"
                )
                for annotator in ("h1", "h2"):
                    labels.append(f"p{p}-{m}-{g},{annotator},coherence,{1 + _draw(p, m, g, annotator) % 5}")
            pairs.append(f"p{p}-{m},p{p}-{m}-f,p{p}-{m}-m")
            if m != "m1":
                prefs.append(f"p{p}-{m}-vs-m1,p{p}-m1-f,p{p}-{m}-f")
                for annotator in ("h1", "h2", "h3"):
                    verdict = ("A", "B", "tie")[_draw(p, m, annotator) % 3]
                    votes.append(f"p{p}-{m}-vs-m1,{annotator},preference,{verdict}")
    files = {
        "items": write(root / "items.csv", _lines("item_id,prompt,response,model,gender,region", items, reverse)),
        "pairs": write(root / "pairs.csv", _lines("pair_id,item_a,item_b", pairs + prefs, reverse)),
        "labels": write(root / "labels.csv", _lines("item_id,annotator,criterion,value", labels, reverse)),
        "votes": write(root / "votes.csv", _lines("pair_id,annotator,criterion,value", votes, reverse)),
        "trials": write(root / "trials.jsonl", _trials(reverse)),
    }
    steps = [
        ["items", "import", str(files["items"]), "--treatment", "gender"],
        ["pairs", "import", str(files["pairs"])],
        ["score", "-r", "story-quality", "-j", "fake/a", "-j", "fake/b,seed=2", "--run", "qual"],
        [
            "score",
            "-r",
            "persuasion",
            "-j",
            "fake/a,position_bias=0.5",
            "-j",
            "fake/b",
            "--run",
            "pers",
            "--where",
            "pair_id NOT LIKE '%-vs-%'",
        ],
        ["score", "-r", "persuasion", "-j", "fake/c", "--run", "pers2", "--where", "pair_id NOT LIKE '%-vs-%'"],
        ["score", "-r", "story-quality", "-j", "fake/a", "-j", "fake/b,seed=3", "--run", "qual2"],
        [
            "score",
            "-r",
            "preference",
            "-j",
            "fake/a",
            "-j",
            "fake/b",
            "-j",
            "fake/c",
            "--run",
            "pref",
            "--where",
            "pair_id LIKE '%-vs-%'",
        ],
        ["annotations", "sample", "--run", "qual", "--n", "24", "--seed", "5"],
        ["annotations", "import", str(files["labels"]), "-r", "story-quality"],
        ["annotations", "import", str(files["votes"]), "-r", "preference"],
        ["items", "import", str(files["trials"]), "--format", "openai-chat"],
    ]
    for step in steps:
        done = run_cli(*step, *(["--no-progress"] if step[0] == "score" else []), "--db", db)
        assert done.exit_code == 0, (step, done.stderr)
    return root


def _trials(reverse: bool) -> str:
    """Repeated trials of tasks as OpenAI chat records (for pass-k), in the file's order or reversed."""
    lines = []
    for t in range(8):
        for trial in range(3):
            passed = _draw(t, trial, "trial") % 3 != 0
            messages = [{"role": "user", "content": f"task {t}"}, {"role": "assistant", "content": f"done {trial}"}]
            record = {
                "id": f"t{t}-{trial}",
                "task_id": f"t{t}",
                "trial": trial,
                "passed": passed,
                "outcome": int(passed),
            }
            lines.append(json.dumps({**record, "messages": messages}))
    return "\n".join(reversed(lines) if reverse else lines) + "\n"


def _files(root: Path) -> None:
    write(root / "ranking.csv", "group,value\nm1,1\nm2,2\nm3,3\nm4,4\n")
    write(
        root / "difficulty.csv",
        "instruction,instruction_difficulty\n" + "".join(f"Prompt {p},{(p % 5) / 2 - 1}\n" for p in range(PROMPTS)),
    )


def _calls(root: Path) -> dict[str, list[str]]:
    ranking, difficulty = root / "ranking.csv", root / "difficulty.csv"
    gender = ["--arm", "treatment->>'gender'", "--arms", "f,m"]
    return {
        "directional": ["--run", "pers", "--by", "model_a"],
        "gap": ["--run", "pers", "--by", "model_a", "--boot", "200", "--seed", "3"],
        "gap-clusters": ["gap", "--run", "pers", "--boot", "200", "--resample", "clusters:prompt"],
        "consistency": ["--run", "pers"],
        "robustness": ["--run", "pers", "--other-run", "pers2"],
        "friedman": ["--run", "qual", "--by", "model"],
        "ttest": ["--run", "qual", "--by", "model", "--baseline", "3"],
        "welch": ["--run", "qual", "--by", "treatment->>'gender'", "--groups", "f,m"],
        "mannwhitney": ["--run", "qual", "--by", "treatment->>'gender'", "--groups", "f,m"],
        "kendall": ["--run", "qual", "--baseline-file", str(ranking)],
        "cohens-d": ["--run", "qual", *gender, "--boot", "200"],
        "item-spearman": ["--run", "qual", *gender, "--by", "metadata->>'region'"],
        "disparity": [
            "--sql",
            "SELECT i.model AS grp, j.criterion AS category, (j.jury_score >= 3)::INT AS correct, 0 AS invalid "
            "FROM jury_pointwise j JOIN items i USING (item_id) WHERE j.run_id = 'qual'",
            "--boot",
            "200",
        ],
        "leaderboard": ["--run", "pref", "--boot", "200"],
        "leaderboard-jurors": ["leaderboard", "--run", "pref", "--level", "juror", "--boot", "100"],
        "power": ["--run", "qual", *gender],
        "winrate": ["--run", "pref", "--reference", "m1", "--length-controlled", "glm"],
        "winrate-alpaca": [
            "winrate",
            "--run",
            "pref",
            "--reference",
            "m1",
            "--length-controlled",
            "alpaca-eval",
            "--difficulty",
            str(difficulty),
        ],
        "sequential": ["--run", "qual", "--criterion", "coherence"],
        "ppi": ["--run", "qual", "--criterion", "coherence", "--by", "model"],
        "ppi-compare": ["ppi", "--run", "qual", "--criterion", "coherence", "--by", "model", "--compare", "m1,m2"],
        "bias": ["--run", "qual"],
        "bias-pairwise": ["bias", "--run", "pref"],
        "drift": ["--to", "qual2", "--from", "qual"],
        "pass-k": ["--where", "task_id LIKE 't%'"],
    }


# the commands beside the statistics that resample or fold: agreement's bootstrap, calibration's
# held-out folds and bootstrap, jury selection's folds
OTHERS = {
    "agreement": ["agreement", "--run", "qual", "--boot", "200"],
    "agreement-preference": ["agreement", "--run", "pref", "--boot", "200"],
    "calibrate": ["calibrate", "--run", "qual", "--folds", "4", "--boot", "100"],
    "jury-select": ["jury", "select", "--run", "qual", "--folds", "4"],
}


def commands(root: Path) -> dict[str, list[str]]:
    """Every call above as a command line (the statistics under ``stats``)."""
    return {
        name: ["stats", *([args[0], *args[1:]] if not args[0].startswith("--") else [name, *args])]
        for name, args in _calls(root).items()
    } | {
        name: [*args, *(["--out", str(root / "calibration")] if name == "calibrate" else [])]
        for name, args in OTHERS.items()
    }


def _outputs(root: Path) -> dict[str, Any]:
    _files(root)
    out = {}
    db = ["--db", str(root / "s.duckdb")]
    for name, command in commands(root).items():
        done = run_cli(*command, "--format", "json", *db)
        assert done.exit_code == 0, (name, done.stderr)
        result = json.loads(done.stdout)
        result = result.get("result", result) if isinstance(result, dict) else result
        if isinstance(result, dict):
            result.pop("created_at", None)
        out[name] = json.loads(json.dumps(result).replace(str(root), "ROOT"))
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    base = tmp_path_factory.mktemp("order")
    return _outputs(_store(base / "forward", False)), _outputs(_store(base / "reverse", True))


def test_every_builtin_statistic_is_called() -> None:
    from jurybench.stats import statistics

    called = {args[0] if not args[0].startswith("--") else name for name, args in _calls(Path(".")).items()}
    assert set(statistics()) <= called


@pytest.mark.parametrize("name", [*_calls(Path(".")), *OTHERS])
def test_the_same_files_imported_in_two_orders_give_the_same_figures(
    name: str, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    forward, reverse = both
    assert forward[name] == reverse[name]
