"""A real logic analyzer through sigrok-cli (docs/instruments.md, "The sigrok
analyzer"): probed with `--show`, captured with `-O binary --continuous` (`.sr` cannot
keep up at MHz rates), and power goes on only once the device really streams."""

from __future__ import annotations

import json
import math
import re
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rig.config.tomlcheck import Table
from rig.errors import ConfigError, InstrumentError
from rig.instruments.children import die_with_parent
from rig.instruments.protocols import AnalyzerProtocol, CaptureResult, RawLayout
from rig.instruments.registry import ANALYZER, BenchContext
from rig.instruments.sigrok_probe import probe
from rig.steps import as_step


@dataclass(frozen=True)
class SigrokSettings:
    device: str  # sigrok-cli -d, e.g. "fx2lafw" or "demo:logic_channels=16"
    options: dict[str, str] = field(default_factory=dict)  # --config KEY=VALUE
    trigger: str = ""  # -t, e.g. "D0=r": samples flow from the power edge on
    start_timeout_s: float = 10.0  # how long the device may take to stream


@ANALYZER.register("sigrok")
class SigrokAnalyzer(AnalyzerProtocol):
    @classmethod
    def parse(cls, t: Table, base: Path) -> SigrokSettings:
        device = t.str("device")
        if not device.strip():
            t.error("device", "a sigrok-cli device, e.g. 'fx2lafw'", device)
        options: dict[str, str] = {}
        o = t.table("options")
        for key in list(o.data):
            value = o.raw(key)
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                o.error(key, "a string or a number (sigrok-cli --config KEY=VALUE)", value)
            if isinstance(value, float) and not math.isfinite(value):
                o.error(key, "a finite number", value)
            options[key] = str(value)
        o.done()
        return SigrokSettings(
            device,
            options,
            t.str("trigger", ""),
            t.seconds("start_timeout_s", 10.0, min=0.001),
        )

    @classmethod
    def build(cls, s: SigrokSettings, bench: BenchContext) -> SigrokAnalyzer:
        shared = bench.shared
        return cls(
            s.device,
            shared.samplerate,
            shared.channels,
            options=s.options,
            trigger=s.trigger,
            start_timeout_s=s.start_timeout_s,
            config=shared.config,
        )

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
        config: Path | None = None,
    ) -> None:
        if not device:
            raise InstrumentError("sigrok analyzer: no device (analyzer.device, e.g. 'fx2lafw')")
        self.device = device
        self.samplerate = samplerate
        self.options = dict(options or {})
        self.trigger = trigger
        self.start_timeout_s = start_timeout_s
        self.sigrok_cli = sigrok_cli
        self.config = config
        self.info = probe(device, sigrok_cli)
        if why := self.info.rate_problem(samplerate):
            raise self._config_error("analyzer.samplerate", f"{samplerate}: {why}")
        self._check_options()
        logic = self.info.logic_channels
        missing = {k: v for k, v in channels.items() if v not in logic}
        if missing:
            name, dev = next(iter(missing.items()))
            hint = ""
            if "logic_channels" in self.info.scan_options:
                wanted = _count(channels.values())
                hint = (
                    f"; {self.info.driver} takes its channel count in the device string: "
                    f"device = {_with_scan_option(device, 'logic_channels', wanted)}"
                )
            raise self._config_error(
                f"analyzer.channels.{name}",
                f"{dev!r}: {self.info.driver} has no such logic channel "
                f"(it has {', '.join(logic)}){hint}",
            )
        names = tuple(channels)
        bits = tuple(logic.index(channels[n]) for n in names)
        self.layout = RawLayout(names, bits, self.info.unitsize, repack=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self._raw: Path | None = None
        self._armed_ns = 0

    def _config_error(self, key: str, what: str) -> ConfigError:
        """What the device refuses is the config's mistake (exit 2, naming file and key)."""
        where = f"{self.config}: key '{key}'" if self.config else f"sigrok analyzer: {key}"
        return ConfigError(f"{where} = {what}")

    def _check_options(self) -> None:
        """A scan option given as a device option: sigrok-cli would refuse it at the
        first capture ("not applicable"), after the rig had started switching."""
        for key, value in self.options.items():
            if key in self.info.scan_options and key not in self.info.options:
                raise self._config_error(
                    f"analyzer.options.{key}",
                    f"{value}: {key} is a scan option of {self.info.driver}, not a device "
                    "option: put scan options in the device string: "
                    f"device = {_with_scan_option(self.device, key, value)}",
                )

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

    @as_step("analyzer arm")
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
        # Wait for the first samples before power-on: a device still loading firmware
        # would miss the power edge.
        deadline = time.monotonic() + self.start_timeout_s
        while not (raw.exists() and raw.stat().st_size >= self.info.unitsize):
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                self._proc = None
                raise InstrumentError(
                    f"sigrok analyzer: sigrok-cli exited at start: {err.strip()}"
                    + self._option_hint(err)
                )
            if time.monotonic() > deadline:
                self.close()
                raise InstrumentError(
                    f"sigrok analyzer: {self.device} did not start streaming within "
                    f"{self.start_timeout_s:g} s (analyzer.start_timeout_s); power stays off"
                )
            time.sleep(0.005)
        return self._armed_ns

    def _option_hint(self, err: str) -> str:
        """Which `[analyzer.options]` key sigrok-cli refused, and where it may belong."""
        scan = self.info.scan_options
        for key, value in self.options.items():
            if f"device option '{key}'" in err:
                example = _with_scan_option(
                    self.device, *((key, value) if key in scan else ("KEY", "VALUE"))
                )
                return (
                    f" (analyzer.options.{key} is passed as sigrok-cli --config {key}={value}; "
                    f"`sigrok-cli -d {self.device} --show` lists the device's options; scan "
                    f"options ({', '.join(scan) or 'none here'}) go in the device string: "
                    f"device = {example})"
                )
        return ""

    @as_step("analyzer stop")
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


def _with_scan_option(device: str, key: str, value: object) -> str:
    """`device` with `key=value` among its scan options (replacing one it has), as TOML:
    "demo:logic_channels=16"."""
    driver, *scan = device.split(":")
    kept = [o for o in scan if o.split("=", 1)[0] != key]
    return json.dumps(":".join([driver, *kept, f"{key}={value}"]))


def _count(names: Iterable[str]) -> int:
    """Logic channels enough for every `D<n>` named (16 when the names say nothing)."""
    numbers = [int(m.group(1)) for n in names if (m := re.fullmatch(r"D(\d+)", n))]
    return max(numbers, default=15) + 1
