"""The simulated board: relays, the supply rail and its boots (a model, no I/O).

Everything is scheduled on the host CLOCK_MONOTONIC clock the moment a relay frame (or
a supply's OUTP command) arrives: the bounce burst, the boot's timeline, the console's
USB transfers. A power cut re-plans the console so that bytes not on the wire by then
are lost.

The bench supply and the relay are in series: the rail is up while the relay contact
is closed and the supply's output is on. Which of the two switches the board is the
bench's wiring (`power_switch`): "relay" leaves the output on and the relay open,
"supply" the relay closed (bypassed) and the output off.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from simboard.faults import FaultRates, draw
from simboard.power import bounce_s
from simboard.profile import Profile
from simboard.timeline import Fault, Timeline, plan
from simboard.usbserial import Transfer, transfers

#: Seed stream ids, so each random quantity has its own reproducible stream.
_BOUNCE, _USB = 2, 3
#: How long a brown-out holds the rail down before it comes back (a supply's dip, a
#: second rig's power cycle): well past any debounce, so the capture sees both edges.
BROWNOUT_OFF_NS = 50_000_000


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
    switch: str = "relay"  # what switched it on: "relay" or "supply"
    volts: float = 5.0  # the supply's set-point at power-on
    limit_a: float = 3.0  # its current limit
    prev_drop_ns: int | None = None  # the rail fell before this boot (None: never up)

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
        self.output_on = True  # the supply's output (power_switch "relay": left on)
        self.switch = "relay"  # the bench's wiring: which of the two switches the board
        self.volts = profile.supply.volts
        self.limit_a = profile.supply.current_limit_a
        self.boots: list[Boot] = []
        self.boot_count = 0
        self._drop_ns: int | None = None  # the rail last fell (kept after snapshot forgets)
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

    def _rail_closed(self) -> bool:
        return self.relays[self.profile.power.relay_channel] and self.output_on

    def frame(self, channel: int, state: int, t_ns: int) -> None:
        """A valid relay frame, complete at host time `t_ns`."""
        with self.lock:
            was = self._rail_closed()
            self.relays[channel] = bool(state)
            self._switched(was, t_ns, "relay")

    def output(self, on: bool, t_ns: int) -> None:
        """The supply's output switched (OUTP ON/OFF received at host time `t_ns`)."""
        with self.lock:
            was = self._rail_closed()
            self.output_on = on
            self._switched(was, t_ns, "supply")

    def set_point(self, volts: float | None = None, limit_a: float | None = None) -> None:
        """A new set-point; a boot keeps the one it was powered on with (see docs)."""
        with self.lock:
            self.volts = self.volts if volts is None else volts
            self.limit_a = self.limit_a if limit_a is None else limit_a

    def set_switch(self, switch: str, t_ns: int) -> None:
        """Rewire the bench: `switch` ("relay" or "supply") alone switches the board."""
        if switch not in ("relay", "supply"):
            raise ValueError(f"power switch: expected 'relay' or 'supply', found {switch!r}")
        with self.lock:
            self.switch = switch
            was = self._rail_closed()
            self.relays[self.profile.power.relay_channel] = switch == "supply"
            self.output_on = switch == "relay"
            self._switched(was, t_ns, switch)

    def _switched(self, was: bool, t_ns: int, by: str) -> None:
        now = self._rail_closed()
        if now and not was:
            self._power_on(t_ns, by)
        elif was and not now:
            self._power_off(t_ns, by)

    def _delay_ns(self, by: str) -> int:
        ms = self.profile.power.relay_delay_ms if by == "relay" else self.profile.supply.on_delay_ms
        return round(ms * 1e6)

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

    def _power_on(self, t_ns: int, by: str = "relay", back: bool = False) -> None:
        """`back`: the rail returns after a brown-out, with no switch between: no delay,
        no bounce, and no fault of its own (the board just boots again)."""
        k = self.boot_count
        self.boot_count += 1
        delay_ns = 0 if back else self._delay_ns(by)
        rng = np.random.default_rng([self.seed, k, _BOUNCE])
        bounce = np.round(bounce_s(rng, self.profile.power) * 1e9).astype(np.int64)
        if by != "relay" or back:
            bounce = np.zeros(1, dtype=np.int64)  # a supply's output has no contacts
        contact = t_ns + delay_ns
        fault = None if back else self.fault
        if fault is None and self.rates is not None and not back:
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
            switch=by,
            volts=self.volts,
            limit_a=self.limit_a,
            prev_drop_ns=self._drop_ns,
        )
        self.boots.append(boot)
        at = boot.timeline.fault_at_s
        if fault is not None and fault.kind == "brownout" and at is not None:
            # The rail drops on its own (no relay frame) and comes back.
            boot.drop_ns = boot.power_edge_ns + round(at * 1e9)
            self._drop_ns = boot.drop_ns
            self._plan_console(boot, boot.timeline.bytes_sent_by(boot.cut_s()))
            self._power_on(boot.drop_ns + BROWNOUT_OFF_NS, by, back=True)
            return
        self._plan_console(boot, len(boot.timeline.data))

    def _power_off(self, t_ns: int, by: str = "relay") -> None:
        if not self.boots or self.boots[-1].off_ns is not None:
            return
        boot = self.boots[-1]
        boot.off_ns = t_ns
        boot.drop_ns = t_ns + self._delay_ns(by)
        self._drop_ns = boot.drop_ns
        # Bytes whose stop bit was not out when the rail fell never reach the adapter.
        self._plan_console(boot, boot.timeline.bytes_sent_by(boot.cut_s()))

    def latest(self, before_ns: int) -> Boot | None:
        """The last boot whose power edge came before `before_ns` (a copy)."""
        with self.lock:
            for b in reversed(self.boots):
                if b.power_edge_ns <= before_ns:
                    return dataclasses.replace(b)
            return None

    def snapshot(self, since_ns: int) -> list[Boot]:
        """Boots still relevant at `since_ns` (the others are forgotten)."""
        with self.lock:
            self.boots = [b for b in self.boots if b.drop_ns is None or b.drop_ns >= since_ns]
            return [dataclasses.replace(b) for b in self.boots]  # later power cuts stay out
