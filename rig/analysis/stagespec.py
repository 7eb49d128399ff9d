"""Stages as the analysis reads them: ordered boundaries, each the power edge, a GPIO
marker (with an optional console pattern standing in for it) or a console line pattern.

Plain data: `rig.config.stages` builds these from a config's `[[stages]]` tables, so the
analysis never imports the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Boundary:
    """A point in the boot: the power edge, a GPIO marker, or a console line pattern."""

    kind: str  # "power" | "marker" | "console"
    value: str = ""  # marker name or regular expression
    # A marker's console pattern, used when neither its GPIO nor its tag is seen (a
    # `quiet` kernel hides the tags): `end = { marker = "ui_ready", console = "..." }`.
    fallback: str = ""

    def describe(self) -> str:
        if self.kind == "power":
            return "power edge"
        alt = f" or console {self.fallback!r}" if self.fallback else ""
        return f"{self.kind} {self.value!r}{alt}"

    def as_dict(self) -> dict[str, str]:
        d = {"kind": self.kind, "value": self.value}
        if self.fallback:
            d["fallback"] = self.fallback
        return d


@dataclass(frozen=True)
class StageSpec:
    name: str
    start: Boundary
    end: Boundary
