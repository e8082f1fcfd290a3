"""Prompt caching on the loopback stub: what the shared-first layout saves.

A study of ITEMS stories judged on one criterion whose scale is described at length (about
1,300 tokens shared by every call) through the stub's prompt cache (OpenAI's rule: a prompt
that starts with 1,024 tokens or more already sent reads them from the cache in blocks of 128),
as gpt-4o-mini (litellm's prices: $0.15 / M input, $0.075 / M cached). Twice: the rubric's
shared part first and the item last (jurybench's layout), then the item first. Reported:
prompt tokens, tokens read from the cache, and the input cost of each.

    python bench/cache_bench.py ITEMS
prints one JSON object.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def rubric(item_first: bool) -> str:
    anchors = {
        level: f"Level {level}. " + " ".join(f"clause {level}-{k} of a long description" for k in range(30))
        for level in range(1, 6)
    }
    item = "Text:\n{response}"
    shared = "Rate the text on the criterion below.\n\n{criteria}\n\n{answer_format}"
    body = {
        "name": "long-first" if item_first else "long-last",
        "kind": "pointwise",
        "rationale": False,
        "templates": {
            "en": {"system": "Judge.", "user": f"{item}\n\n{shared}" if item_first else f"{shared}\n\n{item}"}
        },
        "criteria": [
            {
                "name": "quality",
                "description": "How good the text is.",
                "scale": {"min": 1, "max": 5},
                "anchors": anchors,
            }
        ],
    }
    return json.dumps(body)


def main(items: int) -> dict[str, object]:
    import jurybench as jb
    from jurybench.testing import PromptCache, StubServer

    out: dict[str, object] = {"items": items}
    with tempfile.TemporaryDirectory() as folder:
        for layout, item_first in (("shared_first", False), ("item_first", True)):
            path = Path(folder) / f"{layout}.yaml"
            path.write_text(rubric(item_first), encoding="utf-8")
            db = Path(folder) / f"{layout}.duckdb"
            with StubServer(json.dumps({"quality": 3}), cache=PromptCache()) as stub, jb.open(db) as store:
                store.import_items(
                    [{"item_id": f"s{k}", "response": f"Story {k}: " + "words " * (k % 40)} for k in range(items)]
                )
                jb.score(
                    store,
                    rubric=path,
                    run=layout,
                    concurrency=8,
                    jury=[f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-bench"],
                )
                row = store.sql(
                    "SELECT sum(prompt_tokens) AS p, sum(cached_tokens) AS c, sum(cost_usd) AS cost FROM calls"
                )
            prompt, cached = (int(row[k][0]) for k in ("p", "c"))
            input_cost = (prompt - cached) * 0.15e-6 + cached * 0.075e-6
            out[layout] = {
                "prompt_tokens": prompt,
                "cached_tokens": cached,
                "input_cost_usd": input_cost,
                "cost_usd": float(row["cost"][0]),
            }
    first, last = out["shared_first"], out["item_first"]
    assert isinstance(first, dict) and isinstance(last, dict)
    out["input_cost_ratio"] = first["input_cost_usd"] / last["input_cost_usd"]
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
