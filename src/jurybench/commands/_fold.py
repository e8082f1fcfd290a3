"""Tables that fit a terminal without losing a column (issue 86, item 1).

A table wider than the terminal is laid out in this order, the first that fits winning:

1. as it is (rich's own widths, when the natural widths fit);
2. with text columns wrapped between words to widths chosen here, every column at least as wide
   as its longest header word and its longest short value (values of up to ``WHOLE_UP_TO``
   characters, numbers and names, are never broken);
3. folded into blocks of columns, the key columns (the leading text columns that name a row)
   repeated in each block, each block titled with its part number;
4. one record a block: each row as ``column  value`` lines.

Nothing is cut: every header and every value is printed somewhere, and a header breaks between
words only. Rich is imported lazily (only a command that prints a table pays for it).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

# A column whose values are all this short (numbers, ids, flags) keeps them whole; longer text wraps.
WHOLE_UP_TO = 16
# A word longer than this (a URL, a long model name) may be folded inside a wrapped text column:
# keeping it whole would make the column alone wider than most terminals.
LONGEST_WHOLE_WORD = 24
# The key columns that each block repeats take at most this share of the width.
KEY_SHARE = 0.45


def _plain(cell: object) -> str | None:
    """A cell's text, or None for a renderable that is not text (such a table is left as it is)."""
    if isinstance(cell, str):
        return cell
    plain = getattr(cell, "plain", None)
    return plain if isinstance(plain, str) else None


def _longest_word(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


def _longest_line(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _numeric(text: str) -> bool:
    stripped = text.strip().replace(",", "").rstrip("%").lstrip("$")
    if stripped in ("", "NULL", "-", "—", "nan", "inf", "-inf"):
        return True
    try:
        float(stripped)
    except ValueError:
        return False
    return True


@dataclasses.dataclass(frozen=True)
class _Measure:
    minimum: int  # the narrowest it can be without breaking a header word or a short value
    maximum: int  # its natural width (the longest line of its header and values)
    whole: bool  # every value is short: printed on one line, never wrapped
    numeric: bool


def _measure(column: Any) -> _Measure | None:
    header = _plain(column.header)
    cells = [_plain(cell) for cell in column._cells]
    if header is None or any(cell is None for cell in cells):
        return None
    values = [cell for cell in cells if cell is not None]
    longest_value = max((_longest_line(value) for value in values), default=0)
    whole = longest_value <= WHOLE_UP_TO
    header_word = _longest_word(header)
    if whole:
        minimum = max(longest_value, header_word)
    else:
        words = max((_longest_word(value) for value in values), default=0)
        minimum = max(header_word, min(words, LONGEST_WHOLE_WORD))
    minimum = max(minimum, column.min_width or 0, 1)
    maximum = max(minimum, _longest_line(header), longest_value)
    return _Measure(minimum, maximum, whole, all(_numeric(value) for value in values))


class _Layout:
    """The widths a table's columns need, borders and padding included."""

    def __init__(self, table: Any, measures: list[_Measure]) -> None:
        self.table = table
        self.measures = measures
        _top, right, _bottom, left = table.padding
        self.left, self.right = int(left), int(right)

    def _padding(self, count: int) -> int:
        inner = (self.left + self.right) * count
        if not self.table.pad_edge and count:
            inner -= self.left + self.right
        return inner

    def _borders(self, count: int) -> int:
        if not self.table.box:
            return 0
        return (2 if self.table.show_edge else 0) + max(count - 1, 0)

    def fixed(self, count: int) -> int:
        return self._padding(count) + self._borders(count)

    def need(self, indexes: Sequence[int]) -> int:
        return self.fixed(len(indexes)) + sum(self.measures[i].minimum for i in indexes)

    def natural(self, indexes: Sequence[int]) -> int:
        return self.fixed(len(indexes)) + sum(self.measures[i].maximum for i in indexes)

    def widths(self, indexes: Sequence[int], width: int) -> list[int]:
        """Each column's width when ``indexes`` share ``width``: every column at its minimum, the
        room left given to the wrapped columns in proportion to what they would still take."""
        chosen = [self.measures[i].minimum for i in indexes]
        room = width - self.fixed(len(indexes)) - sum(chosen)
        wants = [self.measures[i].maximum - self.measures[i].minimum for i in indexes]
        while room > 0 and any(wants):
            total = sum(wants)
            given = 0
            for k, want in enumerate(wants):
                share = min(want, max(1, room * want // total)) if want else 0
                share = min(share, room - given)
                chosen[k] += share
                wants[k] -= share
                given += share
            if not given:
                break
            room -= given
        return chosen


def _part(table: Any, indexes: Sequence[int], widths: Sequence[int] | None, title: str | None) -> Any:
    part = copy.copy(table)
    part.columns = []
    for new_index, index in enumerate(indexes):
        column = dataclasses.replace(table.columns[index], _index=new_index, _cells=list(table.columns[index]._cells))
        if widths is not None:
            column.width = widths[new_index]
            column.min_width = None
            column.max_width = None
            column.overflow = "fold"
            column.no_wrap = False
        part.columns.append(column)
    part.title = title
    return part


def _keys(layout: _Layout, width: int) -> list[int]:
    """The leading text columns (up to two) that name a row, if they leave room for the rest."""
    keys: list[int] = []
    for index, measure in enumerate(layout.measures[:2]):
        if measure.numeric or layout.need([*keys, index]) > width * KEY_SHARE:
            break
        keys.append(index)
    return keys


def _titled(title: object, part: int, parts: int) -> str:
    label = f"part {part} of {parts}"
    return f"{title} ({label})" if title else label


def _records(table: Any, width: int) -> list[Any]:
    """One block a row: the row's headers beside its values."""
    from rich.table import Table

    headers = [_plain(column.header) or "" for column in table.columns]
    cells = [list(column._cells) for column in table.columns]
    rows = len(cells[0]) if cells else 0
    shown = Table(title=table.title, box=table.box, show_header=False, show_lines=False, padding=table.padding)
    shown.add_column("column", overflow="fold")
    shown.add_column("value", overflow="fold")
    for row in range(rows):
        for header, column in zip(headers, cells, strict=True):
            shown.add_row(header, column[row], end_section=column is cells[-1])
    return fold(shown, width)


def fold(table: Any, width: int) -> list[Any]:
    """The tables to print, in order, so that ``table`` fits ``width`` columns with nothing cut."""
    measures = [_measure(column) for column in table.columns]
    if not table.columns or any(m is None for m in measures):
        return [table]
    layout = _Layout(table, [m for m in measures if m is not None])
    everything = list(range(len(table.columns)))
    if layout.natural(everything) <= width:
        return [table]
    if layout.need(everything) <= width:
        return [_part(table, everything, layout.widths(everything, width), table.title)]
    keys = _keys(layout, width)
    rest = [i for i in everything if i not in keys]
    blocks: list[list[int]] = []
    for index in rest:
        if blocks and layout.need([*keys, *blocks[-1], index]) <= width:
            blocks[-1].append(index)
        else:
            blocks.append([index])
    # records read better than blocks with no key to tie a value to its row, or one column each
    narrow = (len(blocks) > 1 and not keys) or (len(blocks) > 3 and all(len(block) == 1 for block in blocks))
    if len(table.columns) <= 2 or narrow or any(layout.need([*keys, *block]) > width for block in blocks):
        if len(table.columns) <= 2:  # one or two columns that cannot fit: wrapped anyway
            return [_part(table, everything, layout.widths(everything, width), table.title)]
        return _records(table, width)
    return [
        _part(table, [*keys, *block], layout.widths([*keys, *block], width), _titled(table.title, n, len(blocks)))
        for n, block in enumerate(blocks, start=1)
    ]
