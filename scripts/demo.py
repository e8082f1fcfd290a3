"""The main job on the embedded defaults (``make demo``): real recorded LLM judgments (LLMBar)
replayed through the engine into a DuckDB store and checked against the upstream figures; HANNA's
human and LLM ratings, their agreement and a calibrated jury; runs with fake jurors on our own
example set; the four audit studies on simulated models. No network.

Every step is a ``jurybench`` command, written here as a user would type it, and its whole output
goes to ``demo-out/demo.log``. The steps run one after another in this one Python process
(``jurybench.cli.main``, what the ``jurybench`` executable calls), so the demo pays for starting
Python and importing numpy, scipy, scikit-learn and DuckDB once rather than 33 times; typed one at a
time, each command costs about half a second to a second more. On screen: the sections and, at the
end, what the demo found (``--verbose``: every step's output as it comes).

Settings: JURYBENCH_DEMO_OUT (default demo-out), JURYBENCH_DATA (default ../shared/datasets).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
LLMBAR_JURIES = [  # run name, LLMBar subset, prompting strategy
    ("natural-vanilla", "Natural", "Vanilla"),
    ("natural-vanilla-norules", "Natural", "Vanilla_NoRules"),
    ("natural-cot", "Natural", "CoT"),
    ("mtbench-vanilla-norules", "MT-Bench", "Vanilla_NoRules"),
]
STUDIES = ["persuasion", "inventory", "culture", "emotion"]

LLMBAR_SUMMARY = """SELECT o.run_id AS jury, count(DISTINCT o.pair_id) AS pairs,
  round(avg(CASE WHEN o.presented_order = 'AB' THEN (sign(o.jury_score) = h.value)::INT END), 3) AS correct_AB,
  round(avg(CASE WHEN o.presented_order = 'BA' THEN (sign(o.jury_score) = -h.value)::INT END), 3) AS correct_BA
  FROM jury_pairwise_orders o JOIN human_labels h
    ON h.subject_kind = 'pair' AND h.subject_id = o.pair_id AND h.annotator = 'gold'
  WHERE o.run_id LIKE 'llmbar-%' GROUP BY 1 ORDER BY 1"""
HANNA_SUMMARY = """WITH h AS (SELECT subject_id, criterion, avg(value) AS human FROM human_labels
    WHERE subject_kind = 'item' GROUP BY ALL),
  r AS (SELECT s.criterion, s.juror, corr(s.juror_score, h.human) AS r FROM juror_pointwise s
    JOIN h ON h.subject_id = s.item_id AND h.criterion = s.criterion WHERE s.run_id = 'hanna' GROUP BY ALL),
  jr AS (SELECT j.criterion, corr(j.jury_score, h.human) AS r FROM jury_pointwise j
    JOIN h ON h.subject_id = j.item_id AND h.criterion = j.criterion WHERE j.run_id = 'hanna' GROUP BY ALL)
  SELECT jr.criterion, round(jr.r, 3) AS jury_r, arg_max(r.juror, r.r) AS best_juror,
    round(max(r.r), 3) AS best_juror_r FROM jr JOIN r USING (criterion) GROUP BY jr.criterion, jr.r ORDER BY 1"""
EXAMPLE_SUMMARY = """SELECT s.run_id AS run, s.juror, s.n_calls AS calls, s.n_ok AS ok, s.n_invalid AS invalid,
  s.n_refusal AS refusals, round(b.flip_rate, 2) AS flip_rate FROM run_summary s
  LEFT JOIN juror_order_bias b ON b.run_id = s.run_id AND b.juror = s.juror
  WHERE s.run_id LIKE 'example-%' ORDER BY 1, 2"""


class Tee:
    """Writes to each of its streams (the log, and the screen with --verbose)."""

    def __init__(self, *streams: IO[str]) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()

    def isatty(self) -> bool:
        return False


class Demo:
    def __init__(self, out: Path, data: Path, verbose: bool) -> None:
        self.out, self.data = out, data
        self.log_path = out / "demo.log"
        self.log = self.log_path.open("w", encoding="utf-8")
        self.steps: IO[str] = Tee(self.log, sys.stdout) if verbose else self.log  # type: ignore[assignment]

    def say(self, line: str) -> None:
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def run(self, *args: str, into: IO[str] | None = None) -> int:
        """``jurybench ARGS`` in this process, its output into ``into`` (the step log by default)."""
        from jurybench.cli import main

        stream = into if into is not None else self.steps
        sys.argv = ["jurybench", *args]
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):  # type: ignore[type-var]
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            stream.flush()
        return code

    def step(self, *args: str) -> None:
        self.log.write(f"$ jurybench {shlex.join(args)}\n")
        if self.run(*args) != 0:
            self.log.flush()
            print(f"demo: this step failed: jurybench {shlex.join(args)}", file=sys.stderr)
            print("".join(self.log_path.read_text(encoding="utf-8").splitlines(keepends=True)[-15:]), file=sys.stderr)
            raise SystemExit(1)

    def show(self, sql: str) -> None:
        """A summary query's table, on screen."""
        if self.run("sql", sql, into=sys.stdout) != 0:
            raise SystemExit(1)


def llmbar(demo: Demo) -> None:
    data = str(demo.data)
    demo.say(f"== LLMBar: real judge completions from {demo.data / 'llmbar'}, replayed through the engine")
    demo.step("datasets", "import", "llmbar", "--data", data)
    for name, subset, strategy in LLMBAR_JURIES:
        run, where = f"llmbar-{name}", f"dataset = 'llmbar-{subset}'"
        demo.step(
            "score",
            "--rubric",
            "preference",
            "--jury",
            f"juries/{run}.yaml",
            "--where",
            where,
            "--run",
            run,
            "--no-progress",
        )
        demo.step("report", "preference", "--run", run, "--annotator", "gold")
        demo.step("datasets", "llmbar-check", "--run", run, "--subset", subset, "--strategy", strategy, "--data", data)
    demo.say("== Re-running one jury: everything comes from the cache, no calls")
    demo.step(
        "score",
        "--rubric",
        "preference",
        "--jury",
        "juries/llmbar-natural-cot.yaml",
        "--where",
        "dataset = 'llmbar-Natural'",
        "--run",
        "llmbar-natural-cot",
        "--no-progress",
    )
    demo.say("== LLMBar: a calibrated A/B jury (logistic regression on symmetrized verdicts, held-out pairs)")
    demo.step(
        "calibrate",
        "--run",
        "llmbar-mtbench-vanilla-norules",
        "--group-by",
        "item",
        "--name",
        "llmbar-mtbench",
        "--out",
        str(demo.out / "calibration"),
    )


def hanna(demo: Demo) -> None:
    demo.say("== HANNA: 1,056 stories, three human raters, five LLM jurors; agreement and a calibrated jury")
    demo.step("datasets", "import", "hanna", "--data", str(demo.data))
    demo.step("agreement", "--run", "hanna", "--boot", "200")
    calibration = demo.out / "calibration"
    demo.step(
        "calibrate", "--run", "hanna", "--group-by", "meta.prompt_id", "--name", "hanna", "--out", str(calibration)
    )
    demo.step("calibrate", "apply", str(calibration / "hanna.json"), "--run", "hanna")


def example(demo: Demo) -> None:
    demo.say("== Offline example set with fake jurors (pointwise story-quality, pairwise persuasion)")
    folder = demo.out / "example"
    demo.step("datasets", "example", "--out", str(folder))
    demo.step("items", "import", str(folder / "items.csv"), "--dataset", "example")
    demo.step("pairs", "import", str(folder / "pairs.csv"), "--dataset", "example")
    demo.step(
        "score",
        "--rubric",
        "story-quality",
        "--where",
        "dataset = 'example'",
        "--run",
        "example-quality",
        "--no-progress",
        "--juror",
        "fake/kind,samples=2",
        "--juror",
        "fake/strict,invalid_rate=0.2",
        "--juror",
        "fake/shy,refusal_rate=0.15",
    )
    demo.step(
        "score",
        "--rubric",
        "persuasion",
        "--where",
        "dataset = 'example'",
        "--run",
        "example-persuasion",
        "--no-progress",
        "--juror",
        "fake/biased,position_bias=1",
        "--juror",
        "fake/fair",
    )


def friedman(demo: Demo) -> None:
    plots = demo.out / "plots"
    demo.say(
        f"== Statistics over the store (recorded in stats_results): Friedman across HANNA's systems, its plot in {plots}"
    )
    demo.step(
        "stats",
        "friedman",
        "--run",
        "hanna",
        "--by",
        "model",
        "--block",
        "metadata->>'prompt_id'",
        "--where",
        "criterion = 'coherence'",
        "--format",
        "csv",
    )
    demo.step("plot", "posthoc", "-o", str(plots / "friedman-posthoc.png"))


def studies(demo: Demo) -> None:
    demo.say(
        "== Audit studies, offline on simulated models with known truth: generation, judging, statistics and plots"
    )
    demo.say("   (the study files: jurybench demo NAME --copy DIR)")
    for study in STUDIES:
        demo.step("demo", study, "--out", str(demo.out / "studies"))


def summary(demo: Demo, has_llmbar: bool, has_hanna: bool) -> None:
    """What the demo found, from the store (the same figures as the steps' own reports in the log)."""
    demo.say(f"== What it found (every step's output: {demo.log_path}; make demo VERBOSE=1 prints it as it comes)")
    if has_llmbar:
        demo.say("LLMBar: each replayed jury's majority verdict against gold, in each order (every juror's own")
        demo.say("figures match LLMBar's statistics.json: see the log)")
        demo.show(LLMBAR_SUMMARY)
    if has_hanna:
        demo.say("HANNA: Pearson r of the five-model jury's mean and of its best juror with the three raters' mean")
        demo.show(HANNA_SUMMARY)
    demo.say("Example set: answers stored as they came (invalid answers and refusals kept, never coerced),")
    demo.say("and how often each juror's verdict flips when the pair's order is swapped")
    demo.show(EXAMPLE_SUMMARY)
    demo.say(f"Audit studies ({', '.join(STUDIES)}): a store and figures each in {demo.out / 'studies'}")


def main(argv: list[str]) -> int:
    verbose = os.environ.get("JURYBENCH_DEMO_VERBOSE", "0") == "1"
    for arg in argv:
        if arg in ("-v", "--verbose"):
            verbose = True
        else:
            print(
                f"scripts/demo.py: unknown argument '{arg}' (the one it takes: --verbose, every step's output)",
                file=sys.stderr,
            )
            return 2
    os.chdir(ROOT)
    out = Path(os.environ.get("JURYBENCH_DEMO_OUT", "demo-out"))
    data = Path(os.environ.get("JURYBENCH_DATA", "../shared/datasets"))
    out.mkdir(parents=True, exist_ok=True)
    db = out / "demo.duckdb"
    for stale in (db, Path(f"{db}.wal")):
        stale.unlink(missing_ok=True)
    os.environ["JURYBENCH_DB"] = str(db)
    demo = Demo(out, data, verbose)
    has_llmbar = (data / "llmbar" / "Natural" / "dataset.json").is_file()
    has_hanna = (data / "hanna" / "hanna_metric_scores_llm.csv").is_file()
    if has_llmbar:
        llmbar(demo)
    else:
        demo.say(f"== No LLMBar data at {data / 'llmbar'}: running on the offline example set only.")
        demo.say("   To get the real data, put LLMBar's files under DIR/llmbar/ and run: JURYBENCH_DATA=DIR make demo")
    if has_hanna:
        hanna(demo)
    else:
        demo.say(f"== No HANNA data at {data / 'hanna'}: skipping agreement and calibration on real ratings.")
    example(demo)
    if has_hanna:
        friedman(demo)
    studies(demo)
    summary(demo, has_llmbar, has_hanna)
    demo.say(f"== Done. The store is {db}. Look at it in your browser:")
    print(f"   .venv/bin/jurybench view --db {db}")
    print(f'   (or query it: .venv/bin/jurybench sql "SELECT * FROM run_summary" --db {db})')
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
