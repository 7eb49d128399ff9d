"""The simulated board: relays, the supply rail and its boots (a model, no I/O).

Everything is scheduled on the host CLOCK_MONOTONIC clock the moment a relay frame
arrives: the bounce burst, the boot's timeline, the console's USB transfers. A power
cut re-plans the console so that bytes not on the wire by then are lost.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rig.sim.faults import FaultRates, draw
from rig.sim.power import bounce_s
from rig.sim.profile import Profile
from rig.sim.timeline import Fault, Timeline, plan
from rig.sim.usbserial import Transfer, transfers

#: Seed stream ids, so each random quantity has its own reproducible stream.
_BOUNCE, _USB = 2, 3


@dataclass
class Boot:
    index: int
    relay_on_ns: int  # the relay frame was complete
    contact_ns: int  # first contact (after the actuation delay)
    bounce_ns: np.ndarray  # rail transitions from first contact: rise, fall, ..., rise
    power_edge_ns: int  # last rise of the burst: t = 0 of the timeline
    timeline: Timeline
    usb_anchor_ns: float  # the adapter's timer state when this boot began
    off_ns: int | None = None  # the relay-off frame was complete
    drop_ns: int | None = None  # the rail fell
    fault: Fault | None = None  # injected into this boot (fixed, or drawn from the rates)

    def arrivals_ns(self) -> np.ndarray:
        """Host ns at which each console byte's stop bit ends (enters the adapter)."""
        tl = self.timeline
        return self.power_edge_ns + (tl.byte_t + tl.byte_s) * 1e9

    def cut_s(self) -> float:
        """Board time at which this boot ended (the rail fell), inf if still powered."""
        if self.drop_ns is None:
            return float("inf")
        return (self.drop_ns - self.power_edge_ns) / 1e9


class Board:
    def __init__(
        self,
        profile: Profile,
        seed: int,
        nominal: bool,
        submit: Callable[[int, list[Transfer]], None],
        start_ns: int | None = None,
        fault: Fault | None = None,
        rates: FaultRates | None = None,
        hangup: Callable[[int, int], None] | None = None,
    ) -> None:
        self.profile = profile
        self.fault = fault
        self.rates = rates
        self._hangup = hangup  # (boot, host ns): the console adapter vanishes then
        # Garbage precedes one of the profile's console lines (the same in every boot).
        self._lines = len(plan(profile, seed, 0, True).lines) if rates and rates.garbage else 0
        self.seed = seed
        self.nominal = nominal
        self._submit = submit
        self.lock = threading.Lock()
        self.relays = {ch: False for ch in range(1, profile.power.relay_channels + 1)}
        self.boots: list[Boot] = []
        self.boot_count = 0
        c = profile.console
        self._latency_ns = c.usb_latency_ms * 1e6
        # The adapter's latency timer runs from before we exist: a seeded random phase.
        phase = np.random.default_rng([seed, 0, _USB]).uniform(0.0, self._latency_ns)
        self._usb_anchor = float(start_ns if start_ns is not None else time.monotonic_ns()) - phase

    def powered(self, now_ns: int) -> bool:
        with self.lock:
            if not self.boots:
                return False
            b = self.boots[-1]
            return b.power_edge_ns <= now_ns and (b.drop_ns is None or now_ns < b.drop_ns)

    def frame(self, channel: int, state: int, t_ns: int) -> None:
        """A valid relay frame, complete at host time `t_ns`."""
        with self.lock:
            was, self.relays[channel] = self.relays[channel], bool(state)
            if channel != self.profile.power.relay_channel or was == bool(state):
                return
            if state:
                self._power_on(t_ns)
            else:
                self._power_off(t_ns)

    def _plan_console(self, boot: Boot, upto: int) -> None:
        fault = boot.fault
        if fault is not None and fault.kind == "console-lost":
            upto = 0  # the board still drives its TX line; the host just gets nothing
        arrivals = boot.arrivals_ns()[:upto]
        c = self.profile.console
        plan_, self._usb_anchor = transfers(
            arrivals,
            boot.timeline.data[:upto],
            self._latency_ns,
            c.usb_buffer_bytes,
            boot.usb_anchor_ns,
        )
        hangup = self._hangup_ns(boot)
        if hangup is not None:  # the adapter is gone from then on: nothing more arrives
            plan_ = [t for t in plan_ if t[0] < hangup]
        self._submit(boot.index, plan_)
        if hangup is not None and self._hangup is not None:
            self._hangup(boot.index, hangup)

    def _hangup_ns(self, boot: Boot) -> int | None:
        """When a console-closed fault closes the console pty (None: no fault, or the
        rail fell first)."""
        f = boot.fault
        if f is None or f.kind != "console-closed":
            return None
        t = boot.power_edge_ns + round((f.at or 0.0) * boot.timeline.end_s * 1e9)
        return None if boot.drop_ns is not None and boot.drop_ns <= t else t

    def _power_on(self, t_ns: int) -> None:
        k = self.boot_count
        self.boot_count += 1
        delay_ns = round(self.profile.power.relay_delay_ms * 1e6)
        rng = np.random.default_rng([self.seed, k, _BOUNCE])
        bounce = np.round(bounce_s(rng, self.profile.power) * 1e9).astype(np.int64)
        contact = t_ns + delay_ns
        fault = self.fault
        if fault is None and self.rates is not None:
            drawn = draw(self.rates, self.seed, k, self._lines)
            fault = Fault.parse(drawn) if drawn else None
        boot = Boot(
            index=k,
            relay_on_ns=t_ns,
            contact_ns=contact,
            bounce_ns=bounce,
            power_edge_ns=contact + int(bounce[-1]),
            timeline=plan(self.profile, self.seed, k, self.nominal, fault),
            usb_anchor_ns=self._usb_anchor,
            fault=fault,
        )
        self.boots.append(boot)
        self._plan_console(boot, len(boot.timeline.data))

    def _power_off(self, t_ns: int) -> None:
        if not self.boots or self.boots[-1].off_ns is not None:
            return
        boot = self.boots[-1]
        boot.off_ns = t_ns
        boot.drop_ns = t_ns + round(self.profile.power.relay_delay_ms * 1e6)
        # Bytes whose stop bit was not out when the rail fell never reach the adapter.
        self._plan_console(boot, boot.timeline.bytes_sent_by(boot.cut_s()))

    def snapshot(self, since_ns: int) -> list[Boot]:
        """Boots still relevant at `since_ns` (the others are forgotten)."""
        with self.lock:
            self.boots = [b for b in self.boots if b.drop_ns is None or b.drop_ns >= since_ns]
            return [dataclasses.replace(b) for b in self.boots]  # later power cuts stay out
