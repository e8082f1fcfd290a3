"""The viewer: look at a store in a browser (jurybench view)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import DbOption, app, is_loopback
from jurybench.errors import JurybenchError


@app.command()
def view(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Loopback address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8766,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser.")] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Another Host header to answer (a name behind a proxy); repeatable."),
    ] = None,
    annotate: Annotated[
        bool,
        typer.Option("--annotate", help="Let item and pair pages take human labels (opens the store for writing)."),
    ] = False,
    show_jury: Annotated[
        bool,
        typer.Option(
            "--show-jury",
            help="With --annotate: show the jury's and jurors' answers while labelling (labels are blind by "
            "default; each label records which it was).",
        ),
    ] = False,
) -> None:
    """Look at the store in a browser, read-only: runs, a run's jury and jurors, every item with
    each juror's raw answers, disagreements, statistics with plots, calibrations.

    With --annotate, item and pair pages take human labels, and a run's label queue serves the
    unlabelled subjects the jurors disagree on most. Labelling is blind: a subject's page hides
    the jury's and jurors' answers until the annotator's label is saved (--show-jury shows them). Served on loopback only; `jurybench serve`
    shows the same pages behind its token."""
    import ipaddress
    import socket

    from jurybench.config import db_path

    if not (host == "localhost" or is_loopback(host, ipaddress)):
        raise JurybenchError(
            f"--host {host}: the viewer listens on loopback only.",
            hint="To share the pages, use 'jurybench serve' with a token.",
        )
    if show_jury and not annotate:
        raise JurybenchError("--show-jury is a labelling option.", hint="Pass it with --annotate.")
    store = db_path(db)
    if not store.is_file():
        raise JurybenchError(f"{store}: no such store.", hint="Pass --db FILE or set JURYBENCH_DB.")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise JurybenchError(
            f"--port {port}: cannot listen on {host} ({exc.strerror}).",
            hint="Choose another --port (0 picks a free one).",
        ) from None
    port = sock.getsockname()[1]
    sock.listen(128)  # connections made once the address is printed wait for the server, not refused
    from jurybench.viewer import create_viewer_app

    viewer = create_viewer_app(
        store, annotate=annotate, show_jury=show_jury
    )  # opens the store now: a store held by a writer is one line
    from jurybench.service import HostCheck, listening_hosts

    app_ = HostCheck(viewer, listening_hosts(host, port, tuple(allow_host or ())))
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
    mode = ("taking labels, the jury shown" if show_jury else "taking blind labels") if annotate else "read-only"
    typer.echo(f"jurybench viewer: {store} ({mode}) at {url}  (Ctrl-C to stop)")
    if not no_browser:
        import threading
        import webbrowser

        threading.Timer(0.8, webbrowser.open, args=(url,)).start()
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app_, log_level="warning"))
    announced = _announce(store, url) if annotate else None  # a labelling viewer holds the store for writing
    try:
        server.run(sockets=[sock])
    finally:
        if announced is not None:
            announced.unlink(missing_ok=True)


def _announce(store: Path, url: str) -> Path | None:
    """``<store>.server.json``: another process pointed at the store names this viewer instead of
    waiting on its lock."""
    import json
    import os
    import time

    from jurybench.store import server_file

    target = server_file(store)
    try:
        target.write_text(
            json.dumps({"pid": os.getpid(), "url": url.rstrip("/"), "what": "viewer", "started": time.time()})
        )
    except OSError:  # a read-only folder: others wait on the lock and say so
        return None
    return target
