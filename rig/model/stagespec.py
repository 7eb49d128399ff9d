"""Stages as the analysis reads them: plain data that `rig.config.stages` builds from a
config's `[[stages]]` tables, so the analysis never imports the configuration."""

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


@dataclass(frozen=True)
class StageSpec:
    name: str
    start: Boundary
    end: Boundary
