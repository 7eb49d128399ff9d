"""Stages from a config's `[[stages]]` (or run.json's snapshot of them) as the model's
`Boundary`/`StageSpec`."""

from __future__ import annotations

import re

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
        boundary = Boundary("marker", _marker(b), _pattern(b))
    elif len(kinds) != 1:
        b.error(
            "",
            "exactly one of marker = NAME, console = REGEX, power = true "
            "(or marker and console: the pattern stands in when the marker is not seen)",
            b.data,
        )
    elif kinds == ["power"]:
        if b.bool("power") is not True:
            b.error("power", "true", False)
        boundary = Boundary("power")
    elif kinds == ["marker"]:
        boundary = Boundary("marker", _marker(b))
    else:
        boundary = Boundary("console", _pattern(b))
    b.done()
    return boundary


def _marker(b: Table) -> str:
    marker = names.canonical_marker(b.str("marker"))
    if marker not in names.MARKERS:
        b.error("marker", "one of " + ", ".join(names.MARKERS), marker)
    return marker


def _pattern(b: Table) -> str:
    pattern = b.str("console")
    try:
        re.compile(pattern)
    except re.error as e:
        b.error("console", f"a regular expression ({e})", pattern)
    return pattern


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
