"""Ground truth of the boots an analyzer capture covers (`truth.json`).

All `*_s` times are true, continuous times in seconds from that boot's power edge; the
`*_ns` values are host CLOCK_MONOTONIC. Only what happened before the rail fell and
before the capture stopped is reported.

A console line's `t_s` is when its first byte left the board; `due_ns` is when the
adapter model delivered it to the host and `written_ns` when the simulator actually put
it on the pty (a busy host can delay that write): the host's reads follow `written_ns`.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rig.artifacts import atomic
from rig.names import TRUTH_SCHEMA
from simboard.board import Boot
from simboard.capture import Arming, first_sample, sample_count
from simboard.console import Delivery
from simboard.profile import Profile
from simboard.supply import boot_rail
from simboard.timeline import plan


def delivery_of(deliveries: Sequence[Delivery], offset: int) -> Delivery | None:
    """The written transfer that carried the stream's byte `offset` (None: never written,
    or dropped by a full pty)."""
    i = bisect.bisect_right([d.offset for d in deliveries], offset) - 1
    if i < 0 or offset >= deliveries[i].offset + deliveries[i].sent:
        return None
    return deliveries[i]


def _line(ln: Any, deliveries: Sequence[Delivery]) -> dict[str, Any]:
    d = delivery_of(deliveries, ln.offset)
    return {
        "text": ln.text,
        "t_s": ln.t_s,
        "event_s": ln.event_s,
        "printk_ts": ln.printk_ts,
        "bytes": ln.offset,
        "due_ns": d.due_ns if d else None,
        "written_ns": d.written_ns if d else None,
    }


def boot_truth(
    boot: Boot,
    profile: Profile,
    arming: Arming,
    stopped_ns: int,
    seed: int | None = None,
    deliveries: Sequence[Delivery] = (),
) -> dict[str, Any]:
    tl = boot.timeline
    cut = min(boot.cut_s(), (stopped_ns - boot.power_edge_ns) / 1e9)
    n = sample_count(arming, stopped_ns)
    edge_sample = int(first_sample(boot.power_edge_ns - arming.armed_ns, arming.samplerate))
    edge_seen = 0 <= edge_sample < n and boot.cut_s() > 0
    c = profile.console
    rail = boot_rail(profile, seed, boot, 0.0)
    return {
        "boot_index": boot.index,
        "relay_on_ns": boot.relay_on_ns,
        "power_edge_ns": boot.power_edge_ns,
        "power_edge_sample": edge_sample if edge_seen else None,
        "bounce_s": [(float(b) - float(boot.bounce_ns[-1])) / 1e9 for b in boot.bounce_ns],
        "relay_off_ns": boot.off_ns,
        "power_drop_ns": boot.drop_ns,
        # How long the rail was down before this boot's edge (null: it had never been up
        # in this simulator) and where it sat meanwhile (0, or held up by the console).
        "off_before_s": (boot.power_edge_ns - boot.prev_drop_ns) / 1e9
        if boot.prev_drop_ns is not None
        else None,
        "back_power_v": profile.power.back_power_v,
        "markers": {k: t for k, t in tl.markers.items() if t < cut},
        # energy_j: what the supply delivered over the stage's true span (V x I, exact).
        "stages": [
            {**s.as_dict(), "energy_j": rail.energy(s.start_s, s.end_s)}
            for s in tl.stages
            if s.end_s < cut
        ],
        "supply": {
            "power_switch": boot.switch,
            "volts": boot.volts,
            "current_limit_a": boot.limit_a,
        },
        "lines": [_line(ln, deliveries) for ln in tl.lines if ln.t_s < cut],
        "kernel_clock": {
            "start_s": tl.kernel_start_s
            if tl.kernel_start_s is not None and tl.kernel_start_s < cut
            else None,
            "offset_s": tl.offset_s,
            "drift_ppm": tl.drift_ppm,
        },
        "console": {
            "baud": c.baud,
            "usb_latency_ms": c.usb_latency_ms,
            "usb_buffer_bytes": c.usb_buffer_bytes,
            "bytes": tl.bytes_sent_by(cut),
            # The simulator's own lateness against the adapter model (host scheduling).
            "write_late_max_us": max(
                ((d.written_ns - d.due_ns) / 1e3 for d in deliveries), default=None
            ),
        },
        "halted": tl.halted,  # "hang" or "panic" from an injected fault
        "fault": str(boot.fault) if boot.fault else None,  # fixed or drawn for this boot
        "completed": tl.end_s <= cut and tl.halted is None,
    }


def truth(
    profile: Profile,
    label: str,
    seed: int,
    boots: list[Boot],
    arming: Arming,
    stopped_ns: int,
    deliveries: Mapping[int, Sequence[Delivery]] | None = None,
) -> dict[str, Any]:
    """Every boot whose power-on (relay frame) happened while the analyzer was armed;
    `deliveries`: each boot's console writes (ConsolePort.deliveries)."""
    sent = deliveries or {}
    inside = [b for b in boots if arming.armed_ns <= b.relay_on_ns <= stopped_ns]
    return {
        "schema": TRUTH_SCHEMA,
        "profile": label,
        "board": profile.board.name,
        "variant": profile.board.variant,
        "seed": seed,
        "samplerate": arming.samplerate,
        "armed_ns": arming.armed_ns,
        "stopped_ns": stopped_ns,
        "wiring": arming.wiring,
        # quiet / initcall_debug, and each stage's duration at factor 1 with them: the
        # true cost of a variant is planned_s with it on minus planned_s with it off.
        "instrumentation": {
            **profile.instrumentation.as_dict(),
            "planned_s": {s.name: s.duration_s for s in plan(profile, 0, 0, True).stages},
        },
        # what the rig set (simboard.knobs) and the command line the kernel saw
        "knobs": {**profile.settings.as_dict(), "cmdline": profile.running().cmdline},
        "boots": [
            boot_truth(b, profile, arming, stopped_ns, seed, sent.get(b.index, ())) for b in inside
        ],
    }


def write(path: Path, doc: dict[str, Any]) -> None:
    # allow_nan=False: a NaN or inf here would be a simulator bug, not data.
    atomic.write_text(Path(path), json.dumps(doc, indent=1, allow_nan=False) + "\n", False)
