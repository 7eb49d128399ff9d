"""Which kernel a boot ran, from what it printed: its version (major.minor, from the
`Linux version` banner) and architecture (from the banner's compiler or Debian flavour,
arm64's `Booting Linux on physical CPU 0x0000000000 [...]`, or 32-bit ARM's `CPU: ...
(ARMv7), cr=...`). The landmark calibrations are keyed on both (landmark_calibration.py).
A `quiet` console prints none of these: then both are None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean

_BANNER = re.compile(r"^Linux version (\d+)\.(\d+)(\S*)(.*)$")
# 32-bit ARM's setup_processor(): "CPU: ARMv7 Processor [412fc0f1] revision 1 (ARMv7), cr=".
_ARM32_CPU = re.compile(r"^CPU: .* \(ARMv(\d+)[A-Za-z-]*\), cr=[0-9a-f]+")
# arm64's setup_arch() prints the MPIDR with 10 hex digits and the MIDR in brackets; 32-bit
# ARM prints "Booting Linux on physical CPU 0x0" (no MIDR).
_ARM64_CPU = re.compile(r"^Booting Linux on physical CPU 0x[0-9a-f]{10} \[0x[0-9a-f]{8}\]")
# What the banner's rest says: the compiler's target triplet, or Debian's image flavour.
_BANNER_ARCH = (
    (re.compile(r"\baarch64-|-arm64\b"), "arm64"),
    # Debian's armhf (and its armmp kernels) are ARMv7 and up.
    (re.compile(r"\barm-linux-gnueabihf-|-armmp\b"), "armv7"),
    (re.compile(r"\bx86_64-|-amd64\b"), "x86_64"),
)


@dataclass(frozen=True)
class KernelId:
    version: str | None  # "6.12": major.minor
    arch: str | None  # "arm64", "armv7", ...
    line: int | None = None  # the banner's console line

    @property
    def key(self) -> str | None:
        return f"linux-{self.version}-{self.arch}" if self.version and self.arch else None

    def __str__(self) -> str:
        return f"Linux {self.version or '?'} {self.arch or '?'}"


def identify(lines: Sequence[Line]) -> KernelId:
    """The first kernel banner's version and the architecture its boot shows."""
    version: str | None = None
    line: int | None = None
    from_banner: str | None = None
    from_cpu: str | None = None
    for ln in lines:
        if ln.tag:
            continue
        text = clean(ln)
        if version is None and (m := _BANNER.match(text)):
            version, line = f"{m[1]}.{m[2]}", ln.index
            rest = m[3] + m[4]
            from_banner = next((a for rx, a in _BANNER_ARCH if rx.search(rest)), None)
        elif from_cpu is None and (m := _ARM32_CPU.match(text)):
            from_cpu = f"armv{m[1]}"
        elif from_cpu is None and _ARM64_CPU.match(text):
            from_cpu = "arm64"
        if version is not None and from_cpu is not None:
            break
    # The CPU line is the hardware's own word; the banner's triplet names the build.
    return KernelId(version, from_cpu or from_banner, line)
