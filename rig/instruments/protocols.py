"""What the cycle needs from each instrument (labgrid-style protocols); drivers mark
`on`/`off` and `arm`/`stop` as steps (`@as_step("power on")`, rig.steps)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.steps import as_step


class PowerProtocol(ABC):
    """Switches the target's supply."""

    @abstractmethod
    def on(self) -> int:
        """Power on; returns host CLOCK_MONOTONIC ns taken right before the command."""

    @abstractmethod
    def off(self) -> int:
        """Power off; returns host CLOCK_MONOTONIC ns taken right before the command."""

    def artifacts(self, folder: Path) -> dict[str, Any]:
        """Write the supply's evidence of the boot into `folder`; returns run.json's
        `instruments` entries for it."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the port; the supply keeps its state."""


class SwitchedPower(PowerProtocol):
    """A supply that one call switches either way (a relay, a program, a labgrid place)."""

    @abstractmethod
    def switch(self, on: bool) -> int:
        """Switch; returns host CLOCK_MONOTONIC ns taken right before the command."""

    @as_step("power on")
    def on(self) -> int:
        return self.switch(True)

    @as_step("power off")
    def off(self) -> int:
        return self.switch(False)


@dataclass(frozen=True)
class CaptureResult:
    """What an analyzer recorded: raw 1-byte-per-sample data, device channel order."""

    raw: Path
    samples: int
    samplerate: int
    armed_ns: int
    stopped_ns: int
    #: What the samples are timed by: the reference clock every report states.
    clock: str = "analyzer sample clock"
    #: Time the device spent producing the samples after the stop (the simulated one).
    device_stop_s: float = 0.0


@dataclass(frozen=True)
class RawLayout:
    """An analyzer's raw file: `unitsize` bytes per sample, `bits[i]` carries `names[i]`;
    without `repack` the bytes are kept as they are (one byte, `names` bit by bit)."""

    names: tuple[str, ...]
    bits: tuple[int, ...]
    unitsize: int = 1
    repack: bool = False


def byte_layout(wiring: dict[str, int]) -> RawLayout:
    """One byte per sample, kept as is: bit i named by the wiring, `D<i>` when unwired."""
    by_bit = {i: n for n, i in wiring.items()}
    return RawLayout(tuple(by_bit.get(i, f"D{i}") for i in range(8)), tuple(range(8)))


class AnalyzerProtocol(ABC):
    """A logic analyzer that records from `arm()` until `stop()`."""

    samplerate: int
    layout: RawLayout

    @abstractmethod
    def arm(self, raw: Path) -> int:
        """Start sampling into `raw` (sigrok `-O binary` layout); returns host monotonic
        ns at (or just before) sample 0."""

    @abstractmethod
    def stop(self) -> CaptureResult:
        """Stop sampling; the samples are complete in the file given to `arm`."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the device, stopping a capture still running."""
