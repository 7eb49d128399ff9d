"""A real logic analyzer through sigrok-cli: any device libsigrok drives.

It captures with `-O binary` (sigrok-cli writing `.sr` directly rewrites the zip per
packet and cannot keep up at MHz rates) and `--continuous`, which stops when stdin gets a
newline; the rig converts the raw file to `.sr` afterwards. The device is asked what it
is first (`--show`): its channel names, so the config can use them as they are; how many
bytes a raw sample takes (two with more than 8 logic channels); the rates it offers.
Power goes on only once the device really streams.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from rig.instruments.children import die_with_parent
from rig.instruments.protocols import AnalyzerProtocol, CaptureResult, InstrumentError, RawLayout
from rig.instruments.sigrok_probe import SigrokDevice, probe


class SigrokAnalyzer(AnalyzerProtocol):
    def __init__(
        self,
        device: str,
        samplerate: int,
        channels: Mapping[str, str],
        *,
        options: Mapping[str, str] | None = None,
        trigger: str = "",
        start_timeout_s: float = 10.0,
        sigrok_cli: str = "sigrok-cli",
        info: SigrokDevice | None = None,
    ) -> None:
        if not device:
            raise InstrumentError("sigrok analyzer: no device (analyzer.device, e.g. 'fx2lafw')")
        self.device = device
        self.samplerate = samplerate
        self.options = dict(options or {})
        self.trigger = trigger
        self.start_timeout_s = start_timeout_s
        self.sigrok_cli = sigrok_cli
        self.info = info or probe(device, sigrok_cli)
        self.info.check_rate(samplerate)
        logic = self.info.logic_channels
        missing = {k: v for k, v in channels.items() if v not in logic}
        if missing:
            name, dev = next(iter(missing.items()))
            raise InstrumentError(
                f"sigrok analyzer: analyzer.channels.{name} = {dev!r}: {self.info.driver} has no "
                f"such logic channel (it has {', '.join(logic)})"
            )
        names = tuple(channels)
        bits = tuple(logic.index(channels[n]) for n in names)
        self.layout = RawLayout(names, bits, self.info.unitsize, repack=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self._raw: Path | None = None
        self._armed_ns = 0

    def describe(self) -> dict[str, object]:
        """What run.json records of the device."""
        i = self.info
        return {"driver": i.driver, "description": i.description, "device": self.device,
                "logic_channels": list(i.logic_channels), "unitsize": i.unitsize}  # fmt: skip

    def command(self, raw: Path) -> list[str]:
        cmd = [self.sigrok_cli, "-d", self.device, "--config", f"samplerate={self.samplerate}"]
        for key, value in self.options.items():
            cmd += ["--config", f"{key}={value}"]
        # Every logic channel on: bit i of a raw sample is then device channel i.
        cmd += ["--continuous", "-C", ",".join(self.info.logic_channels)]
        if self.trigger:
            cmd += ["-t", self.trigger]
        return [*cmd, "-O", "binary", "-o", str(raw)]

    def arm(self, raw: Path) -> int:
        self._raw = raw
        try:
            self._proc = subprocess.Popen(
                self.command(raw),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                preexec_fn=die_with_parent,  # even a SIGKILLed rig leaves no sigrok-cli
            )
        except OSError as e:
            raise InstrumentError(f"sigrok analyzer: cannot run {self.sigrok_cli}: {e}") from None
        self._armed_ns = time.monotonic_ns()
        if self.trigger:
            return self._armed_ns  # samples flow only once the trigger fires, at power-on
        # The reference clock is the device's sample clock: waiting for the first samples
        # before power-on costs disk space only, and a device still loading firmware
        # would otherwise miss the power edge.
        deadline = time.monotonic() + self.start_timeout_s
        while not (raw.exists() and raw.stat().st_size >= self.info.unitsize):
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                self._proc = None
                raise InstrumentError(f"sigrok analyzer: sigrok-cli exited at start: {err.strip()}")
            if time.monotonic() > deadline:
                self.close()
                raise InstrumentError(
                    f"sigrok analyzer: {self.device} did not start streaming within "
                    f"{self.start_timeout_s:g} s (analyzer.start_timeout_s); power stays off"
                )
            time.sleep(0.005)
        return self._armed_ns

    def stop(self) -> CaptureResult:
        proc, raw = self._proc, self._raw
        if proc is None or raw is None:
            raise InstrumentError("sigrok analyzer: stop without a running capture")
        try:
            _, err = proc.communicate(b"\n", timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise InstrumentError("sigrok analyzer: sigrok-cli did not stop within 30 s") from None
        finally:
            self._proc = None
        stopped = time.monotonic_ns()
        if proc.returncode != 0:
            msg = err.decode(errors="replace").strip()
            raise InstrumentError(f"sigrok analyzer: sigrok-cli failed ({proc.returncode}): {msg}")
        size = raw.stat().st_size if raw.exists() else 0
        return CaptureResult(
            raw, size // self.info.unitsize, self.samplerate, self._armed_ns, stopped
        )

    def close(self) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None
