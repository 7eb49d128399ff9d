"""What a sigrok device is, asked of sigrok-cli (`-d DEV --show`): its logic channel
names in device order (the bit order of `-O binary`), its sample rates, trigger types
and scan options (which belong in the device string, not in `[analyzer.options]`)."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from rig.artifacts.srmeta import parse_samplerate
from rig.errors import InstrumentError

_HEAD = re.compile(r"^(\S+) - (.*) with \d+ channels?: (.*)$")
_LOGIC = re.compile(r"^\s+Logic: channels (.*)$")
_RANGE = re.compile(r"^\s+samplerate \((.+?) - (.+?) in steps of (.+?)\)")
_LIST_HEAD = re.compile(r"^\s+samplerate - supported samplerates:")
_LIST_ITEM = re.compile(r"^\s{6,}([0-9.]+ ?[kMG]?Hz)")
_TRIGGERS = re.compile(r"^\s+Supported triggers: (.*)$")
_SCAN_HEAD = re.compile(r"^Scan options:\s*$")
_OPTION = re.compile(r"^\s+([a-z][a-z0-9_]*)\b")


@dataclass(frozen=True)
class SigrokDevice:
    driver: str
    description: str
    logic_channels: tuple[str, ...]  # device order: bit i of a raw sample is channel i
    rate_range: tuple[int, int, int] | None  # (min, max, step) when the device has one
    rates: tuple[int, ...]  # the discrete rates it lists otherwise
    triggers: str
    scan_options: tuple[str, ...] = ()  # `-d DRIVER:KEY=VALUE`, e.g. logic_channels
    options: tuple[str, ...] = ()  # what --show lists as settable (`--config KEY=VALUE`)

    @property
    def unitsize(self) -> int:
        """Bytes per sample of `-O binary` with every logic channel enabled."""
        return max(1, (len(self.logic_channels) + 7) // 8)

    def rate_problem(self, hz: int) -> str | None:
        """Why the device cannot sample at `hz`, or None when it can."""
        if self.rate_range is not None:
            lo, hi, step = self.rate_range
            if not lo <= hz <= hi or (hz - lo) % step:
                return (
                    f"{self.driver} cannot sample at {hz} Hz "
                    f"(it offers {lo} to {hi} Hz in steps of {step} Hz)"
                )
        elif self.rates and hz not in self.rates:
            offered = ", ".join(str(r) for r in self.rates)
            return f"{self.driver} cannot sample at {hz} Hz (it offers {offered} Hz)"
        return None


def _rate(text: str) -> int:
    return parse_samplerate(text.replace("(current)", "").strip())


def parse_show(text: str, device: str) -> SigrokDevice:
    """Parse `sigrok-cli -d DEVICE --show` output."""
    lines = text.splitlines()
    head = next((m for line in lines if (m := _HEAD.match(line))), None)
    if head is None:
        raise InstrumentError(
            f"sigrok analyzer: no device found for '{device}': {text.strip()[:300]}"
        )
    logic: tuple[str, ...] = ()
    rate_range: tuple[int, int, int] | None = None
    rates: list[int] = []
    triggers = ""
    in_list = False
    scan: list[str] = []
    options: list[str] = []
    section = ""  # "scan" before the head line, "config" after it
    for line in lines:
        if _SCAN_HEAD.match(line):
            section = "scan"
            continue
        if line is head.string:
            section = "config"
        elif section == "scan":
            if m := _OPTION.match(line):
                scan.append(m.group(1))
            else:
                section = ""
        elif section == "config" and (m := _OPTION.match(line)):
            options.append(m.group(1))
        if m := _LOGIC.match(line):
            logic = tuple(m.group(1).split())
        elif m := _RANGE.match(line):
            rate_range = (_rate(m.group(1)), _rate(m.group(2)), _rate(m.group(3)))
        elif _LIST_HEAD.match(line):
            in_list = True
            continue
        elif m := _TRIGGERS.match(line):
            triggers = m.group(1).strip()
        if in_list:
            if m := _LIST_ITEM.match(line):
                rates.append(_rate(m.group(1)))
            else:
                in_list = False
    if not logic:
        # No channel groups printed: every channel of the head line that is not analog.
        logic = tuple(c for c in head.group(3).split() if not c.startswith("A"))
    return SigrokDevice(
        head.group(1),
        head.group(2),
        logic,
        rate_range,
        tuple(rates),
        triggers,
        tuple(scan),
        tuple(options),
    )


def probe(device: str, sigrok_cli: str = "sigrok-cli", timeout_s: float = 30.0) -> SigrokDevice:
    try:
        p = subprocess.run(
            [sigrok_cli, "-d", device, "--show"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except OSError as e:
        raise InstrumentError(f"sigrok analyzer: cannot run {sigrok_cli}: {e}") from None
    except subprocess.TimeoutExpired:
        raise InstrumentError(
            f"sigrok analyzer: `{sigrok_cli} -d {device} --show` did not answer in {timeout_s:g} s"
        ) from None
    if p.returncode != 0:
        raise InstrumentError(
            f"sigrok analyzer: '{device}': {(p.stderr or p.stdout).strip()[:500]}"
        )
    return parse_show(p.stdout, device)
