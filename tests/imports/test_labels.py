from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurybench.errors import JurybenchError
from jurybench.imports import import_annotations
from jurybench.rubric import load_rubric
from tests.conftest import write

QUALITY = load_rubric("story-quality")


def _labels(con: Any) -> list[tuple[Any, ...]]:
    return con.execute("SELECT subject_id, criterion, annotator, value FROM human_labels ORDER BY 1, 2, 3").fetchall()


def test_long_wide_and_annotator_columns(small_store: Any, tmp_path: Path) -> None:
    long = write(tmp_path / "long.csv", "item_id,annotator,criterion,value\ni1,ann1,relevance,4\ni2,ann1,relevance,2\n")
    assert import_annotations(small_store, long, QUALITY).inserted == 2
    wide = write(tmp_path / "wide.csv", "story,rater,relevance,coherence\ni1,ann2,5,3\ni3,ann2,1,\n")
    result = import_annotations(small_store, wide, QUALITY, mapping={"item_id": "story", "annotator": "rater"})
    assert (result.inserted, result.annotators, result.subjects) == (3, 1, 2)
    by_annotator = write(tmp_path / "ann.csv", "item_id,alice,bob\ni1,3,4\ni2,2,\n")
    result = import_annotations(
        small_store, by_annotator, QUALITY, annotator_columns=["alice", "bob"], criterion="empathy"
    )
    assert result.inserted == 3
    assert ("i1", "empathy", "bob", 4.0) in _labels(small_store)
    # Idempotent.
    again = import_annotations(small_store, long, QUALITY)
    assert (again.inserted, again.unchanged) == (0, 2)


def test_preferences_and_pairwise_scores(small_store: Any, tmp_path: Path) -> None:
    prefs = write(tmp_path / "p.csv", "pair_id,annotator,criterion,value\np1,h,preference,A\np2,h,preference,b\n")
    import_annotations(small_store, prefs, load_rubric("preference"))
    got = small_store.execute("SELECT subject_id, value, label FROM human_labels ORDER BY 1").fetchall()
    assert got == [("p1", 1.0, "A"), ("p2", -1.0, "B")]
    # Issue 44, item 3: a person may find two responses equally good even where the jurors must
    # choose (allow_tie: false governs the jurors' answers); a tie label was refused before.
    tie = write(tmp_path / "t.csv", "pair_id,annotator,criterion,value\np1,g,preference,tie\n")
    assert import_annotations(small_store, tie, load_rubric("preference")).inserted == 1
    assert ("p1", 0.0, "tie") in small_store.execute(
        "SELECT subject_id, value, label FROM human_labels WHERE annotator = 'g'"
    ).fetchall()
    other = write(tmp_path / "o.csv", "pair_id,annotator,criterion,value\np1,k,preference,both\n")
    with pytest.raises(JurybenchError, match=r"'both' is not a preference.*A, B or tie"):
        import_annotations(small_store, other, load_rubric("preference"))
    cats = write(tmp_path / "c.csv", "pair_id,annotator,logos,ethos\np1,h,3,-2\n")
    assert import_annotations(small_store, cats, load_rubric("persuasion")).inserted == 2
    bad = write(tmp_path / "c2.csv", "pair_id,annotator,logos\np2,h,4\n")
    with pytest.raises(JurybenchError, match=r"c2.csv row 2, field 'logos': 4 is outside the rubric's scale -3..3"):
        import_annotations(small_store, bad, load_rubric("persuasion"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "item_id,annotator,criterion,value\ni1,a,relevance,4\ni2,a,relevance,9\n",
            r"row 3, field 'value': 9 is outside the rubric's scale 1..5 for 'relevance'",
        ),
        (
            "item_id,annotator,criterion,value\ni1,a,relevance,4\nzz,a,relevance,3\n",
            r"row 3, field 'item_id': no item 'zz' in the store",
        ),
        (
            "item_id,annotator,criterion,value\ni1,a,relevance,4\ni1,a,relevance,5\n",
            r"row 3: duplicate label .* \(first at row 2\)",
        ),
        ("item_id,annotator,criterion,value\ni1,,relevance,4\n", r"row 2, field 'annotator': missing value"),
        (
            "item_id,annotator,criterion,value\ni1,a,wit,4\n",
            r"row 2, field 'criterion': 'wit' is not in rubric 'story-quality'",
        ),
        ("item_id,annotator,criterion,value\ni1,a,relevance,high\n", r"row 2, field 'value': 'high' is not a number"),
        ("item_id,annotator,criterion\ni1,a,relevance\n", r"cannot tell the layout"),
        (
            "story,annotator,criterion,value\ni1,a,relevance,4\n",
            r"missing column\(s\) item_id for a long file.*--map item_id=",
        ),
    ],
)
def test_bad_annotation_files_write_nothing(small_store: Any, tmp_path: Path, content: str, message: str) -> None:
    path = write(tmp_path / "labels.csv", content)
    with pytest.raises(JurybenchError, match=message):
        import_annotations(small_store, path, QUALITY)
    assert _labels(small_store) == []


def test_non_utf8_and_conflicts(small_store: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "b.csv", b"item_id,annotator,criterion,value\ni1,\xe9,relevance,4\n")
    with pytest.raises(JurybenchError, match=r"b.csv line 2: bytes that are not valid UTF-8"):
        import_annotations(small_store, path, QUALITY)
    first = write(tmp_path / "one.csv", "item_id,annotator,criterion,value\ni1,a,relevance,4\n")
    import_annotations(small_store, first, QUALITY)
    changed = write(tmp_path / "two.csv", "item_id,annotator,criterion,value\ni1,a,relevance,2\n")
    with pytest.raises(JurybenchError, match=r"already gave 'relevance' of 'i1' the value 4, not 2.*--replace"):
        import_annotations(small_store, changed, QUALITY)
    result = import_annotations(small_store, changed, QUALITY, replace=True)
    assert (result.replaced, _labels(small_store)) == (1, [("i1", "relevance", "a", 2.0)])


def test_continuous_targets_import_with_the_flag_and_are_named_without_it(small_store: Any, tmp_path: Path) -> None:
    """A panel mean of 4.254 on a 1..5 scale: refused without --continuous (the message names the
    flag), stored as such and marked continuous with it; still refused outside the scale."""
    means = write(
        tmp_path / "means.csv", "item_id,annotator,criterion,value\ni1,panel,relevance,4.254\ni2,panel,relevance,1.5\n"
    )
    with pytest.raises(JurybenchError, match="not a whole number") as refused:
        import_annotations(small_store, means, QUALITY)
    assert "--continuous" in (refused.value.hint or "")
    assert small_store.execute("SELECT count(*) FROM human_labels").fetchone() == (0,)
    result = import_annotations(small_store, means, QUALITY, continuous=True)
    assert result.inserted == 2
    rows = small_store.execute("SELECT subject_id, value, continuous FROM human_labels ORDER BY 1").fetchall()
    assert rows == [("i1", 4.254, True), ("i2", 1.5, True)]
    outside = write(tmp_path / "out.csv", "item_id,annotator,criterion,value\ni3,panel,relevance,5.2\n")
    with pytest.raises(JurybenchError, match=r"outside the rubric's scale 1\.\.5"):
        import_annotations(small_store, outside, QUALITY, continuous=True)
    prefs = write(tmp_path / "p.csv", "pair_id,annotator,criterion,value\np1,h,preference,A\n")
    with pytest.raises(JurybenchError, match="labels are categories"):
        import_annotations(small_store, prefs, load_rubric("preference"), continuous=True)


def test_the_cli_names_the_flag_and_takes_it(small_store: Any, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    means = write(tmp_path / "means.csv", "item_id,annotator,criterion,value\ni1,panel,relevance,4.254\n")
    db = str(tmp_path / "cli.duckdb")
    run_cli("items", "import", str(write(tmp_path / "items.csv", "item_id,response\ni1,A cat sat.\n")), "--db", db)
    refused = run_cli("annotations", "import", str(means), "-r", "story-quality", "--db", db)
    assert refused.exit_code == 2 and "--continuous" in refused.stderr and "row 2" in refused.stderr
    taken = run_cli("annotations", "import", str(means), "-r", "story-quality", "--continuous", "--db", db)
    assert taken.exit_code == 0, taken.stderr
