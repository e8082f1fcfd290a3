"""The built-in juror kinds, registered the way a third party registers its own (jurors/_kinds.py)."""

from __future__ import annotations

from jurybench.jurors._kinds import JurorKind, register_kind
from jurybench.jurors._simulated import check_seeds, make_sim
from jurybench.jurors._spec import FAKE_KNOBS, READING, SAMPLING
from jurybench.jurors._transports import make_fake, make_imported, make_litellm, make_replay


def register() -> None:
    from jurybench.jurors._simulated import SIM_GENERATOR_KNOBS, SIM_KNOBS

    register_kind(
        JurorKind(
            "fake",
            make_fake,
            "deterministic rule-based answers for tests and demos",
            parameters=READING | SAMPLING | FAKE_KNOBS,
            offline=True,
            check=check_seeds,
        ),
        replace=True,
    )
    register_kind(
        JurorKind(
            "sim",
            make_sim,
            "simulated jurors and generators with known truth",
            parameters=READING | SAMPLING | SIM_KNOBS | SIM_GENERATOR_KNOBS,
            offline=True,
            check=check_seeds,
        ),
        replace=True,
    )
    register_kind(
        JurorKind(
            "replay",
            make_replay,
            "recorded completions from the recordings table",
            parameters=frozenset({"verdicts", "structured"}),
            offline=True,
            reaskable=False,
        ),
        replace=True,
    )
    register_kind(
        JurorKind(
            "import",
            make_imported,
            "judgments made elsewhere (jurybench judgments import)",
            parameters=frozenset({"scores", "source", "prompt_variants", "judge_model"}),
            offline=True,
            reaskable=False,
        ),
        replace=True,
    )
    register_kind(JurorKind("*", make_litellm, "any model string litellm routes (openai/..., ollama/...)"))
