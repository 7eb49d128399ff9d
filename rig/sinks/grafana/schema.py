"""Check a dashboard's JSON against the schema the Grafana Foundation SDK carries.

The SDK (Python, generated from Grafana's CUE kinds) ships no JSON Schema file: its schema
is its typed models, each with a `from_json` decoder and a `to_json` encoder. A
dashboard conforms when
1. decoding it with the SDK's models and encoding it back gives the same JSON: a key the
   schema does not know is dropped by the decoder, a required one missing is added by
   the encoder, and either shows as a difference;
2. every decoded value has the type the model declares (the decoders assign what they
   read unchecked): str, int, float, bool, a list of, a Literal's values, an enum's
   values, a nested model.
Panel options and field configs are decoded by the panel plugin's models (timeseries,
table, piechart ...), panel targets by the datasource's query model: the rig's InfluxQL
model (rig.sinks.grafana.influx), since the SDK has none; a target of a datasource with
no model is a problem, not an untyped bag.
"""

from __future__ import annotations

import enum
import functools
import json
import types
import typing
from collections.abc import Iterator
from typing import Any

from grafana_foundation_sdk.cog import plugins
from grafana_foundation_sdk.cog import runtime as cogruntime
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as sdk

from rig.errors import RigError
from rig.sinks.grafana import influx


@functools.cache
def _register() -> None:
    # The SDK's decoders find panel and query models through a registry it leaves empty.
    plugins.register_default_plugins()
    influx.register()


def decode(data: dict[str, Any]) -> sdk.Dashboard:
    """The dashboard as the SDK's typed models (InfluxQL annotations as InfluxAnnotation)."""
    _register()
    dash = sdk.Dashboard.from_json(data)
    raw = data.get("annotations", {}).get("list", [])
    annotations = dash.annotations.list_val or []
    for i, a in enumerate(annotations):
        if a.datasource.type_val == influx.PLUGIN_ID:
            annotations[i] = influx.InfluxAnnotation.from_json(raw[i])
    return dash


def encode(dash: sdk.Dashboard) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(dash, cls=JSONEncoder))
    return out


def problems(data: dict[str, Any]) -> list[str]:
    """What in `data` does not conform, as `path: what` lines; empty when it conforms."""
    try:
        dash = decode(data)
        return [*_differences("$", data, encode(dash)), *_types("$", dash)]
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
        # the SDK's decoders index what they expect (a panel's "type", a list's items)
        return [f"$: not decodable by the SDK's models ({type(e).__name__}: {e})"]


def check(data: dict[str, Any], name: str) -> None:
    """Raise RigError (exit 3: the dashboards are the rig's code, not the user's input)
    naming what does not conform."""
    found = problems(data)
    if found:
        more = f" (and {len(found) - 10} more)" if len(found) > 10 else ""
        raise RigError(f"{name}: not Grafana's dashboard schema: " + "; ".join(found[:10]) + more)


def _differences(path: str, given: Any, schema: Any) -> Iterator[str]:
    if isinstance(given, dict) and isinstance(schema, dict):
        for key in sorted(given.keys() - schema.keys()):
            yield f"{path}.{key}: not in the schema"
        for key in sorted(schema.keys() - given.keys()):
            yield f"{path}.{key}: required by the schema, missing"
        for key in sorted(given.keys() & schema.keys()):
            yield from _differences(f"{path}.{key}", given[key], schema[key])
    elif isinstance(given, list) and isinstance(schema, list) and len(given) == len(schema):
        for i, (g, s) in enumerate(zip(given, schema, strict=True)):
            yield from _differences(f"{path}[{i}]", g, s)
    elif given != schema or type(given) is not type(schema):
        yield f"{path}: {given!r} reads back as {schema!r}"


def _is_model(value: Any) -> bool:
    return callable(getattr(value, "to_json", None)) and hasattr(type(value), "from_json")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _types(path: str, obj: Any) -> list[str]:
    """Every attribute of a decoded model against the model's type hints."""
    found: list[str] = []
    for name, hint in _hints(type(obj)).items():
        if name.startswith("_") or not hasattr(obj, name):
            continue
        found += _value(f"{path}.{name}", getattr(obj, name), hint)
    return found


def _value(path: str, value: Any, hint: Any) -> list[str]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any or hint is object:
        return _types(path, value) if _is_model(value) else []
    if origin in (typing.Union, types.UnionType):
        # judge the value by the arm of its shape (a set optional by its type, a Panel by
        # Panel rather than RowPanel), so the problems named are the ones that matter
        arms = [a for a in args if _shaped(value, a)] or list(args)
        tries = [_value(path, value, arm) for arm in arms]
        return [] if any(not t for t in tries) else min(tries, key=len)
    if origin is typing.Literal:
        return [] if value in args else [f"{path}: {value!r} is not one of {list(args)}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: expected a list, found {value!r}"]
        return [p for i, v in enumerate(value) for p in _value(f"{path}[{i}]", v, args[0])]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: expected an object, found {value!r}"]
        return [p for k, v in value.items() for p in _value(f"{path}.{k}", v, args[1])]
    if isinstance(hint, type):
        return _instance(path, value, hint)
    return []  # a hint the SDK does not use: nothing to check against


def _shaped(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (list, dict):
        return isinstance(value, origin)
    if hint is type(None):
        return value is None
    if isinstance(hint, type) and hasattr(hint, "from_json"):
        return isinstance(value, hint)
    return value is not None


def _instance(path: str, value: Any, cls: type) -> list[str]:
    if value is None and cls is type(None):
        return []
    if issubclass(cls, enum.Enum):
        if value in {e.value for e in cls} and not isinstance(value, bool):
            return []
        return [f"{path}: {value!r} is not one of {[e.value for e in cls]}"]
    if cls is bool or cls is str:
        return (
            [] if isinstance(value, cls) else [f"{path}: expected {cls.__name__}, found {value!r}"]
        )
    if cls in (int, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and (cls is float or isinstance(value, int))
        return [] if ok else [f"{path}: expected {cls.__name__}, found {value!r}"]
    if isinstance(value, cogruntime.UnknownDataquery):
        # the panel's datasource type chooses the query model; none is registered for it
        return [f"{path}: no query model for the panel's datasource type"]
    if isinstance(value, dict) and hasattr(cls, "from_json"):
        value = cls.from_json(value)  # fields the SDK's decoder leaves as read (panel links)
    if not isinstance(value, cls):
        return [f"{path}: expected {cls.__name__}, found {value!r}"]
    return _types(path, value) if _is_model(value) else []
