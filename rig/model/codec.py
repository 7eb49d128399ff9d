"""JSON <-> the model's dataclasses, one generic codec: what a field's type says is what
the JSON must hold, and a mismatch names the key (`stages[2].duration_s`).

Rules a model class follows (rig/model/run.py, rig/model/report.py):
- a field's JSON key is its name; `opt()` fields are left out of the JSON while None
  (keys that appear only when there is something to say, such as a stage's energy);
- an `internal()` field is the analysis's own: neither written nor read;
- `rest()` collects the keys the class does not know, and writes them back after its
  own: a report from a newer rig read by this one loses nothing;
- numbers keep the JSON's own type (an int stays an int), so reading and writing a
  file gives it back byte for byte.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, Field, field, fields, is_dataclass
from enum import Enum
from functools import cache
from typing import Any, TypeVar

from rig.errors import ArtifactError

T = TypeVar("T")

JSONObject = dict[str, Any]


def opt(*, minimum: float | None = None) -> Any:
    """A field left out of the JSON while it is None."""
    return field(default=None, metadata={"omit_none": True, "minimum": minimum})


def key(name: str) -> Any:
    """A field whose JSON key is not a Python name (`return`)."""
    return field(default=None, metadata={"key": name})


def num(*, minimum: float) -> Any:
    """A required number that cannot be below `minimum` and still mean something."""
    return field(metadata={"minimum": minimum})


def internal(default: Any = None, *, factory: Callable[[], Any] | None = None) -> Any:
    """Analysis-side data the JSON does not hold (a phase's byte offsets)."""
    if factory is not None:
        return field(default_factory=factory, compare=False, metadata={"internal": True})
    return field(default=default, compare=False, metadata={"internal": True})


def rest() -> Any:
    """The keys this class does not know, kept in order."""
    return field(default_factory=dict, metadata={"rest": True})


def dump(obj: Any) -> Any:
    """The JSON value of a model object (plain data passes through)."""
    if is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for f in fields(obj):
            v = getattr(obj, f.name)
            if f.metadata.get("rest"):
                extra = v
            elif not (f.metadata.get("internal") or (v is None and f.metadata.get("omit_none"))):
                out[f.metadata.get("key", f.name)] = dump(v)
        for k, v in extra.items():
            out.setdefault(k, v)
        return out
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, list | tuple):
        return [dump(x) for x in obj]
    if isinstance(obj, dict):
        return {k: dump(v) for k, v in obj.items()}
    return obj


def load(cls: type[T], obj: Any, where: str = "") -> T:
    """`obj` read as `cls` (a model class, or a type such as `list[Stage]`); ArtifactError
    names the first key that does not fit."""
    if not is_dataclass(cls):
        return _value(cls, obj, where)  # type: ignore[no-any-return]
    if not isinstance(obj, dict):
        raise _mismatch(where, "an object", obj)
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    known: set[str] = set()
    rest_field: Field[Any] | None = None
    for f in fields(cls):  # type: ignore[arg-type]
        if f.metadata.get("rest"):
            rest_field = f
            continue
        if f.metadata.get("internal"):
            continue
        name = f.metadata.get("key", f.name)
        known.add(name)
        path = f"{where}.{name}" if where else name
        if name not in obj:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ArtifactError(f"missing key {path!r}")
            continue
        kwargs[f.name] = _value(hints[f.name], obj[name], path, f.metadata.get("minimum"))
    if rest_field is not None:
        kwargs[rest_field.name] = {k: v for k, v in obj.items() if k not in known}
    return cls(**kwargs)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _value(tp: Any, v: Any, key: str, minimum: float | None = None) -> Any:
    if tp is Any:
        return v
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = typing.get_args(tp)
        if v is None and type(None) in args:
            return None
        choices = [a for a in args if a is not type(None)]
        for a in choices:
            try:
                return _value(a, v, key, minimum)
            except ArtifactError as e:
                here = f"{_where(key)}: expected "
                if len(choices) == 1 and not str(e).startswith(here):
                    raise  # a key inside the value: its own message is the right one
        expected = " or ".join(_describe(a, minimum) for a in args)
        raise _mismatch(key, expected, v)
    if origin in (list, tuple):
        if not isinstance(v, list):
            raise _mismatch(key, "an array", v)
        args = typing.get_args(tp)
        item = args[0] if args else Any
        seq = [_value(item, x, f"{key}[{i}]") for i, x in enumerate(v)]
        return tuple(seq) if origin is tuple else seq
    if origin is dict:
        if not isinstance(v, dict):
            raise _mismatch(key, "an object", v)
        item = typing.get_args(tp)[1]
        return v if item is Any else {k: _value(item, x, f"{key}.{k}") for k, x in v.items()}
    if is_dataclass(tp):
        return load(tp, v, key)  # type: ignore[arg-type]
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(v)
        except ValueError:
            raise _mismatch(key, " or ".join(repr(m.value) for m in tp), v) from None
    return _scalar(tp, v, key, minimum)


def _scalar(tp: Any, v: Any, key: str, minimum: float | None) -> Any:
    if tp is float:
        ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    elif tp is int:
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif tp in (str, bool):
        ok = isinstance(v, tp)
    else:
        raise TypeError(f"the model codec has no rule for {tp!r} ({key})")
    expected = _NAMES[tp] + (f" >= {minimum:g}" if minimum is not None else "")
    if not ok or (minimum is not None and v < minimum):
        raise _mismatch(key, expected, v)
    return v


def _describe(tp: Any, minimum: float | None = None) -> str:
    if tp in (int, float) and minimum is not None:
        return f"{_NAMES[tp]} >= {minimum:g}"
    if tp is type(None):
        return "null"
    if typing.get_origin(tp) in (list, tuple):
        return "an array"
    if typing.get_origin(tp) is dict or is_dataclass(tp):
        return "an object"
    if isinstance(tp, type) and issubclass(tp, Enum):
        return " or ".join(repr(m.value) for m in tp)
    return _NAMES.get(tp, getattr(tp, "__name__", str(tp)))


def _where(key: str) -> str:
    return f"key {key!r}" if key else "the top level"


def _mismatch(key: str, expected: str, found: Any) -> ArtifactError:
    return ArtifactError(f"{_where(key)}: expected {expected}, found {json.dumps(found)[:80]}")
