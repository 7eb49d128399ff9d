"""Stages from a config's `[[stages]]` tables (or run.json's config snapshot of them),
as the model's `Boundary`/`StageSpec` the analysis reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rig import names
from rig.config.tomlcheck import Table
from rig.errors import ConfigError
from rig.model.stagespec import Boundary, StageSpec

DEFAULT_STAGES = (
    StageSpec("bootloader", Boundary("power"), Boundary("marker", "bootm")),
    StageSpec("kernel", Boundary("marker", "bootm"), Boundary("marker", "do_mount_root")),
    StageSpec(
        "rootfs_mount", Boundary("marker", "do_mount_root"), Boundary("marker", "kernel_init")
    ),
    StageSpec(
        "init", Boundary("marker", "kernel_init"), Boundary("console", "Starting application")
    ),
    StageSpec(
        "application", Boundary("console", "Starting application"), Boundary("marker", "ui_ready")
    ),
)


def _boundary(t: Table, key: str, default: Boundary | None) -> Boundary:
    if not t.has(key):
        if default is None:
            raise ConfigError(f"{t.path}: missing key '{t.key(key)}'")
        return default
    b = t.table(key)
    kinds = [k for k in ("marker", "console", "power") if b.has(k)]
    if kinds == ["marker", "console"]:
        return _marker_or_console(b)
    if len(kinds) != 1:
        b.error(
            "",
            "exactly one of marker = NAME, console = REGEX, power = true "
            "(or marker and console: the pattern stands in when the marker is not seen)",
            b.data,
        )
    kind = kinds[0]
    if kind == "power":
        if b.bool("power") is not True:
            b.error("power", "true", False)
        b.done()
        return Boundary("power")
    value = b.str(kind)
    if kind == "marker":
        value = names.canonical_marker(value)
        if value not in names.MARKERS:
            b.error(kind, "one of " + ", ".join(names.MARKERS), value)
    else:
        try:
            re.compile(value)
        except re.error as e:
            b.error(kind, f"a regular expression ({e})", value)
    b.done()
    return Boundary(kind, value)


def _marker_or_console(b: Table) -> Boundary:
    marker = names.canonical_marker(b.str("marker"))
    if marker not in names.MARKERS:
        b.error("marker", "one of " + ", ".join(names.MARKERS), marker)
    pattern = b.str("console")
    try:
        re.compile(pattern)
    except re.error as e:
        b.error("console", f"a regular expression ({e})", pattern)
    b.done()
    return Boundary("marker", marker, pattern)


def parse_stages(root: Table) -> tuple[StageSpec, ...]:
    tables = root.tables("stages")
    if not tables:
        return DEFAULT_STAGES
    out: list[StageSpec] = []
    prev = Boundary("power")
    for t in tables:
        name = t.str("name")
        start = _boundary(t, "start", prev)
        end = _boundary(t, "end", None)
        t.done()
        out.append(StageSpec(name, start, end))
        prev = end
    seen = [s.name for s in out]
    dup = next((n for n in seen if seen.count(n) > 1), None)
    if dup:
        raise ConfigError(f"{root.path}: key 'stages': stage name {dup!r} appears twice")
    return tuple(out)


def stages_from_snapshot(snapshot: dict[str, Any] | None, where: Path) -> tuple[StageSpec, ...]:
    """The stage list of a config snapshot kept in run.json (defaults when it has none)."""
    if not snapshot or "stages" not in snapshot:
        return DEFAULT_STAGES
    return parse_stages(Table(where, {"stages": snapshot["stages"]}))
