"""Plan one boot of a board profile: pure code, no clocks, no I/O but `load`, which
checks a profile by planning it.

All times are true seconds from the power edge. The console is synchronous, like U-Boot
and a 2.6.31 printk on a serial console: the CPU continues only after the last stop bit
of what it printed, so console output costs boot time (the uncertainty principle).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rig.config.tomlcheck import load_toml
from rig.errors import ConfigError
from rig.names import MARKERS
from simboard.profile import STAGES, Profile, Stage, parse
from simboard.steps import Countdown, Initcall, Initcalls, KernelStart, Marker, Rest, Text, Wait

TAG = "bootrig: marker {}"
#: What a 2.6.31 kernel says when it gives up in each stage.
PANICS = {
    "kernel": "Kernel panic - not syncing: Attempted to kill the idle task!",
    "rootfs_mount": (
        "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(179,2)"
    ),
    "init": "Kernel panic - not syncing: Attempted to kill init!",
    "application": "Kernel panic - not syncing: Attempted to kill init!",
}
_SIGMA_CLIP = 4.0  # a factor never leaves 1 +- 4 sigma, and never drops below 0.2


@dataclass(frozen=True)
class Fault:
    """Injected failure: `hang`/`panic` where STAGE's rest step begins, or `console-lost`
    (the board boots, but the USB-serial adapter delivers nothing).

    Also: `console-closed[:AT]` (the adapter vanishes at fraction AT of the boot's console
    time: its pty is closed, a new one appears behind the same link), `brownout:STAGE`
    (the rail drops where STAGE's rest step begins and comes back: the board boots
    again, simboard.board), `missing-marker:M`
    (marker M's hook does not fire: no GPIO toggle, no tag), `garbage[:LINE]` (line
    noise before console line LINE) and `analyzer` (the capture cannot be read out).
    `stage` holds the stage or marker name, `at` the fraction or line index.
    """

    kind: str
    stage: str | None = None
    at: float | None = None

    @classmethod
    def parse(cls, text: str) -> Fault:
        kind, _, stage = text.partition(":")
        if kind in ("console-lost", "analyzer") and not stage:
            return cls(kind)
        if kind in ("hang", "brownout") and stage in STAGES:
            return cls(kind, stage)
        if kind == "panic" and stage in PANICS:
            return cls(kind, stage)
        if kind == "missing-marker" and stage in MARKERS:
            return cls(kind, stage)
        number = _number(stage) if stage else None
        if kind == "console-closed" and (not stage or (number is not None and 0 <= number <= 1)):
            return cls(kind, at=0.5 if number is None else number)
        if kind == "garbage" and (not stage or (number is not None and number.is_integer())):
            return cls(kind, at=max(0.0, number or 0.0))
        raise ValueError(
            f"fault {text!r}: expected console-lost, hang:STAGE (STAGE one of "
            f"{', '.join(STAGES)}) or panic:STAGE (STAGE one of {', '.join(PANICS)}); "
            f"or console-closed[:FRACTION 0..1], missing-marker:MARKER (one of "
            f"{', '.join(MARKERS)}), garbage[:LINE], brownout:STAGE or analyzer"
        )

    def __str__(self) -> str:
        if self.stage:
            return f"{self.kind}:{self.stage}"
        if self.at is not None:
            return f"{self.kind}:{self.at:g}"
        return self.kind


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


#: Seed stream of the garbage bytes (the fault draw is 4, the variance factors 1).
_GARBAGE = 5


def garbage_bytes(seed: int | None, boot: int) -> bytes:
    """4..32 bytes of line noise: anything but CR and LF (which would end a line)."""
    rng = np.random.default_rng([seed, boot, _GARBAGE] if seed is not None else None)
    raw = rng.integers(0, 256, size=int(rng.integers(4, 33)), dtype=np.uint8).tobytes()
    return raw.replace(b"\n", b"\x00").replace(b"\r", b"\xff")


class _Halt(Exception):
    """The CPU stops: a hang or a panic."""


@dataclass(frozen=True)
class Line:
    """One console line as the board sent it."""

    text: str  # decoded, without CR/LF
    t_s: float  # start bit of its first byte
    event_s: float  # when the CPU issued it
    printk_ts: float | None  # the printed printk timestamp, if any
    offset: int  # byte offset of its first byte in the boot's console stream


@dataclass(frozen=True)
class StageSpan:
    name: str
    start_s: float
    end_s: float
    nominal_s: float
    factor: float

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "start_s": self.start_s,
            "end_s": self.end_s,
            "duration_s": self.duration_s,
            "nominal_s": self.nominal_s,
            "factor": self.factor,
        }


@dataclass(frozen=True, eq=False)
class Timeline:
    """Everything one boot does, from the power edge to the end of its console output."""

    seed: int | None
    boot_index: int
    baud: int
    stages: tuple[StageSpan, ...]
    markers: dict[str, float]  # marker -> GPIO toggle time
    lines: tuple[Line, ...]
    data: bytes  # the whole console stream
    byte_t: np.ndarray = field(repr=False)  # start-bit time of every byte, float64
    kernel_start_s: float | None  # None only when a fault stopped the boot before it
    offset_s: float
    drift_ppm: float
    end_s: float  # the CPU is done (or stopped): last stop bit of its last line
    halted: str | None = None  # "hang" or "panic" when a fault stopped the boot
    fault_at_s: float | None = None  # where a brownout fault's stage rest begins

    @property
    def byte_s(self) -> float:
        return 10.0 / self.baud  # 8N1

    def bytes_sent_by(self, t_s: float) -> int:
        """How many bytes had their stop bit complete at `t_s`."""
        return int(np.searchsorted(self.byte_t + self.byte_s, t_s, side="right"))


class _Cpu:
    """Runs steps, keeping the time cursor, the console stream and the line records."""

    def __init__(
        self,
        profile: Profile,
        noise: tuple[int, bytes] | None = None,
        skip_marker: str | None = None,
    ) -> None:
        self.byte_s = 10.0 / profile.console.baud
        self.clock = profile.kernel_clock
        self.t = 0.0
        self.data = bytearray()
        self.writes: list[tuple[float, int]] = []
        self.lines: list[Line] = []
        self.open: tuple[int, float, float, float | None] | None = None
        self.kernel_start: float | None = None
        self.markers: dict[str, float] = {}
        self.noise = noise  # (line index, bytes): injected garbage before that line
        self.skip_marker = skip_marker  # a hook that does not fire
        self.fault_at: float | None = None  # where a brownout strikes (the board plans it)

    def _maybe_noise(self) -> None:
        """Line noise goes on the wire before a line starts; it is not part of the line,
        so the truth's line records stay clean (the rig sees noise + line)."""
        if self.noise is None or self.open is not None or len(self.lines) != self.noise[0]:
            return
        raw, self.noise = self.noise[1], None
        self.writes.append((self.t, len(raw)))
        self.data += raw
        self.t += len(raw) * self.byte_s  # one wire: the noise takes its byte times

    def kernel_ns(self, t: float) -> int:
        assert self.kernel_start is not None
        rate = 1.0 + self.clock.drift_ppm * 1e-6
        return math.floor(self.clock.offset_s * 1e9 + (t - self.kernel_start) * 1e9 * rate)

    def write(self, text: str, printk_ts: float | None = None) -> None:
        self._maybe_noise()
        raw = text.encode("ascii")
        t0, base = self.t, len(self.data)
        self.writes.append((t0, len(raw)))
        self.data += raw
        pos = 0
        while pos < len(raw):
            if self.open is None:
                self.open = (base + pos, t0 + pos * self.byte_s, t0, printk_ts)
            nl = raw.find(b"\n", pos)
            if nl < 0:
                break
            off, t_s, event_s, ts = self.open
            body = bytes(self.data[off : base + nl]).rstrip(b"\r")
            self.lines.append(Line(body.decode("ascii"), t_s, event_s, ts, off))
            self.open = None
            pos = nl + 1
        self.t = t0 + len(raw) * self.byte_s  # synchronous console

    def plain(self, text: str, newline: bool = True) -> None:
        self.write(text + ("\r\n" if newline else ""))

    def printk(self, text: str, newline: bool = True) -> None:
        end = "\r\n" if newline else ""
        if self.open is not None:  # continuation of an unterminated printk: no prefix
            self.write(text + end)
            return
        self._maybe_noise()  # before the timestamp is taken, as on a real wire
        us = self.kernel_ns(self.t) // 1000  # printk prints whole microseconds
        self.write(f"[{us // 1_000_000:5d}.{us % 1_000_000:06d}] {text}{end}", us / 1e6)

    def initcall(self, ic: Initcall, step: Initcalls, factor: float) -> None:
        sym = f"{ic.fn}+0x0/{ic.size:#x}"
        if step.debug:
            self.printk(f"calling  {sym} @ {step.pid}")
        took = ic.us * 1e-6 * factor
        self.t += took
        if step.debug:
            # 2.6.31 reports ktime ns >> 10 as "usecs" (2.3 % low); so do we.
            ns = math.floor(took * 1e9 * (1.0 + self.clock.drift_ppm * 1e-6))
            self.printk(f"initcall {sym} returned {ic.ret} after {ns >> 10} usecs")

    def run(self, step: object, factor: float, rest_s: float) -> None:
        match step:
            case Text(texts=texts, printk=printk, newline=newline, each_s=each_s):
                for text in texts:
                    (self.printk if printk else self.plain)(text, newline)
                    self.t += each_s * factor
            case Wait(seconds=seconds, scaled=scaled):
                self.t += seconds * (factor if scaled else 1.0)
            case Rest():
                self.t += rest_s
            case KernelStart():
                self.kernel_start = self.t
            case Marker(name=name) if name == self.skip_marker:
                pass  # the hook did not fire: no GPIO toggle, no tag, no time
            case Marker(name=name, tag=tag, hook_s=hook_s):
                self.markers[name] = self.t  # the GPIO toggles first, the tag follows
                self.t += hook_s
                if tag == "plain":
                    self.plain(TAG.format(name))
                elif tag == "printk":
                    self.printk(TAG.format(name))
            case Initcalls(calls=calls):
                for ic in calls:
                    self.initcall(ic, step, factor)
            case Countdown(seconds=n, prompt=prompt):
                # U-Boot abortboot(): "%2d " then "\b\b\b%2d " every second, then '\n'.
                self.plain(f"{prompt}{n:2d} ", newline=False)
                for left in range(n - 1, -1, -1):
                    self.t += 1.0  # a timer loop: no run-to-run variance
                    self.plain(f"\b\b\b{left:2d} ", newline=False)
                self.plain("")
            case _:
                raise TypeError(f"unknown step {step!r}")

    def stage(
        self, stage: Stage, factor: float, rest_s: float, fault: Fault | None = None
    ) -> float:
        """Run a stage; returns its end. It starts where the previous one ended, so the
        tail of the previous boundary step (a marker's tag line) counts here."""
        halts = fault is not None and fault.kind in ("hang", "panic")
        strikes = fault is not None and fault.kind == "brownout" and fault.stage == stage.name
        for step in stage.steps[:-1]:
            if halts and fault is not None and fault.stage == stage.name and isinstance(step, Rest):
                if fault.kind == "panic":
                    if self.kernel_start is None:
                        raise ValueError(f"fault {fault}: the kernel has not started there")
                    self.printk(PANICS[stage.name])
                raise _Halt
            if strikes and isinstance(step, Rest) and self.fault_at is None:
                self.fault_at = self.t
            self.run(step, factor, rest_s)
        end = self.t  # a stage ends where its boundary step (marker or app line) begins
        self.run(stage.steps[-1], factor, rest_s)
        return end


def load(path: Path) -> Profile:
    """Load and fully validate a board profile, including that every stage's rest >= 0."""
    path = Path(path)
    profile = parse(path, load_toml(path))
    rests(profile)
    return profile


def rests(profile: Profile) -> dict[str, float]:
    """Nominal rest per stage so that each stage lasts its `duration_s`; errors if < 0."""
    cpu = _Cpu(profile)
    out: dict[str, float] = {}
    start = 0.0
    for i, stage in enumerate(profile.as_run(written=True)):
        end = cpu.stage(stage, 1.0, 0.0)
        rest = stage.duration_s - (end - start)
        if rest < 0:
            raise ConfigError(
                f"{profile.path}: key 'stages[{i}].duration_s': stage '{stage.name}' takes "
                f"{end - start:.6f} s without its rest step (console time included): expected "
                f"duration_s >= {end - start:.6f} so that rest >= 0, found {stage.duration_s}"
            )
        out[stage.name] = rest
        start = end
    return out


def factors(profile: Profile, seed: int | None, boot: int, nominal: bool) -> list[float]:
    """Per-stage variance factors of boot `boot`, drawn from N(1, sigma), seeded."""
    if nominal:
        return [1.0] * len(profile.stages)
    entropy = [seed, boot, 1] if seed is not None else None
    rng = np.random.default_rng(entropy)
    out = []
    for stage in profile.stages:
        z = float(rng.standard_normal())  # drawn for every stage: streams stay aligned
        lo = max(0.2, 1.0 - _SIGMA_CLIP * stage.sigma)
        out.append(min(max(1.0 + stage.sigma * z, lo), 1.0 + _SIGMA_CLIP * stage.sigma))
    return out


def plan(
    profile: Profile,
    seed: int | None = 0,
    boot: int = 0,
    nominal: bool = False,
    fault: Fault | None = None,
) -> Timeline:
    """The boot `boot` of a simulator started with `--seed seed` (reproducible)."""
    budget = rests(profile)
    fs = factors(profile, seed, boot, nominal)
    noise = None
    if fault is not None and fault.kind == "garbage":
        noise = (int(fault.at or 0), garbage_bytes(seed, boot))
    skip = fault.stage if fault is not None and fault.kind == "missing-marker" else None
    cpu = _Cpu(profile, noise, skip)
    spans = []
    start = 0.0
    halted = None
    try:  # the budget is the profile's as written; knobs and instrumentation act on it
        for stage, f in zip(profile.as_run(), fs, strict=True):
            end = cpu.stage(stage, f, budget[stage.name] * f, fault)
            spans.append(StageSpan(stage.name, start, end, stage.duration_s, f))
            start = end
    except _Halt:
        assert fault is not None
        halted = fault.kind
    byte_t = [t0 + np.arange(n) * cpu.byte_s for t0, n in cpu.writes if n]
    return Timeline(
        seed=seed,
        boot_index=boot,
        baud=profile.console.baud,
        stages=tuple(spans),
        markers=dict(cpu.markers),
        lines=tuple(cpu.lines),
        data=bytes(cpu.data),
        byte_t=np.concatenate(byte_t) if byte_t else np.zeros(0),
        kernel_start_s=cpu.kernel_start,
        offset_s=profile.kernel_clock.offset_s,
        drift_ppm=profile.kernel_clock.drift_ppm,
        end_s=cpu.t,
        halted=halted,
        fault_at_s=cpu.fault_at,
    )
