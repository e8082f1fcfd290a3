"""The HTTP service (jurybench serve)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import DbOption, app, is_loopback
from jurybench.errors import JurybenchError


@app.command()
def serve(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Address to listen on (non-loopback needs a token).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    workers: Annotated[int, typer.Option(help="Jobs run at the same time.")] = 2,
    token_file: Annotated[
        Path | None, typer.Option(help="File holding the bearer token (else $JURYBENCH_TOKEN; else no token).")
    ] = None,
    max_body_mb: Annotated[float, typer.Option(help="Largest request body accepted, in MB.")] = 10.0,
    sql_timeout: Annotated[float, typer.Option(help="Seconds a /v1/sql query may run.")] = 10.0,
    sql_rows: Annotated[int, typer.Option(help="Most rows a /v1/sql query returns.")] = 10_000,
    sql_memory_mb: Annotated[
        int, typer.Option(min=64, help="Memory DuckDB may use for queries in the server, in MB (413 beyond).")
    ] = 512,
    demo_mode: Annotated[
        bool, typer.Option("--demo", help="A fresh store with the example items and a simulated default jury.")
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Another Host header to answer (a name behind a proxy); repeatable."),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            help="Where jobs make their calls: local (the server's process) or ray (each job's calls spread over "
            "Ray workers; the server still plans, admits and writes)."
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(help="--executor ray: the Ray cluster's address (host:port or auto); unsaid, Ray starts here."),
    ] = None,
    ray_workers: Annotated[
        int | None,
        typer.Option(
            help="--executor ray: the Ray workers each job spreads its calls over (one CPU each; unsaid, the "
            "cluster's CPUs shared among the jobs that run at once)."
        ),
    ] = None,
    show_jury: Annotated[
        bool,
        typer.Option(
            "--show-jury",
            help="The viewer shows the jury's scores and figures to annotators (labels are blind by default: "
            "pages hide them until the annotator's own label is saved; each label records which).",
        ),
    ] = False,
) -> None:
    """Serve the store over HTTP (/v1: jobs, items, annotations, calibration, statistics, read-only SQL).

    The server owns the store while it runs; CLI commands on the same file say so. Without a
    token it listens on loopback only. OpenAPI: /openapi.json.
    """
    import ipaddress
    import os

    from jurybench.config import db_path
    from jurybench.redact import register_secret

    token = None
    if token_file is not None:
        if not token_file.is_file():
            raise JurybenchError(f"--token-file {token_file}: no such file.")
        token = token_file.read_text(encoding="utf-8").strip()
        if not token:
            raise JurybenchError(f"--token-file {token_file} is empty.")
    elif os.environ.get("JURYBENCH_TOKEN", "").strip():
        token = os.environ["JURYBENCH_TOKEN"].strip()
    register_secret(token)
    from jurybench.service import check_token, listening_hosts

    check_token(token)
    loopback = host in ("localhost",) or is_loopback(host, ipaddress)
    if token is None and not loopback:
        raise JurybenchError(
            f"--host {host}: without a token the server listens on loopback only.",
            hint="Set JURYBENCH_TOKEN or --token-file to serve on another address.",
        )
    store = db_path(db)
    default_jury = None
    if demo_mode:
        store = db or Path("demo-out") / "serve-demo.duckdb"
        _prepare_serve_demo(store)
        default_jury = {"jurors": ["sim/steady,noise=0.4,seed=1", "sim/lenient,leniency=0.5,noise=0.6,seed=2"]}
    from jurybench.service import ServiceConfig, create_app

    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    config = ServiceConfig(
        db=store,
        token=token,
        show_jury=show_jury,
        workers=workers,
        max_body_bytes=int(max_body_mb * 1024 * 1024),
        sql_timeout_s=sql_timeout,
        sql_max_rows=sql_rows,
        sql_memory_mb=sql_memory_mb,
        default_jury=default_jury,
        url=url,
        allowed_hosts=tuple(listening_hosts(host, port, tuple(allow_host or ()))),
        executor=executor,
        address=address,
        ray_workers=ray_workers,
    )
    from jurybench.service import Store

    # Opened before uvicorn starts: a store another process holds is one line and exit 2; so is
    # an executor that cannot start (Ray missing, an address where nothing answers), before
    # anything is said of serving.
    opened = Store(store, url, sql_memory_mb=sql_memory_mb, sql_timeout_s=sql_timeout)
    try:
        served = create_app(config, store=opened, close_store=True)
        typer.echo(f"jurybench serving {store} at {url} (API docs: {url}/docs)")
        typer.echo("bearer token required" if token else "no token configured: listening on loopback only")
        if executor == "ray":
            ray = served.state.jurybench.ray
            typer.echo(f"jobs make their calls on Ray: {ray.workers} worker(s) a job, {workers} job(s) at once")
        if demo_mode:
            _print_demo_calls(url)
        import uvicorn

        # Idle keep-alive connections are kept 75 s (uvicorn's default is 5): a client reusing a
        # connection the server is closing at that moment sees a reset.
        uvicorn.run(served, host=host, port=port, log_level="warning", timeout_keep_alive=75)
    finally:
        opened.close()


def _prepare_serve_demo(store: Path) -> None:
    from jurybench.datasets.example import write_example
    from jurybench.store import connect, import_items, import_pairs

    store.parent.mkdir(parents=True, exist_ok=True)
    for stale in (store, Path(f"{store}.wal")):
        stale.unlink(missing_ok=True)
    folder = store.parent / "serve-demo-example"
    write_example(folder)
    con = connect(store)
    try:
        import_items(con, folder / "items.csv", dataset="example")
        import_pairs(con, folder / "pairs.csv", dataset="example")
    finally:
        con.close()


def _print_demo_calls(url: str) -> None:
    typer.echo(f"""Try it (the default jury is simulated, so no key is needed):
  curl -s {url}/v1/health
  curl -s -X POST {url}/v1/jobs -H 'content-type: application/json' \\
       -d '{{"rubric": "story-quality", "where": "dataset = \\u0027example\\u0027"}}'
  curl -s {url}/v1/jobs/<job_id>
  curl -s -X POST {url}/v1/sql -H 'content-type: application/json' \\
       -d '{{"query": "SELECT criterion, round(avg(jury_score), 2) AS mean FROM jury_pointwise GROUP BY 1"}}'
  curl -s -X POST {url}/v1/stats/ttest -H 'content-type: application/json' \\
       -d '{{"run": "job-<job_id>", "by": "model", "baseline": 3}}'""")
