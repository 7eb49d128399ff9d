"""The reference edges of a QEMU run (its `qemu-trace.log` and `qemu.json`): the hooks'
GPIO writes in seconds from the power-on (QMP RESUME), the ground truth console-only and
printk boundaries are checked against (tests/data/real/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.errors import ArtifactError
from rig.instruments.qemu.drivers import QEMU_JSON, TRACE_FILE
from rig.instruments.qemu.trace import parse_trace, rising_edges
from rig.untrusted import parse_json


def reference_edges(folder: Path) -> dict[str, float]:
    """Marker name -> seconds from power-on of its first rising edge (absent: not raised)."""
    info = _info(folder)
    resume = info.get("resume_wall_us")
    if not isinstance(resume, int):
        where = folder / QEMU_JSON
        raise ArtifactError(f"{where}: key 'resume_wall_us': the board was never powered on")
    rising = rising_edges(parse_trace(folder / TRACE_FILE), resume)
    out: dict[str, float] = {}
    for marker, line in (info.get("gpio") or {}).items():
        if rising.get(line):
            out[marker] = (rising[line][0] - resume) / 1e6
    return out


def command_lag_s(folder: Path) -> float | None:
    """How long QEMU's RESUME followed the power-on command (0.3-8 ms); None when
    qemu.json has no command time."""
    info = _info(folder)
    cmd, resume = info.get("command_wall_us"), info.get("resume_wall_us")
    if not isinstance(cmd, int) or not isinstance(resume, int):
        return None
    return (resume - cmd) / 1e6


def report_edges(folder: Path, console_only: bool) -> dict[str, float]:
    """The edges in seconds from the report's t = 0: the power edge (RESUME) of a run with
    the capture, the power-on command of a console-only one (RESUME when the command's
    time was not kept)."""
    edges = reference_edges(folder)
    lag = command_lag_s(folder) if console_only else None
    return {m: t + lag for m, t in edges.items()} if lag is not None else edges


def _info(folder: Path) -> dict[str, Any]:
    info_path = folder / QEMU_JSON
    try:
        info = parse_json(info_path.read_bytes())
    except (OSError, ValueError) as e:
        raise ArtifactError(f"{info_path}: {e}") from None
    if not isinstance(info, dict):
        raise ArtifactError(f"{info_path}: not a JSON object")
    return info
