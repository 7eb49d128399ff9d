"""report.json `analysis.landmarks`: which landmark calibration each boundary without a
hook took (docs/artifacts.md). Calibrations are per kernel version and architecture; a
boot whose kernel has none takes the nearest, its uncertainty widened by `widened_s`."""

from __future__ import annotations

from dataclasses import dataclass, field

from rig.model.codec import JSONObject, rest


@dataclass
class LandmarkUse:
    """One landmark standing in for a marker, and the calibration it took."""

    marker: str
    landmark: str
    calibration: str  # "linux-6.1-arm64": the kernel version and architecture measured
    target: str  # where that calibration was measured
    boots: int
    widened_s: float  # added to its uncertainty; 0 when it is the boot's kernel's own
    extra: JSONObject = rest()


@dataclass
class LandmarkCalibrations:
    """The boot's kernel as its console names it (null: it does not, e.g. `quiet`) and the
    calibration of each landmark used."""

    kernel_version: str | None  # major.minor, from the `Linux version` banner
    kernel_arch: str | None  # arm64, armv7, ... (kernelid.py says from what)
    used: list[LandmarkUse] = field(default_factory=list)
    extra: JSONObject = rest()
