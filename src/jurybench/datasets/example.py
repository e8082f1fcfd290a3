"""A small example set written by us, for running the engine offline with no real data."""

from __future__ import annotations

import csv
from pathlib import Path

# (prompt, response from model "brief", response from model "verbose")
_EXAMPLES = [
    (
        "Write a two-sentence story about a lighthouse keeper.",
        "The keeper lit the lamp every night for forty years. On the night he forgot, "
        "a ship found its way home by the light of his burning kitchen.",
        "There once was a lighthouse keeper who lived in a lighthouse by the sea and he "
        "kept the lighthouse, which was his job, and he liked it very much.",
    ),
    (
        "Explain in one paragraph why the sky looks blue.",
        "Sunlight scatters off air molecules, and shorter blue wavelengths scatter far more "
        "than red ones, so blue light reaches our eyes from every direction of the sky.",
        "The sky is blue because it reflects the ocean, which is blue, and this has been "
        "known since ancient times by many scientists around the world.",
    ),
    (
        "Give a short tip for someone starting to run.",
        "Start slower than feels necessary: if you can hold a conversation, the pace is right, "
        "and you will still want to run again tomorrow.",
        "Running is a great sport. You should buy expensive shoes and run as fast as you can "
        "every single day to see results quickly.",
    ),
    (
        "Write a polite note declining a party invitation.",
        "Thank you so much for thinking of me. I am sorry I can't make it on Saturday, and I "
        "hope the evening is wonderful.",
        "No thanks, I don't want to come to your party.",
    ),
    (
        "Summarise the water cycle for a ten-year-old.",
        "Water warms up and rises as vapour, cools into clouds, falls as rain or snow, and "
        "runs back to rivers and seas to start again.",
        "Evaporation, condensation, precipitation and collection are the stages.",
    ),
    (
        "Describe a city at dawn in three sentences.",
        "Streetlights blink off one by one. A baker props open a door and the smell of bread "
        "spills onto the empty pavement. The first bus sighs at the stop, waiting for no one.",
        "The city is quiet at dawn. It is early in the morning. People are still asleep.",
    ),
]


CRITERIA = ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity")


def _rating(item: int, verbose: bool, criterion: int, annotator: int) -> int:
    """Made-up human ratings on 1..5: brief answers rated higher, annotators differing a little
    in a fixed pattern (no randomness: the file is the same everywhere)."""
    base = 2 if verbose else 4
    shift = ((item * 7 + criterion * 3 + annotator * 5) % 5 - 2) // 2  # -1, 0 or +1
    return max(1, min(5, base + shift + (1 if annotator == 2 and not verbose and criterion % 2 else 0)))


def write_example(folder: Path) -> list[Path]:
    """Write ``items.csv`` (12 items), ``pairs.csv`` (6 pairs) and ``ratings.csv`` (three
    annotators' story-quality ratings of every item, long format keyed by ``story_id``)."""
    folder.mkdir(parents=True, exist_ok=True)
    items_path = folder / "items.csv"
    pairs_path = folder / "pairs.csv"
    with items_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "prompt", "response", "model", "language", "topic"])
        for i, (prompt, brief, verbose) in enumerate(_EXAMPLES, start=1):
            writer.writerow([f"ex{i:02d}-brief", prompt, brief, "brief", "en", f"t{i}"])
            writer.writerow([f"ex{i:02d}-verbose", prompt, verbose, "verbose", "en", f"t{i}"])
    with pairs_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["pair_id", "item_a", "item_b"])
        for i in range(1, len(_EXAMPLES) + 1):
            writer.writerow([f"ex{i:02d}", f"ex{i:02d}-brief", f"ex{i:02d}-verbose"])
    ratings_path = folder / "ratings.csv"
    with ratings_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["story_id", "annotator", "criterion", "value"])
        for i in range(1, len(_EXAMPLES) + 1):
            for kind in ("brief", "verbose"):
                for c, criterion in enumerate(CRITERIA):
                    for a in (1, 2, 3):
                        writer.writerow(
                            [f"ex{i:02d}-{kind}", f"ann{a}", criterion, _rating(i, kind == "verbose", c, a)]
                        )
    return [items_path, pairs_path, ratings_path]
