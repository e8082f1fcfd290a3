"""What is judged and what was judged elsewhere: items, pairs and imported judgments."""

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter

from jurybench.errors import NotFound
from jurybench.service import _requests as rq
from jurybench.service._state import Dataset, Id, Limit, Offset, StoreDep, listing, rows

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import ImportResult

router = APIRouter()


def import_items(
    cur: "Connection", items: list[rq.ItemIn], dataset: str | None, in_transaction: bool = False
) -> "ImportResult":
    from jurybench.store import import_item_rows

    found = [(n, item.model_dump(exclude_none=True)) for n, item in enumerate(items, start=1)]
    return import_item_rows(cur, found, source="items", dataset=dataset, in_transaction=in_transaction)


def import_pairs(
    cur: "Connection", pairs: list[rq.PairIn], dataset: str | None, in_transaction: bool = False
) -> "ImportResult":
    from jurybench.store import import_pair_rows

    found = [(n, pair.model_dump(exclude_none=True)) for n, pair in enumerate(pairs, start=1)]
    return import_pair_rows(cur, found, source="pairs", dataset=dataset, in_transaction=in_transaction)


def _counts(result: "ImportResult") -> dict[str, object]:
    return {"inserted": result.inserted, "unchanged": result.unchanged, "updated": result.updated}


@router.post("/v1/items", status_code=201, tags=["items"])
def upload_items(body: rq.ItemsUpload, store: StoreDep) -> dict[str, object]:
    """Import items, all or nothing (an id stored with other content is a conflict)."""
    with store.writing() as cur:
        return _counts(import_items(cur, body.items, body.dataset))


@router.post("/v1/conversations", status_code=201, tags=["items"])
def upload_conversations(body: rq.ConversationsUpload, store: StoreDep) -> dict[str, object]:
    """Conversations or agent trajectories in a trace format (openai-chat, tau-bench, inspect's
    JSON log, otel-genai, atif), all or nothing, as ``items import FILE --format NAME`` imports
    them; ``map`` is its ``--map KEY=FIELD`` entries."""
    import json
    import tempfile
    from pathlib import Path

    from jurybench.errors import JurybenchError
    from jurybench.imports import read_conversations
    from jurybench.store import write_conversations

    lines = isinstance(body.content, str)
    if lines and body.content.count("\n") > rq.MAX_ROWS:
        raise JurybenchError(f"content: more than {rq.MAX_ROWS:,} lines; send the file in parts.")
    name = Path(body.filename or "content").stem + (".jsonl" if lines else ".json")
    with tempfile.TemporaryDirectory(prefix="jurybench-upload-") as folder:
        path = Path(folder) / name
        path.write_text(body.content if lines else json.dumps(body.content), encoding="utf-8")
        try:
            found = list(read_conversations(path, body.format, body.map))
            for conversation in found:
                conversation.check()
        except JurybenchError as exc:  # name the request's field, not the server's scratch file
            raise JurybenchError(exc.message.replace(str(path), "content"), hint=exc.hint) from None
    with store.writing() as cur:
        result = write_conversations(
            cur, found, source="conversations", fmt=body.format, dataset=body.dataset or body.format
        )
    return _counts(result)


@router.get("/v1/items/{item_id:path}/conversation", tags=["items"])
def get_conversation(item_id: str, store: StoreDep) -> dict[str, object]:
    """A conversation item's messages in order, each assistant message with its tool calls, and its
    task, trial, verified outcome and reference actions."""
    import dataclasses

    from jurybench.store import load_conversation

    with store.reading() as cur:
        found = load_conversation(cur, item_id)
    if found is None:
        raise NotFound(f"no conversation {item_id!r} (an item of shape 'conversation').")
    out = dataclasses.asdict(found)
    for key in ("where", "answer", "reference", "metadata"):
        out.pop(key, None)
    return out


@router.post("/v1/judgments", status_code=201, tags=["judgments"])
def upload_judgments(body: rq.JudgmentsUpload, store: StoreDep) -> dict[str, object]:
    """Judgments made elsewhere, as run ``run``'s (juror ``import/<juror>``), all or nothing."""
    from jurybench import api
    from jurybench.imports import JudgmentImport

    values = body.model_dump()
    rubric = rq.load_rubric_for({"rubric": values.pop("rubric")})  # a shipped name, never a path
    given = values.pop("judgments")  # the columns a row gives (a column left out is not there)
    rows = api.NamedRows(({k: v for k, v in j.items() if v is not None} for j in given), source="judgments")
    with store.writing() as cur:  # the declared function, the server's connection as its store
        result = api.Store.import_judgments(cur, rows, rubric=rubric, **values)
    assert isinstance(result, JudgmentImport)  # rows are never a released file
    return {
        "run": result.run_id,
        "calls": result.calls,
        "judgments": result.judgments,
        "inserted": result.inserted,
        "unchanged": result.unchanged,
        "replaced": result.replaced,
        "orders": result.orders,
        "probabilistic": result.probabilistic,
    }


@router.get("/v1/items", tags=["items"])
def list_items(store: StoreDep, dataset: Dataset = None, limit: Limit = 100, offset: Offset = 0) -> Any:
    """Items, by id (``?dataset=`` to choose one dataset)."""
    return listing(store, "items", "item_id", dataset, limit, offset)


@router.get("/v1/items/{item_id}", tags=["items"])
def get_item(item_id: Id, store: StoreDep) -> dict[str, object]:
    found = rows(store, "SELECT * FROM items WHERE item_id = ?", [item_id])
    if not found:
        raise NotFound(f"no item {item_id!r}.")
    return found[0]


@router.post("/v1/pairs", status_code=201, tags=["items"])
def upload_pairs(body: rq.PairsUpload, store: StoreDep) -> dict[str, object]:
    """Import pairs of stored items, all or nothing."""
    with store.writing() as cur:
        return _counts(import_pairs(cur, body.pairs, body.dataset))


@router.get("/v1/pairs", tags=["items"])
def list_pairs(store: StoreDep, dataset: Dataset = None, limit: Limit = 100, offset: Offset = 0) -> Any:
    """Pairs, by id."""
    return listing(store, "pairs", "pair_id", dataset, limit, offset)
