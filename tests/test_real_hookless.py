"""Recorded boots without kernel hooks, and quiet boots (tests/data/real/, see its README):
Debian's stock arm64 kernel booting a busybox initramfs (config/qemu-arm64-stock.toml),
the hooked kernel with `quiet`, and the hooked kernel's boots with its hooks taken out of
the console. Every boundary that has no hook comes from a landmark (or a configured
console pattern) and its stated uncertainty must cover QEMU's traced edge."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.analysis.landmark_calibration import FOLDER
from rig.instruments.qemu.reference import reference_edges
from rig.measure.pipeline import analyze_folder
from tests.test_real_boots import DATA, arch, bootargs, kernel

# Debian's stock 6.1 kernel (stock-*) and 6.12 kernel (612-stock-*).
STOCK_CONSOLE = sorted([*DATA.glob("stock-console-*"), *DATA.glob("612-stock-console-*")])
STOCK_CAPTURE = sorted(DATA.glob("stock-capture-*"))
ENDS = {"bootloader": "bootm", "kernel": "do_mount_root", "rootfs_mount": "kernel_init"}
ENDS["application"] = "ui_ready"


def analyze(boot: Path) -> dict[str, Any]:
    return analyze_folder(boot, write=False).to_json()


def stages(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in report["stages"]}


def assert_covers(stage: dict[str, Any], edge: float) -> None:
    """The stage's end is the traced edge, within the uncertainty it states."""
    end = stage["end"]
    assert abs(stage["end_s"] - edge) <= end["uncertainty_s"], (stage["name"], end)


def calibration(boot: Path) -> dict[str, Any]:
    """The stored calibration of the kernel the recorded boot ran."""
    return json.loads((FOLDER / f"landmarks-linux-{kernel(boot)}-{arch(boot)}.json").read_text())


def assert_own_calibration(report: dict[str, Any], boot: Path) -> None:
    """Every landmark came from the boot's own kernel's calibration, not widened."""
    used = report["analysis"]["landmarks"]
    assert (used["kernel_version"], used["kernel_arch"]) == (kernel(boot), arch(boot))
    assert used["used"], used
    for u in used["used"]:
        key = f"linux-{kernel(boot)}-{arch(boot)}"
        assert u["calibration"] == key and u["widened_s"] == 0, u


def test_the_stock_boots_are_real_and_hookless() -> None:
    for version in ("6.1", "6.12"):
        assert len([b for b in STOCK_CONSOLE if kernel(b) == version]) >= 2, version
    assert len(STOCK_CAPTURE) >= 1
    for boot in [*STOCK_CONSOLE, *STOCK_CAPTURE, DATA / "stock-quiet-1"]:
        log = (boot / "console.log").read_text(errors="replace")
        assert "U-Boot 2023.01" in log
        assert "quiet" in bootargs(boot) or f"Linux version {kernel(boot)}." in log
        assert "Debian" in log or "quiet" in bootargs(boot)
        assert "bootrig: marker do_mount_root" not in log
        assert "bootrig: marker kernel_init" not in log
        # The kernel raises no line: QEMU traced only U-Boot's and ui-ready's.
        assert set(reference_edges(boot)) == {"bootm", "ui_ready"}


@pytest.mark.parametrize("boot", STOCK_CONSOLE, ids=lambda p: p.name)
def test_stock_console_boot_is_ok_with_landmarks(boot: Path) -> None:
    report = analyze(boot)
    truth = reference_edges(boot)
    st = stages(report)
    assert report["outcome"] == "ok"
    assert_own_calibration(report, boot)
    assert all(s["start_s"] is not None and s["end_s"] is not None for s in st.values())
    # U-Boot raised bootm's GPIO but printed no tag: `Starting kernel ...` stands in.
    assert st["bootloader"]["end"]["landmark"] == "uboot_starting_kernel"
    assert st["bootloader"]["end"]["source"] == "landmark"
    assert_covers(st["bootloader"], truth["bootm"])
    assert_covers(st["application"], truth["ui_ready"])
    assert st["rootfs_mount"]["end"]["landmark"] == "run_init"
    notes = "\n".join(report["analysis"]["notes"])
    assert "bootm: no GPIO edge and no tag, so U-Boot's `Starting kernel ...` stands in" in notes
    assert "kernel_init: no GPIO edge and no tag, so `Run /sbin/init" in notes


@pytest.mark.parametrize("boot", [*STOCK_CONSOLE, *STOCK_CAPTURE], ids=lambda p: p.name)
def test_an_initramfs_boot_says_it_has_no_root_mount(boot: Path) -> None:
    report = analyze(boot)
    st = stages(report)
    mount = st["rootfs_mount"]
    assert "no root mount (initramfs)" in mount["note"]
    assert mount["duration_s"] == 0.0 and mount["uncertainty_s"] == 0.0
    # The kernel stage runs to the hand-over to init; nothing is "not reached".
    assert st["kernel"]["end_s"] == mount["end_s"] == st["init"]["start_s"]
    assert st["kernel"]["duration_s"] > 0.5
    assert any("no root mount (initramfs)" in n for n in report["analysis"]["notes"])


@pytest.mark.parametrize("boot", STOCK_CAPTURE, ids=lambda p: p.name)
def test_stock_captured_boot_takes_the_gpio_where_there_is_one(boot: Path) -> None:
    report = analyze(boot)
    truth = reference_edges(boot)
    st = stages(report)
    assert report["outcome"] == "ok"
    assert st["bootloader"]["end"]["source"] == "gpio"
    assert st["bootloader"]["end_s"] == pytest.approx(truth["bootm"], abs=1.5e-6)
    assert st["application"]["end_s"] == pytest.approx(truth["ui_ready"], abs=1.5e-6)
    assert st["rootfs_mount"]["end"]["source"] == "landmark"


def edit_console(src: Path, dst: Path, edit: Callable[[bytes], bytes]) -> Path:
    """A copy of a recorded boot whose console stream `edit` rewrote byte for byte (the
    same length), every byte keeping the arrival time of the read that carried it."""
    shutil.copytree(src, dst)
    records = [json.loads(x) for x in (dst / "console.jsonl").read_text().splitlines()]
    data = [base64.b64decode(r["data_b64"]) for r in records]
    stream = edit(b"".join(data))
    assert len(stream) == sum(map(len, data))
    out, pos = [], 0
    for r, d in zip(records, data, strict=True):
        chunk = stream[pos : pos + len(d)]
        pos += len(d)
        out.append(json.dumps({"t_ns": r["t_ns"], "data_b64": base64.b64encode(chunk).decode()}))
    (dst / "console.jsonl").write_text("\n".join(out) + "\n")
    return dst


def without_hooks(src: Path, dst: Path, strip_cmdline: bool = True) -> Path:
    """A hooked boot as if U-Boot and the kernel carried no hooks: their tags (and the
    hooks' kernel parameters) overwritten with as many filler bytes; ui-ready's tag
    stays."""

    def edit(stream: bytes) -> bytes:
        for name in (b"bootm", b"do_mount_root", b"kernel_init"):
            tag = b"bootrig: marker " + name
            stream = stream.replace(tag, b"-" * len(tag))
        if strip_cmdline:
            args = b"bootrig.pl061=0x09030000 bootrig.gpios=do_mount_root:1,kernel_init:2"
            assert args in stream
            stream = stream.replace(args, b" " * len(args))
        return stream

    return edit_console(src, dst, edit)


@pytest.mark.parametrize(
    "name",
    [
        "console-1",
        "console-2",
        "612-console-1",
        "612-console-2",
        "armv7-console-1",
        "armv7-console-2",
    ],
)
def test_landmarks_cover_the_traced_edges_of_a_hooked_boot_without_hooks(
    name: str, tmp_path: Path
) -> None:
    # Not among its kernel's calibration boots: an independent check.
    assert name not in calibration(DATA / name)["boots"]
    boot = without_hooks(DATA / name, tmp_path / name)
    report = analyze(boot)
    truth = reference_edges(boot)
    st = stages(report)
    assert report["outcome"] == "ok"
    assert_own_calibration(report, boot)
    keys = {"bootloader": "uboot_starting_kernel", "kernel": "vfs_mounted_root"}
    keys["rootfs_mount"] = "run_init"
    for stage, key in keys.items():
        assert st[stage]["end"]["landmark"] == key
        assert_covers(st[stage], truth[ENDS[stage]])
    assert_covers(st["application"], truth["ui_ready"])


def test_a_hook_that_the_kernel_has_but_that_did_not_fire_is_missing_marker(
    tmp_path: Path,
) -> None:
    # The command line still configures the kernel's hooks: their silence is evidence.
    boot = without_hooks(DATA / "console-1", tmp_path / "b", strip_cmdline=False)
    report = analyze(boot)
    assert report["outcome"] == "missing_marker"
    notes = "\n".join(report["analysis"]["notes"])
    assert "kernel_init: neither GPIO edge nor tag although the kernel has hooks" in notes
    # The landmarks still give the stages.
    assert stages(report)["rootfs_mount"]["end"]["source"] == "landmark"


def test_quiet_stock_boot_explains_what_it_cannot_see() -> None:
    boot = DATA / "stock-quiet-1"
    assert "quiet" in bootargs(boot)
    report = analyze(boot)
    truth = reference_edges(boot)
    st = stages(report)
    # The config names `Application ready` beside ui_ready: the UI is reached.
    assert report["outcome"] == "ok"
    assert st["application"]["note"] == "console '^Application ready'"
    assert (
        truth["ui_ready"] <= st["application"]["end_s"] + st["application"]["end"]["uncertainty_s"]
    )
    assert_covers(st["bootloader"], truth["bootm"])
    assert st["rootfs_mount"]["start_s"] is None and st["rootfs_mount"]["end_s"] is None
    assert st["rootfs_mount"]["note"] == "hidden by quiet"
    notes = "\n".join(report["analysis"]["notes"])
    assert "do_mount_root, kernel_init: not seen:" in notes and "`quiet`" in notes


def test_quiet_hooked_console_boot_without_a_pattern_is_missing_marker_not_a_hang(
    tmp_path: Path,
) -> None:
    boot = DATA / "quiet-console-1"
    report = analyze(boot)
    st = stages(report)
    assert report["outcome"] == "missing_marker"
    assert st["bootloader"]["end"]["source"] == "host"  # U-Boot's tag is not filtered
    notes = "\n".join(report["analysis"]["notes"])
    assert "do_mount_root, kernel_init, ui_ready: not seen:" in notes
    # The same artifacts with a console pattern configured beside ui_ready: ok.
    copy = tmp_path / "quiet"
    shutil.copytree(boot, copy)
    run = json.loads((copy / "run.json").read_text())
    run["config"]["stages"][-1]["end"]["console"] = "^Application ready"
    (copy / "run.json").write_text(json.dumps(run))
    again = analyze(copy)
    assert again["outcome"] == "ok"
    truth = reference_edges(copy)
    app = stages(again)["application"]
    assert app["end_s"] >= truth["ui_ready"] - app["end"]["uncertainty_s"]


def test_quiet_captured_boot_has_every_boundary_from_the_capture() -> None:
    boot = DATA / "quiet-capture-1"
    assert "quiet" in bootargs(boot)
    log = (boot / "console.log").read_text(errors="replace")
    assert "bootrig: marker kernel_init" not in log
    report = analyze(boot)
    truth = reference_edges(boot)
    st = stages(report)
    assert report["outcome"] == "ok"
    for stage, marker in ENDS.items():
        assert st[stage]["end"]["source"] == "gpio"
        assert st[stage]["end_s"] == pytest.approx(truth[marker], abs=1.5e-6)


@pytest.mark.parametrize("boot", sorted(DATA.glob("*/")), ids=lambda p: p.name)
def test_one_pacing_verdict_and_qemu_is_never_called_paced(boot: Path) -> None:
    """The host clock and the console analysis read one verdict. QEMU's PL011 is not
    paced: a boot with enough bytes shows it; a quiet one may leave it unknown, never
    'paced' (that would charge console time no byte took)."""
    report = analyze(boot)
    host, console = report["clocks"]["host"]["pacing"], report["console"]["pacing"]
    assert host == console
    assert console["verdict"] in ("unpaced", "unknown"), console
    if "quiet" not in bootargs(boot):
        assert console["verdict"] == "unpaced"
        assert console["bytes_per_s"] > 5 * console["line_bytes_per_s"]
