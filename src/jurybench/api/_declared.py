"""The parameters of ``score`` and ``generate``, declared once (``jurybench.declare``).

``jurybench.score`` and ``jurybench.generate`` are annotated with these; the command line's
``score`` and ``generate`` options, a study step's options and the HTTP job body
(``POST /v1/jobs``) are derived from them. The options the engine takes are shared by both."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from jurybench.declare import CliOption, param

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import TypeAlias

    import pandas as pd

    from jurybench.api._specs import JuryLike, RubricLike
    from jurybench.engine import EngineOptions
    from jurybench.generation import GenerationSpec
    from jurybench.jury import Jury

    PromptsLike: TypeAlias = str | Path | pd.DataFrame | Sequence[Mapping[str, object]]

SUBJECTS_PER_REQUEST = 10_000  # the HTTP face's bound on subjects in one request (its MAX_ROWS)


def jury_from_cli(juror: list[str] | None = None, jury: Path | None = None) -> Jury:
    """The jury the command line's ``--juror`` options and ``--jury FILE`` give: the file's jury
    with the ``--juror`` jurors first."""
    from dataclasses import replace

    from jurybench.api._specs import jury_of
    from jurybench.jurors import parse_juror
    from jurybench.jury import Jury

    from_file = jury_of(jury) if jury else Jury(())
    return replace(from_file, jurors=(*[parse_juror(text) for text in juror or []], *from_file.jurors))


# -- what score and generate share: the run and the engine --------------------------------------
Run = Annotated[str | None, param("Run name; repeating it resumes that run.", faces="cli python")]
# The command line, Python and study files take as many requests in flight as the endpoint does
# (a team's own vLLM or llama.cpp cluster has hundreds of slots; the engine's adaptive window and
# the rate limits still hold each juror); the service's bound is its own (docs/service.md).
MAX_CONCURRENCY, SERVICE_CONCURRENCY = 1024, 64
Concurrency = Annotated[
    int,
    param(
        "Parallel requests per provider.",
        number="count",
        http={"ge": 1, "le": MAX_CONCURRENCY},
        http_only={"le": SERVICE_CONCURRENCY},
    ),
]
Retries = Annotated[
    int, param("Retries on 5xx and timeouts (rate limits wait instead).", faces="cli python", number="count")
]
GiveUpAfter = Annotated[
    float,
    param(
        "Seconds a call may wait out rate limits (429) before it errs.",
        faces="cli python",
        number="seconds",
        at_least=1,
    ),
]
MaxCost = Annotated[
    float | None,
    param(
        "Budget in USD for the run's spend; it stops (exit 4) before passing it.",
        number="dollars",
        http_only={"gt": 0},
    ),
]
Batch = Annotated[
    bool, param("Send calls through the providers' batch APIs (about half the price, within 24 h).", flag=True)
]
PollEvery = Annotated[
    float,
    param(
        "--batch: seconds between looks at open batches.",
        number="seconds",
        at_least=0.01,
        http_only={"le": 3600},
    ),
]
Progress = Annotated[bool, param("Show the progress bar.", faces="cli python", switch=True, cli_default=True)]
Executor = Annotated[
    str,
    param(
        "Where calls are made: local (this process) or ray (spread over a Ray cluster's workers).",
        faces="cli python",
        choices=("local", "ray"),
    ),
]
Address = Annotated[
    str | None,
    param(
        "--executor ray: the Ray cluster's address (host:port, ray://host:port or auto); unsaid, Ray starts here.",
        faces="cli python",
    ),
]
Workers = Annotated[
    int | None,
    param(
        "--executor ray: the Ray workers to spread calls over (one CPU each; unsaid, one a CPU).",
        faces="cli python",
        number="count",
        at_least=1,
    ),
]
Options = Annotated[
    "EngineOptions | None",
    param(
        "The engine's options whole (a program embedding a run); the options above are then ignored.", faces="python"
    ),
]

# -- score ---------------------------------------------------------------------------------------
Rubric = Annotated[
    "RubricLike", param("Rubric name (rubrics/<name>.yaml) or path.", faces="cli python", short="-r", cli_type=str)
]
JuryOf = Annotated[
    "JuryLike",
    param(
        "YAML jury: 'jurors' (added to --juror) and optionally aggregation, quorum, tie, calibration, scores.",
        faces="cli python",
        cli_type=Path | None,
        cli_default=None,
        cli_with=(
            CliOption(
                "juror",
                list[str] | None,
                "MODEL[,key=value...]; repeat for a jury. e.g. openai/gpt-4o-mini,temperature=0,samples=3",
                short="-j",
            ),
        ),
        from_cli=jury_from_cli,
    ),
]
Aggregate = Annotated[
    str | None,
    param(
        "Jury rule: mean (of juror means), median, weighted, majority or calibrated "
        "(default: the jury file's, else majority for preference rubrics and mean otherwise).",
        faces="cli python",
    ),
]
Quorum = Annotated[
    int | None,
    param(
        "Jurors with a valid score an item needs for a jury score (default 1).",
        faces="cli python",
        number="count",
        at_least=1,
    ),
]
Tie = Annotated[str | None, param("Majority with equal votes: tie (0) or abstain (no verdict).", faces="cli python")]
Calibration = Annotated[
    str | Path | None,
    param(
        "Calibration file for --aggregate calibrated (applied when the run ends).",
        faces="cli python",
        cli_type=Path | None,
    ),
]
Scores = Annotated[
    str | None,
    param(
        "What the jury aggregates: discrete (the jurors' scores) or expected (the expected scores of "
        "jurors with scores=expected). Re-running a run with another choice makes no call.",
        faces="cli python",
    ),
]
Orders = Annotated[
    str,
    param(
        "Pairs: both orders (symmetrized), one (item_a first) or random (one order per pair, drawn "
        "from --order-seed); with one order, position bias cannot be measured.",
        http_type=Literal["both", "one", "random"],
    ),
]
OrderSeed = Annotated[int, param("--orders random: the seed that draws each pair's order.", number="seed")]
Where = Annotated[
    str | None,
    param("SQL predicate choosing items or pairs, e.g. \"dataset = 'x'\".", http={"max_length": 2000}),
]
Anchors = Annotated[
    str | None,
    param(
        "Also judge the subjects of this anchor set (jurybench anchors add), so stats drift can compare "
        "this run with earlier ones on them.",
        http={"max_length": 256},
    ),
]
Limit = Annotated[
    int | None,
    param(
        "A first try: judge N of the chosen subjects, drawn at random (seeded by --limit-seed; a pair is "
        "one subject, judged in all its orders); a later run without it reuses their answers.",
        number="count",
        at_least=1,
        http_only={"le": SUBJECTS_PER_REQUEST},
    ),
]
LimitSeed = Annotated[int, param("--limit: the seed of the draw.", number="seed")]
Ids = Annotated[list[str] | None, param("The item or pair ids to judge (beside or instead of where).", faces="python")]
Samples = Annotated[
    int | None,
    param(
        "Answers per juror (each juror's own samples= otherwise).",
        faces="http python",
        number="count",
        at_least=1,
        http_only={"le": 20},
    ),
]
NoElide = Annotated[
    bool,
    param(
        "Refuse the run, instead of cutting, when a conversation does not fit a juror's context whole.",
        flag=True,
    ),
]
Plan = Annotated[
    bool, param("Count calls, tokens and cost per juror; call and change nothing.", faces="cli python", flag=True)
]
Until = Annotated[
    str | None,
    param(
        "Judge in random batches and stop once this holds on the jury's anytime-valid confidence "
        "sequence: ci_width(CRITERION)<WIDTH, excludes(CRITERION,VALUE), separated(CRITERION) (the "
        "models' ranks settled) or gap_excludes(VALUE) (pairwise: the treatment gap decided).",
        http={"max_length": 200},
    ),
]
BatchItems = Annotated[
    int,
    param(
        "--until: subjects judged between two looks.",
        number="count",
        at_least=1,
        http_only={"le": SUBJECTS_PER_REQUEST},
    ),
]
UntilSeed = Annotated[int, param("--until: the seed of the subjects' random order.", number="seed")]
UntilAlpha = Annotated[float, param("--until: 1 - the confidence sequence's level.", number="alpha")]
UntilCluster = Annotated[
    str,
    param(
        "--until: the unit drawn at random and observed as one mean: prompt (a prompt with all its "
        "items), item (each subject alone) or meta.<field>; the sequence covers the mean over these clusters.",
        http={"min_length": 1, "max_length": 200},
    ),
]

# -- generate ------------------------------------------------------------------------------------
Spec = Annotated[
    "str | Path | GenerationSpec",
    param(
        "Generation spec YAML (or a study file with a 'generation' section).",
        faces="cli python",
        argument=True,
        cli_type=Path,
    ),
]
Prompts = Annotated[
    "PromptsLike | None",
    param(
        "Prompt set (CSV/JSONL: prompt_id, prompt[, language]); overrides the spec's.",
        faces="cli python",
        cli_type=Path | None,
    ),
]
Models = Annotated[
    list[str] | None,
    param(
        "MODEL[,key=value...]; repeatable; replaces the spec's models.",
        faces="cli python",
        cli_name="model",
        short="-m",
    ),
]
Responses = Annotated[
    int | None, param("Responses per prompt, arm and model.", faces="cli python", number="count", at_least=1)
]
Exclusion = Annotated[
    str | None,
    param(
        "response: drop refused responses; prompt: drop a prompt for every model if any refused.", faces="cli python"
    ),
]
PromptLimit = Annotated[
    int | None,
    param(
        "A first try: generate for N of the prompts, drawn at random (seeded by --limit-seed); a later "
        "run without it reuses their responses.",
        faces="cli python",
        number="count",
        at_least=1,
    ),
]
GenerationPlan = Annotated[
    bool, param("Count calls, tokens and cost per model; call and change nothing.", faces="cli python", flag=True)
]
