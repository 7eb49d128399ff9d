"""`[target]`: the labgrid place the board is (`rig run --place`, docs/instruments.md "A
place as the target"). `[power] driver = "labgrid"` takes the same keys to reach labgrid."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

from rig.config.tomlcheck import Table


@dataclass(frozen=True)
class TargetConfig:
    """Which labgrid place the board is, and how to reach labgrid."""

    place: str
    coordinator: str | None = None  # None: $LG_COORDINATOR, else labgrid's default
    python: str | None = None  # labgrid's interpreter (its own environment)
    power_resource: str | None = None  # which power resource, when the place has several
    console_resource: str | None = None  # which NetworkSerialPort, when it has several
    timeout_s: float = 15.0


def labgrid_place(t: Table, base: Path, place: str, resource_key: str) -> TargetConfig:
    """The keys of `[target]` and of `[power] driver = "labgrid"` alike; the power
    resource is `resource_key`."""
    python = t.str("python", None)
    if python and "/" in python:
        # Not resolve(): a venv's bin/python is a symlink to an interpreter that
        # would lose the venv's site-packages.
        python = os.path.abspath(base / python)
    return TargetConfig(
        place=place,
        coordinator=t.str("coordinator", None),
        python=python,
        power_resource=t.str(resource_key, None),
        timeout_s=t.seconds("timeout_s", TargetConfig.timeout_s, min=0.1),
    )


def parse_target(t: Table, base: Path) -> TargetConfig | None:
    """`[target]`, or None without a `place`: the table may still say how to reach
    labgrid, for `rig run --place NAME` to name the place."""
    place = t.str("place", None)
    if place is not None and not place.strip():
        t.error("place", "a labgrid place name", place)
    out = labgrid_place(t, base, place or "", "power_resource")
    out = dataclasses.replace(out, console_resource=t.str("console_resource", None))
    t.done()
    return out if place is not None else None


def place_override(place: str | None) -> tuple[str, ...]:
    """The `--set` that `--place NAME` stands for, so run.json's config snapshot shows
    the place as `config.target.place` whichever way it was named."""
    return () if place is None else (f"target.place={json.dumps(place)}",)
