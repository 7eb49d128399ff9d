"""libsigrokdecode (API 3) decoder for bootrig: debounced power edges and boot marker edges."""

# Postponed annotations: PulseView bundles may embed a Python older than the rig's.
from __future__ import annotations

import contextlib
import ctypes
import math
from typing import ClassVar

import sigrokdecode as srd

POWER = 0
MARKERS = ("bootm", "do_mount_root", "kernel_init", "ui_ready")  # channel 1 + i
ANN_BOUNCE, ANN_UP, ANN_DOWN, ANN_MARKER = range(4)
ANN_SINCE = 4  # ANN_SINCE + i: span from power-up to an edge of marker i
ANN_WARN = ANN_SINCE + len(MARKERS)


class SamplerateError(Exception):
    pass


def has_channel(decoder: srd.Decoder, index: int) -> bool:
    present = decoder.has_channel(index)
    # libsigrokdecode 0.5.3 returns Py_True/Py_False without a new reference (sigrok bug
    # #1671); each call steals one and the interpreter aborts once the count reaches zero.
    # Giving one back is harmless where the bug is fixed (one leaked ref to a singleton).
    # Without libpython symbols to call, skip it: a few calls alone cannot exhaust the count.
    with contextlib.suppress(AttributeError, OSError):
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(present))
    return bool(present)


class Decoder(srd.Decoder):
    api_version = 3
    id = "bootmarkers"
    name = "Boot markers"
    longname = "bootrig boot markers"
    desc = "Debounced power rail edges and boot boundary GPIO toggles."
    license = "mit"
    inputs: ClassVar[list[str]] = ["logic"]
    outputs: ClassVar[list[str]] = []
    tags: ClassVar[list[str]] = ["Clock/timing", "Util"]
    channels = ({"id": "power", "name": "Power", "desc": "Target supply rail (via divider)"},)
    optional_channels = tuple(
        {"id": m, "name": m, "desc": f"GPIO toggled at the {m} boundary"} for m in MARKERS
    )
    options = ({"id": "debounce_us", "desc": "Power debounce time (µs)", "default": 1000.0},)
    annotations = (
        ("bounce", "Rejected power edges (relay bounce)"),
        ("power-up", "Power-up"),
        ("power-down", "Power-down"),
        ("marker", "Marker edge"),
        *((f"since-{m}", f"Power-up to {m}") for m in MARKERS),
        ("warning", "Warning"),
    )
    annotation_rows = (
        ("power", "Power", (ANN_BOUNCE, ANN_UP, ANN_DOWN)),
        ("markers", "Markers", (ANN_MARKER,)),
        # One row per marker: spans from power-up would overlap each other in a shared row.
        *((f"since-{m}", f"t({m})", (ANN_SINCE + i,)) for i, m in enumerate(MARKERS)),
        ("warnings", "Warnings", (ANN_WARN,)),
    )

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.samplerate = 0
        self.boot: int | None = None  # power-up sample of the boot in progress
        self.powered = False  # any power-up seen yet
        self.toggles = [0] * len(MARKERS)  # edges per marker in the boot in progress
        self.burst: list[int] | None = None  # [first, last, count] of rejected power edges
        self.held: list[tuple[int, int, int]] = []  # marker edges during a power debounce

    def metadata(self, key: int, value: int) -> None:
        if key == srd.SRD_CONF_SAMPLERATE:
            self.samplerate = value

    def start(self) -> None:
        self.out_ann = self.register(srd.OUTPUT_ANN)

    def put_ann(self, ss: int, es: int, cls: int, texts: list[str]) -> None:
        self.put(ss, es, self.out_ann, [cls, texts])

    def close_burst(self) -> None:
        if self.burst:
            first, last, n = self.burst
            self.put_ann(first, last, ANN_BOUNCE, [f"bounce {n}", f"B{n}", "B"])
            self.burst = None

    def power_edge(self, ss: int, level: int) -> None:
        if level:
            self.boot, self.powered = ss, True
            self.toggles = [0] * len(MARKERS)
            self.put_ann(ss, ss, ANN_UP, ["power-up", "up", "U"])
        else:
            self.boot = None
            self.put_ann(ss, ss, ANN_DOWN, ["power-down", "down", "D"])

    def marker_edge(self, i: int, ss: int, level: int) -> None:
        name, way = MARKERS[i], ("rise" if level else "fall")
        self.put_ann(ss, ss, ANN_MARKER, [f"marker {name} {way}", f"{name} {way}", name])
        if self.boot is not None:
            t = (ss - self.boot) / self.samplerate
            texts = [f"{name} {way} at +{t:.6f} s", f"{name} +{t:.6f} s", f"+{t:.3f} s"]
            self.put_ann(self.boot, ss, ANN_SINCE + i, texts)
            self.toggles[i] += 1
            if self.toggles[i] > 1:
                n = self.toggles[i]
                self.warn(ss, f"marker {name} toggled {n} times this boot", f"{name} x{n}")
        elif not self.powered:
            self.warn(ss, f"marker {name} before power-up", f"{name} early")

    def warn(self, ss: int, text: str, short: str) -> None:
        self.put_ann(ss, ss, ANN_WARN, [f"warning: {text}", short, "!"])

    def decode(self) -> None:
        if not self.samplerate:
            raise SamplerateError("Cannot decode without samplerate.")
        us = float(self.options["debounce_us"])
        # Integer samples the rail must hold; round() first so 1000 us at 1 MHz is 1000, not 1001.
        debounce = max(1, math.ceil(round(us * self.samplerate / 1e6, 6)))
        present = [i for i in range(len(MARKERS)) if has_channel(self, 1 + i)]
        marker_conds = [{1 + i: "e"} for i in present]
        stable = self.wait()[POWER]  # sample 0: the rail level before any edge
        # A rail already up (an analyzer armed before the power-off): the board's lines
        # falling with it are not markers toggling unpowered.
        self.powered = bool(stable)
        cand: int | None = None  # first sample of a power edge still being debounced
        while True:
            level = stable if cand is None else 1 - stable
            conds: list[dict[int | str, str | int]] = [{POWER: "f" if level else "r"}]
            conds += marker_conds
            # The only timer: when a pending edge is confirmed or a bounce burst is over.
            # Idle stretches are then skipped in C, sample by sample, never in Python.
            deadline = cand if cand is not None else self.burst[1] if self.burst else None
            if deadline is not None:
                conds.append({"skip": max(0, deadline + debounce - self.samplenum)})
            pins = self.wait(conds)
            now = self.samplenum
            if deadline is not None and self.matched[-1]:
                self.close_burst()
                if cand is not None:  # held long enough: a real power edge
                    stable = 1 - stable
                    self.power_edge(cand, stable)
                    cand = None
                    self.flush_held()
            if self.matched[0]:
                if cand is None:
                    cand = now
                else:  # fell back inside the debounce time: bounce
                    first = self.burst[0] if self.burst else cand
                    count = self.burst[2] + 1 if self.burst else 1
                    self.burst = [first, now, count]
                    cand = None
                    self.flush_held()
            for k, i in enumerate(present):
                if self.matched[1 + k]:
                    if cand is None:
                        self.marker_edge(i, now, pins[1 + i])
                    else:  # which boot it belongs to is known once the power edge settles
                        self.held.append((i, now, pins[1 + i]))

    def flush_held(self) -> None:
        for edge in self.held:
            self.marker_edge(*edge)
        self.held = []
