"""Landmark calibrations per kernel version and architecture: the analysis reads the boot's
kernel from its console, takes that kernel's calibration, or the nearest one widened, and
says in report.json (`analysis.landmarks`) which it took."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.landmark_offsets import summarise
from rig.analysis.kernelid import KernelId, identify
from rig.analysis.landmark_calibration import (
    CALIBRATION_SCHEMA,
    FOLDER,
    GLOB,
    OTHER_ARCH_FACTOR,
    REFERENCE,
    choose,
    load_calibrations,
)
from rig.analysis.lines import Line
from rig.instruments.qemu.reference import reference_edges
from rig.measure.pipeline import analyze_folder
from tests.test_real_boots import DATA
from tests.test_real_hookless import edit_console, stages, without_hooks

FILES = sorted(FOLDER.glob(GLOB))
CALS = load_calibrations()


def _lines(*texts: str) -> list[Line]:
    return [Line(i, i * 80, i, t.encode(), 0.0, None) for i, t in enumerate(texts)]


@pytest.mark.parametrize(
    ("boot", "version", "arch"),
    [
        ("capture-1", "6.1", "arm64"),
        ("stock-console-1", "6.1", "arm64"),
        ("stock-quiet-1", None, None),
    ],
)
def test_the_kernel_is_read_from_the_recorded_consoles(
    boot: str, version: str | None, arch: str | None
) -> None:
    from rig.analysis.lines import split_lines
    from rig.artifacts import rundir

    kid = identify(split_lines(rundir.read_console(DATA / boot)))
    assert (kid.version, kid.arch) == (version, arch)


DEBIAN_612 = "Linux version 6.12.57+deb12-arm64 (debian-kernel@lists.debian.org) (gcc-12)"
ARM64_CPU = "Booting Linux on physical CPU 0x0000000000 [0x411fd070]"
ARM32_BOOT = "Booting Linux on physical CPU 0x0"
HF_GCC = "(arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0)"
ARMV7_CPU = "CPU: ARMv7 Processor [414fc0f0] revision 0 (ARMv7), cr=10c5387d"
ARMV6_CPU = "CPU: ARMv6-compatible processor [410fb767] revision 7 (ARMv6TEJ), cr=00c5387d"


@pytest.mark.parametrize(
    ("texts", "version", "arch"),
    [
        # Debian's arm64 kernel: no triplet in its banner, but its flavour; arm64's CPU line.
        ([DEBIAN_612], "6.12", "arm64"),
        ([ARM64_CPU, "Linux version 6.12.9 (x) (gcc)"], "6.12", "arm64"),
        # 32-bit ARM: the CPU line names the architecture version, before the triplet.
        ([ARM32_BOOT, f"Linux version 6.12.9 (b) {HF_GCC}", ARMV7_CPU], "6.12", "armv7"),
        (["Linux version 6.1.0-40-armmp (debian-kernel@lists.debian.org) (gcc)"], "6.1", "armv7"),
        ([f"Linux version 6.1.9 (b@b) {HF_GCC}"], "6.1", "armv7"),
        ([ARMV6_CPU], None, "armv6"),
        (["Linux version 6.1.9 (b@b) (gcc (GCC) 12.2.0)"], "6.1", None),
        (["U-Boot 2023.01", "Starting kernel ..."], None, None),
    ],
)  # fmt: skip
def test_version_and_architecture_come_from_what_the_kernel_prints(
    texts: list[str], version: str | None, arch: str | None
) -> None:
    kid = identify(_lines(*texts))
    assert (kid.version, kid.arch) == (version, arch)
    assert kid.key == (f"linux-{version}-{arch}" if version and arch else None)


def test_each_stored_calibration_is_one_kernels_and_its_own_summary() -> None:
    keys = [c.key for c in CALS]
    assert {"linux-6.1-arm64", "linux-6.12-arm64", "linux-6.1-armv7"} <= set(keys)
    assert REFERENCE in keys
    assert len(set(keys)) == len(keys)
    for path in FILES:
        data = json.loads(path.read_text())
        assert data["schema"] == CALIBRATION_SCHEMA
        kernel = data["kernel"]
        assert path.name == f"landmarks-linux-{kernel['version']}-{kernel['arch']}.json"
        # The banner its boots printed is of that kernel.
        assert f"Linux version {kernel['version']}." in data["target"]["kernel"]
        per_boot: dict[str, dict[str, dict]] = {}
        for key, c in data["landmarks"].items():
            assert c["n"] >= 10 and c["uncertainty_s"] > 0, (path.name, key)
            assert set(c["boots"]) <= set(data["boots"])
            for boot, off in c["boots"].items():
                per_boot.setdefault(boot, {})[key] = {
                    "offset_s": off,
                    "clock": c["clock"],
                    "bytes": c["bytes_between"],
                }
        again = summarise(per_boot)
        for key, c in data["landmarks"].items():
            for f in ("offset_s", "uncertainty_s", "min_s", "max_s", "n", "bytes_between"):
                assert again[key][f] == pytest.approx(c[f], rel=1e-9), (path.name, key, f)


@pytest.mark.parametrize(
    ("version", "arch", "key", "own"),
    [
        ("6.1", "arm64", "linux-6.1-arm64", True),
        ("6.12", "arm64", "linux-6.12-arm64", True),
        ("6.6", "arm64", "linux-6.1-arm64", False),  # 5 minors from 6.1, 6 from 6.12
        ("6.13", "arm64", "linux-6.12-arm64", False),
        ("5.15", "arm64", "linux-6.1-arm64", False),  # 6.1 is the LTS after 5.15
        ("6.1", "armv7", "linux-6.1-armv7", True),
        ("6.12", "armv7", "linux-6.1-armv7", False),  # the same architecture first
        ("6.1", "armv6", "linux-6.1-arm64", False),  # no armv6: the same version, the reference
        ("6.12", None, "linux-6.12-arm64", False),
        (None, None, REFERENCE, False),  # e.g. `quiet`: the kernel is not named
    ],
)
def test_a_boot_takes_its_kernels_calibration_else_the_nearest_widened(
    version: str | None, arch: str | None, key: str, own: bool
) -> None:
    choice = choose("run_init", KernelId(version, arch), CALS)
    assert choice is not None and choice.calibration.key == key
    if own:
        assert choice.widened_s == 0.0
    elif arch == choice.calibration.arch:
        assert choice.widened_s >= choice.offset.uncertainty_s > 0
    else:  # another architecture, or one not known: twice the uncertainty again
        assert choice.widened_s >= OTHER_ARCH_FACTOR * choice.offset.uncertainty_s > 0


def test_a_landmark_its_kernel_did_not_calibrate_comes_from_another_widened() -> None:
    # systemd's `Startup finished` is calibrated on 6.1's systemd variant only.
    assert (
        "systemd_startup_finished"
        not in next(c for c in CALS if c.key == "linux-6.12-arm64").offsets
    )
    choice = choose("systemd_startup_finished", KernelId("6.12", "arm64"), CALS)
    assert choice is not None and choice.calibration.key == "linux-6.1-arm64"
    assert choice.widened_s > 0
    assert choose("no_such_landmark", KernelId("6.1", "arm64"), CALS) is None


def test_the_widening_covers_every_offset_measured_on_another_kernel() -> None:
    """Why the widening is what it is: a calibration used for another calibrated kernel,
    widened, holds every per-boot offset measured on that kernel."""
    data = {p.name: json.loads(p.read_text()) for p in FILES}
    pairs = 0
    for used in CALS:
        for other in (c for c in CALS if c.key != used.key):
            theirs = data[f"landmarks-{other.key}.json"]["landmarks"]
            kernel = KernelId(other.version, other.arch)
            for key, entry in theirs.items():
                choice = choose(key, kernel, tuple(c for c in CALS if c is not other))
                if choice is None or choice.calibration is not used:
                    continue
                bound = choice.offset.uncertainty_s + choice.widened_s
                for boot, off in entry["boots"].items():
                    assert abs(off - choice.offset.offset_s) <= bound, (used.key, key, boot)
                pairs += 1
    assert pairs >= 8


def report(boot: Path) -> dict:
    return analyze_folder(boot, write=False).to_json()


def test_the_report_says_which_calibration_each_landmark_took() -> None:
    info = report(DATA / "stock-console-1")["analysis"]["landmarks"]
    assert (info["kernel_version"], info["kernel_arch"]) == ("6.1", "arm64")
    used = {u["marker"]: u for u in info["used"]}
    assert set(used) == {"bootm", "kernel_init"}
    assert used["kernel_init"]["landmark"] == "run_init"
    for u in used.values():
        assert u["calibration"] == "linux-6.1-arm64" and u["widened_s"] == 0.0
        assert u["target"].startswith("qemu-arm64") and u["boots"] >= 10
    # Every boundary from its hook: no landmark, no field.
    assert "landmarks" not in report(DATA / "capture-1")["analysis"]


def test_a_quiet_boot_names_no_kernel_so_its_landmark_is_widened() -> None:
    rep = report(DATA / "stock-quiet-1")
    info = rep["analysis"]["landmarks"]
    assert info["kernel_version"] is None and info["kernel_arch"] is None
    (use,) = info["used"]
    assert use["calibration"] == REFERENCE and use["widened_s"] > 0
    note = next(n for n in rep["analysis"]["notes"] if n.startswith("bootm:"))
    assert "no `Linux version` banner names the kernel" in note and "widened by" in note
    bootm = stages(rep)["bootloader"]
    assert (
        abs(bootm["end_s"] - reference_edges(DATA / "stock-quiet-1")["bootm"])
        <= bootm["end"]["uncertainty_s"]
    )


def test_a_kernel_without_a_calibration_takes_the_nearest_and_still_covers_the_edges(
    tmp_path: Path,
) -> None:
    # A hooked 6.1 console boot with its hooks taken out, its banner saying 6.9 (3 minors
    # from 6.12, 8 from 6.1): the 6.12 calibration, widened, must still hold the edges.
    plain = report(without_hooks(DATA / "console-1", tmp_path / "plain"))
    boot = without_hooks(DATA / "console-1", tmp_path / "hooked")
    boot = edit_console(
        boot,
        tmp_path / "six-nine",
        lambda b: b.replace(b"Linux version 6.1.", b"Linux version 6.9."),
    )
    rep = report(boot)
    info = rep["analysis"]["landmarks"]
    assert (info["kernel_version"], info["kernel_arch"]) == ("6.9", "arm64")
    assert {u["calibration"] for u in info["used"]} == {"linux-6.12-arm64"}
    assert all(u["widened_s"] > 0 for u in info["used"])
    truth = reference_edges(boot)
    st, before = stages(rep), stages(plain)
    for stage, marker in {"bootloader": "bootm", "kernel": "do_mount_root"}.items():
        end = st[stage]["end"]
        assert end["source"] == "landmark"
        assert abs(st[stage]["end_s"] - truth[marker]) <= end["uncertainty_s"], stage
        assert end["uncertainty_s"] > before[stage]["end"]["uncertainty_s"]
    note = next(n for n in rep["analysis"]["notes"] if n.startswith("kernel_init:"))
    assert "Linux 6.9 arm64 has no calibration of its own: linux-6.12-arm64's, widened by" in note
