"""Reading rows: values as read, checked where used (``as_float``)."""

from __future__ import annotations

import decimal

import numpy as np
import pytest

from jurybench.store import as_float


def test_as_float_takes_what_float_takes_and_refuses_the_rest() -> None:
    assert [as_float("2.5"), as_float(3), as_float(0.25), as_float(np.float32(1.5)), as_float(np.int64(4))] == [
        2.5,
        3.0,
        0.25,
        1.5,
        4.0,
    ]
    assert as_float(decimal.Decimal("0.125")) == 0.125
    for wrong in (None, {"a": 1}, [1.0], b"1"):
        with pytest.raises(TypeError):
            as_float(wrong)
    with pytest.raises(ValueError):
        as_float("four")
