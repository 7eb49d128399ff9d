"""Knobs of the console analysis, from the `[analysis]` table of a config or defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rig.analysis.parsers.app import AppPattern, compile_patterns


@dataclass(frozen=True)
class AnalysisOptions:
    initcall_threshold_s: float = 0.010  # initcalls at least this slow get an advisory
    top_n: int = 10  # rows of the "where is the time going" table
    min_gain_s: float = 0.001  # advisories promising less than this are dropped
    silence_min_s: float = 0.001  # unattributed silences shorter than this are not listed
    app_events: tuple[AppPattern, ...] = ()

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any] | None) -> AnalysisOptions:
        """Keys: initcall_threshold_ms, top_n, min_gain_ms, silence_min_ms, app_events
        ([{name, regex}])."""
        m = m or {}
        d = cls()
        return cls(
            initcall_threshold_s=float(m.get("initcall_threshold_ms", d.initcall_threshold_s * 1e3))
            / 1e3,
            top_n=int(m.get("top_n", d.top_n)),
            min_gain_s=float(m.get("min_gain_ms", d.min_gain_s * 1e3)) / 1e3,
            silence_min_s=float(m.get("silence_min_ms", d.silence_min_s * 1e3)) / 1e3,
            app_events=tuple(compile_patterns(m.get("app_events", ()))),
        )
