"""InfluxDB line protocol encoding (pure): one `Point` -> one line. Newlines become
spaces everywhere (tags cannot carry them, string fields parse differently across
versions), and a backslash in a tag or key becomes `/` (no portable escape).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

FieldValue = float | int | bool | str


@dataclass(frozen=True)
class Point:
    measurement: str
    tags: Mapping[str, str]
    fields: Mapping[str, FieldValue]
    time_ns: int


def fields(**values: Any) -> dict[str, FieldValue]:
    """A point's fields, nulls left out. One field keeps one type per shard: a quantity is
    a float (a JSON `1` must not arrive as 1i, nor a numpy number as its repr); counts
    (`*_count`) and return codes are integers."""
    out = {k: v for k, v in values.items() if v is not None}
    for k, v in out.items():
        if isinstance(v, numbers.Real) and not isinstance(v, bool):
            out[k] = v if k.endswith("_count") or k == "return_code" else float(v)
    return out


def _clean(s: str) -> str:
    return s.replace("\r", " ").replace("\n", " ")


def _name(s: str) -> str:
    return _clean(s).replace("\\", "/")


def escape_measurement(s: str) -> str:
    return _name(s).replace(",", r"\,").replace(" ", r"\ ")


def escape_key(s: str) -> str:
    """Tag keys, tag values and field keys."""
    return _name(s).replace(",", r"\,").replace("=", r"\=").replace(" ", r"\ ")


def field_value(v: FieldValue) -> str | None:
    """The encoded value, or None for a value line protocol cannot carry (NaN, inf)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v}i"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else None
    return '"' + _clean(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def encode(p: Point) -> str | None:
    """One line without the newline; None when no field survives (nothing to write)."""
    fields = []
    for k, v in p.fields.items():
        enc = field_value(v)
        if enc is not None:
            fields.append(f"{escape_key(k)}={enc}")
    if not fields:
        return None
    # Sorted tags are what the server does anyway; doing it here saves it the work.
    tags = "".join(f",{escape_key(k)}={escape_key(v)}" for k, v in sorted(p.tags.items()) if v)
    return f"{escape_measurement(p.measurement)}{tags} {','.join(fields)} {p.time_ns}"


def encode_all(points: Iterable[Point]) -> list[str]:
    return [line for line in map(encode, points) if line is not None]
