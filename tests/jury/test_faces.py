"""The CLI, Python and HTTP build the same jury from the same input, and list the same rubrics
(issue 28: Python set every juror's samples, HTTP only those at 1; the CLI listed *.y*ml,
the service *.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurybench.api._specs import jury_of
from jurybench.service._requests import jury_for
from tests.conftest import run_cli

JURORS = ["fake/a,samples=3", "fake/b", "sim/c,noise=0.5"]


def _shape(jury: Any) -> list[tuple[str, int, str]]:
    return [(j.model, j.samples, j.key) for j in jury.jurors]


def test_python_and_http_give_the_same_jury_and_a_jurors_own_samples_win() -> None:
    python = jury_of(JURORS, samples=2)
    http = jury_for({"jury": {"jurors": JURORS}, "samples": 2}, None)
    assert _shape(python) == _shape(http)
    assert [j.samples for j in python.jurors] == [3, 2, 2]


def test_the_cli_scores_with_the_same_jury_as_python(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "f.duckdb"
    items = tmp_path / "i.csv"
    items.write_text("item_id,response\na,x\n")
    assert run_cli("items", "import", str(items), "--db", str(db)).exit_code == 0
    args = [a for j in JURORS for a in ("--juror", j)]
    assert (
        run_cli("score", "--rubric", "story-quality", *args, "--run", "r", "--no-progress", "--db", str(db)).exit_code
        == 0
    )
    con = duckdb.connect(str(db), read_only=True)
    stored = sorted(r[0] for r in con.execute("SELECT juror_key FROM run_jurors WHERE run_id = 'r'").fetchall())
    con.close()
    assert stored == sorted(j.key for j in jury_of(JURORS).jurors)


def test_the_cli_and_the_service_list_the_same_rubrics(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rubrics").mkdir()
    shipped = Path(__file__).resolve().parents[2] / "src" / "jurybench" / "rubrics" / "story-quality.yaml"
    (tmp_path / "rubrics" / "mine.yml").write_text(shipped.read_text().replace("name: story-quality", "name: mine"))
    from tests.service.conftest import make_client

    cli = {line.split()[0] for line in run_cli("rubrics", "list").stdout.splitlines() if line.strip()}
    with make_client(tmp_path / "s.duckdb") as client:
        http = {r["name"] for r in client.get("/v1/rubrics").json()}
    assert "mine" in cli and cli == http
