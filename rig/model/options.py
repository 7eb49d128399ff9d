"""Knobs of the console analysis, from the `[analysis]` table of a config or defaults,
and the application events it looks for (rig.analysis.parsers.app)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rig.errors import InputError


@dataclass(frozen=True)
class AppPattern:
    name: str
    regex: re.Pattern[str]


def compile_patterns(specs: Iterable[Mapping[str, str]]) -> list[AppPattern]:
    """`[{name, regex}, ...]` -> patterns; a bad regex is an error naming the pattern."""
    out: list[AppPattern] = []
    for spec in specs:
        name, regex = spec.get("name"), spec.get("regex")
        if not name or regex is None:
            raise ValueError(f"app event pattern {dict(spec)!r}: expected keys 'name' and 'regex'")
        try:
            out.append(AppPattern(name, re.compile(regex)))
        except re.error as e:
            raise ValueError(f"app event {name!r}: invalid regex {regex!r}: {e}") from e
    return out


@dataclass(frozen=True)
class AnalysisOptions:
    initcall_threshold_s: float = 0.010  # initcalls at least this slow get an advisory
    top_n: int = 10  # rows of the "where is the time going" table
    min_gain_s: float = 0.001  # advisories promising less than this are dropped
    silence_min_s: float = 0.001  # unattributed silences shorter than this are not listed
    app_events: tuple[AppPattern, ...] = ()
    #: A rail down for less than this before the power-on was not a cold boot.
    min_off_s: float = 0.05
    #: Below this the rail counts as off; a rail that never fell below it while the board
    #: was switched off was back-powered (docs/cold-boot.md).
    rail_off_v: float = 0.3

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any] | None, where: str = "analysis") -> AnalysisOptions:
        """Keys: initcall_threshold_ms, top_n, min_gain_ms, silence_min_ms, app_events
        ([{name, regex}]), min_off_s, rail_off_v."""
        m = m or {}
        if not isinstance(m, Mapping):
            raise InputError(f"key '{where}': expected a table, found {type(m).__name__}")
        d = cls()
        unknown = sorted(set(m) - set(KEYS))
        if unknown:
            raise InputError(f"unknown key '{where}.{unknown[0]}' (known: {', '.join(KEYS)})")
        ms = {k: _number(m, k, getattr(d, s) * 1e3, where) for k, s in _DEFAULT_MS.items()}
        top_n = m.get("top_n", d.top_n)
        if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
            raise InputError(f"key '{where}.top_n': expected an integer >= 1, found {top_n!r}")
        events = m.get("app_events", ())
        if not isinstance(events, list | tuple) or not all(isinstance(e, Mapping) for e in events):
            raise InputError(f"key '{where}.app_events': expected an array of {{name, regex}}")
        try:
            patterns = tuple(compile_patterns(events))
        except ValueError as e:
            raise InputError(f"key '{where}.app_events': {e}") from None
        return cls(
            initcall_threshold_s=ms["initcall_threshold_ms"] / 1e3,
            top_n=top_n,
            min_gain_s=ms["min_gain_ms"] / 1e3,
            silence_min_s=ms["silence_min_ms"] / 1e3,
            app_events=patterns,
            min_off_s=_number(m, "min_off_s", d.min_off_s, where),
            rail_off_v=_number(m, "rail_off_v", d.rail_off_v, where),
        )


#: The `[analysis]` keys (docs/analysis.md).
KEYS = (
    "initcall_threshold_ms",
    "top_n",
    "min_gain_ms",
    "silence_min_ms",
    "app_events",
    "min_off_s",
    "rail_off_v",
)
_DEFAULT_MS = {
    "initcall_threshold_ms": "initcall_threshold_s",
    "min_gain_ms": "min_gain_s",
    "silence_min_ms": "silence_min_s",
}


def _number(m: Mapping[str, Any], key: str, default: float, where: str) -> float:
    v = m.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise InputError(f"key '{where}.{key}': expected a finite number >= 0, found {v!r}")
    return float(v)
