"""The landmark offsets, one calibration per kernel version and architecture:
`landmarks-linux-<major.minor>-<arch>.json` beside this file, each written by
`bench/landmark_offsets.py` from boots of one kernel (docs/analysis.md, "Boundaries without
hooks"). A boot takes, per landmark, its own kernel's calibration; when its kernel has
none (or its console does not name it), the nearest one, with the uncertainty widened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rig.analysis.kernelid import KernelId

FOLDER = Path(__file__).parent
GLOB = "landmarks-linux-*.json"
CALIBRATION_SCHEMA = "bootrig.landmarks/2"
#: The kernel the rig's landmarks were first calibrated on (the hooked QEMU target's): a
#: boot whose console names no kernel (`quiet`) takes this one, widened.
REFERENCE = "linux-6.1-arm64"
CALIBRATION = FOLDER / f"landmarks-{REFERENCE}.json"


@dataclass(frozen=True)
class Offset:
    """A landmark's calibrated time from the hook (positive: the message comes after)."""

    key: str
    offset_s: float
    uncertainty_s: float
    bytes_between: int  # console bytes between hook and message (tag excluded), signed
    n: int
    target: str | None = None  # where it was calibrated, when not the file's target


@dataclass(frozen=True)
class Calibration:
    target: str
    offsets: dict[str, Offset]
    version: str = ""  # the kernel's major.minor
    arch: str = ""

    @property
    def key(self) -> str:
        return f"linux-{self.version}-{self.arch}"

    def target_of(self, key: str) -> str:
        off = self.offsets.get(key)
        return off.target if off is not None and off.target else self.target


@dataclass(frozen=True)
class Choice:
    """The calibration a landmark takes on a boot, and what its uncertainty gains."""

    calibration: Calibration
    offset: Offset
    widened_s: float  # 0: the boot's kernel's own calibration


def calibration_name(version: str, arch: str) -> str:
    return f"landmarks-linux-{version}-{arch}.json"


def parse_calibration(data: dict[str, Any], where: str) -> Calibration:
    if data.get("schema") != CALIBRATION_SCHEMA:
        raise ValueError(f"{where}: schema {data.get('schema')!r}, not {CALIBRATION_SCHEMA}")
    offsets = {
        key: Offset(
            key,
            float(v["offset_s"]),
            float(v["uncertainty_s"]),
            int(v["bytes_between"]),
            int(v["n"]),
            str(v["target"]["name"]) if "target" in v else None,
        )
        for key, v in data["landmarks"].items()
    }
    kernel = data["kernel"]
    return Calibration(
        str(data["target"]["name"]), offsets, str(kernel["version"]), str(kernel["arch"])
    )


@cache
def load_calibration(path: Path = CALIBRATION) -> Calibration:
    cal = parse_calibration(json.loads(path.read_text(encoding="utf-8")), str(path))
    if path.name != calibration_name(cal.version, cal.arch):
        raise ValueError(f"{path}: holds {cal.key}'s calibration, so its name must be that")
    return cal


@cache
def load_calibrations(folder: Path = FOLDER) -> tuple[Calibration, ...]:
    """Every stored calibration, by name."""
    return tuple(load_calibration(p) for p in sorted(folder.glob(GLOB)))


def _release(v: str | None) -> int | None:
    """A major.minor's place in the release order: each major has had about 20 minors
    (3.0-3.19, 4.0-4.20, 5.0-5.19), so 5.19 is next to 6.0 and 6.1 nearer 5.15 than 6.12."""
    try:
        major, minor = (v or "").split(".")
        return int(major) * 20 + int(minor)
    except ValueError:
        return None


def _distance(cal: Calibration, kernel: KernelId) -> tuple[int, int, int]:
    """How far a calibration's kernel is from the boot's: another architecture first, then
    the releases between them (an unnamed version: the reference calibration's)."""
    want, have = _release(kernel.version), _release(cal.version)
    arch = 0 if kernel.arch == cal.arch else 1
    if want is None or have is None:
        return arch, 0 if cal.key == REFERENCE else 1, 0
    return arch, abs(want - have), -have  # a tie: the newer


#: How many times its own uncertainty a calibration of another architecture (or used for
#: a boot whose architecture is not known) is widened by: on the one such pair measured,
#: 6.1 armv7 against 6.1 arm64, armv7's offsets lay up to 2.8 times arm64's uncertainty
#: from its centre (`Freeing unused kernel memory`; the root mount 2.5 times), past the
#: same-architecture rule's 2 times; 3 times covers them (docs/analysis.md).
OTHER_ARCH_FACTOR = 2.0


def widening(
    key: str, used: Calibration, cals: tuple[Calibration, ...], kernel: KernelId | None = None
) -> float:
    """What a landmark's uncertainty gains on a kernel without a calibration of its own:
    the calibration's own uncertainty again (twice again when it is of another
    architecture than the boot's, or the boot's is not known), or the largest shift
    between the centres of the calibrated kernels if that is more. Two kernels cannot
    bound how far a third one moves; on the kernels calibrated, one's range reached past
    another's stated bound, and this covers every offset measured on each from the others
    (tests/test_landmark_kernels.py checks it on all stored calibrations)."""
    off = used.offsets[key]
    same_arch = kernel is not None and kernel.arch is not None and kernel.arch == used.arch
    own = off.uncertainty_s * (1.0 if same_arch else OTHER_ARCH_FACTOR)
    shifts = [abs(c.offsets[key].offset_s - off.offset_s) for c in cals if key in c.offsets]
    return max([own, *shifts])


def choose(key: str, kernel: KernelId, cals: tuple[Calibration, ...]) -> Choice | None:
    """Landmark `key`'s calibration for a boot of `kernel`: its own, else the nearest
    that has the landmark, widened; None when no calibration has it."""
    have = [c for c in cals if key in c.offsets]
    if not have:
        return None
    own = next((c for c in have if kernel.key is not None and c.key == kernel.key), None)
    if own is not None:
        return Choice(own, own.offsets[key], 0.0)
    near = min(have, key=lambda c: (_distance(c, kernel), c.key))
    return Choice(near, near.offsets[key], widening(key, near, cals, kernel))
