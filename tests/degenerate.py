"""The degenerate samples tests/test_degenerate_*.py drive every statistics entry point
through (issue 22, defect 1)."""

from __future__ import annotations

import math

#: Seconds a stage measured on each boot; every case a real soak can journal.
CASES: dict[str, list[float]] = {
    "one boot": [0.03],
    "two boots": [0.03, 0.031],
    "identical": [0.3] * 5,
    "within rounding": [0.1 + 0.2] * 4 + [0.3],
    # rootfs_mount from two printk stamps on five boots of the board
    "printk differences": [0.030001, 0.030001, 0.030001000000000028, 0.030000999999999972],
    "zero duration": [0.0, 0.0, 0.0],
    "spread": [0.12, 0.125, 0.121, 0.3, 0.122],
}
#: What is no measurement; only an in-process caller can hold one (the journal, the
#: report readers and the model codec refuse them).
NOT_FINITE: dict[str, list[float]] = {
    "nan among values": [0.03, math.nan, 0.031],
    "inf among values": [0.03, math.inf, 0.031],
    "only nan": [math.nan, math.nan],
    "empty": [],
}
ALL = CASES | NOT_FINITE


def numbers_or_none(obj: object) -> bool:
    """Every float field of `obj` is a number (None is a documented 'not known')."""
    return all(not isinstance(v, float) or math.isfinite(v) for v in vars(obj).values())
