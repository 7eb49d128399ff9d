"""The reference edges of a QEMU run: what the hooks' GPIO writes were, in seconds from
the power-on (QMP RESUME), read from the `qemu-trace.log` and `qemu.json` every QEMU run
keeps. They are the ground truth the rig's console-only and printk boundaries are
checked against (tests/data/real/, bench/real_accuracy.py)."""

from __future__ import annotations

from pathlib import Path

from rig.instruments.qemu.drivers import QEMU_JSON, TRACE_FILE
from rig.instruments.qemu.trace import TraceError, parse_trace, rising_edges
from rig.untrusted import parse_json


def reference_edges(folder: Path) -> dict[str, float]:
    """Marker name -> seconds from power-on of its first rising edge (absent: not raised)."""
    info_path = folder / QEMU_JSON
    try:
        info = parse_json(info_path.read_bytes())
    except (OSError, ValueError) as e:
        raise TraceError(f"{info_path}: {e}") from None
    resume = info.get("resume_wall_us")
    if not isinstance(resume, int):
        raise TraceError(f"{info_path}: key 'resume_wall_us': the board was never powered on")
    rising = rising_edges(parse_trace(folder / TRACE_FILE), resume)
    out: dict[str, float] = {}
    for marker, line in (info.get("gpio") or {}).items():
        if rising.get(line):
            out[marker] = (rising[line][0] - resume) / 1e6
    return out
