"""Every advisory says which knob would apply it (issue 25 item 1), from this boot's own
evidence: the console fixtures (tests/data/consoles) and the recorded real QEMU boots
(tests/data/real); a setting already on the command line is never proposed again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rig import names
from rig.analysis.console import analyze_console
from rig.analysis.events import build_timebase
from rig.analysis.lines import split_lines
from rig.measure.pipeline import analyze_folder
from rig.model import Chunk
from rig.model.knob import Knob
from rig.model.options import AnalysisOptions
from rig.model.report import Advisory
from tests.test_parse_replay import CONSOLES, Fixture, _chunks, _pace, load

REAL = Path(__file__).parent / "data" / "real"
ECOVEC = "ecovec-2009.01-2.6.31"


def _advice(fx: Fixture) -> list[Advisory]:
    opts = AnalysisOptions.from_mapping({})
    return analyze_console(fx.lines, fx.analyzer_tb(), fx.baud, opts, fx.chunks).advisories


def _knobs(adv: list[Advisory], rule: str) -> list[Knob]:
    out = [a.knob for a in adv if a.rule == rule]
    assert out and all(k is not None for k in out), rule
    return out  # type: ignore[return-value]


def _set(kind: str, name: str, value: str | None) -> tuple[Any, ...]:
    return (kind, names.KNOB_SET, name, value)


def _key(k: Knob) -> tuple[Any, ...]:
    return (k.kind, k.op, k.name, k.value)


def _ecovec_with(cmdline_extra: str) -> Fixture:
    """The Ecovec console with arguments added to its kernel command line, paced the
    same way (the fixture's pauses are found by their text, so they stay in place)."""
    data = (CONSOLES / f"{ECOVEC}.log").read_bytes()
    old = b"rootwait initcall_debug\r\n"
    assert data.count(old) == 1
    data = data.replace(old, b"rootwait initcall_debug " + cmdline_extra.encode() + b"\r\n")
    meta = json.loads((CONSOLES / f"{ECOVEC}.json").read_text())
    starts = _pace(data, meta)
    chunks = _chunks(data, starts, 10 / meta["baud"])
    return Fixture(
        ECOVEC, data, meta["baud"], meta.get("kernel_start_s"), tuple(starts), tuple(chunks)
    )


def test_ecovec_knobs_come_from_its_console() -> None:
    fx = load(ECOVEC)
    adv = _advice(fx)
    (delay,) = _knobs(adv, "uboot_bootdelay")
    assert _key(delay) == _set(names.KNOB_UBOOT_ENV, "bootdelay", "0")
    assert delay.label == "try: bootdelay=0 (U-Boot env)"
    (verify,) = _knobs(adv, "image_verify")
    assert _key(verify) == _set(names.KNOB_UBOOT_ENV, "verify", "no")
    (silent,) = _knobs(adv, "uboot_console")
    assert _key(silent) == _set(names.KNOB_UBOOT_ENV, "silent", "1")
    assert "CONFIG_SILENT_CONSOLE" in silent.text
    (quiet,) = _knobs(adv, "console_output")
    assert _key(quiet) == _set(names.KNOB_KERNEL_ARG, "quiet", None)
    assert quiet.label == "try: quiet (kernel command line)"
    # The value the calibration line of this boot printed, not a constant.
    (printed,) = re.findall(rb"BogoMIPS \(lpj=(\d+)\)", fx.data)
    (lpj,) = _knobs(adv, "calibrate_delay")
    assert _key(lpj) == _set(names.KNOB_KERNEL_ARG, "lpj", printed.decode())
    assert lpj.setting == "lpj=1495040"
    # Nothing the rig can set: each says what to do instead.
    for rule in ("kernel_decompress", "usb_probe", "root_wait", "slow_initcall"):
        for k in _knobs(adv, rule):
            assert k.kind == names.KNOB_NONE and k.op is None and k.name is None, rule
            assert k.why and k.label == "try: nothing the rig can set", rule
    (wait,) = _knobs(adv, "root_wait")  # rootwait: the device has to probe anyway
    assert "/dev/mmcblk0p2" in (wait.why or "")


def test_ecovec_slow_initcalls_are_never_blacklisted() -> None:
    # The display (sh_mobile_lcdc_init), the console (sci_init), networking, USB host,
    # the RTC: none is of an optional subsystem, so none gets initcall_blacklist=.
    knobs = _knobs(_advice(load(ECOVEC)), "slow_initcall")
    assert len(knobs) == 9
    assert all(k.kind == names.KNOB_NONE and "optional subsystem" in (k.why or "") for k in knobs)


def test_modules_async_and_uboot_work_have_no_knob() -> None:
    adv = _advice(load("imx8mm-2023.04-6.1-systemd"))
    why = {a.title.split()[1]: a.knob.why for a in adv if a.rule == "slow_initcall" and a.knob}
    assert "module brcmfmac" in (why["brcmfmac_module_init"] or "")
    assert "async" in (why["do_populate_rootfs"] or "")
    assert "optional subsystem" in (why["imx_uart_init"] or "")  # the console's own UART
    stm = _advice(load("stm32mp1-2023.04-bootstage"))
    for rule, word in (("usb_probe", "usb start"), ("image_copy", "load address")):
        (k,) = _knobs(stm, rule)
        assert k.kind == names.KNOB_NONE and word in (k.why or ""), rule


def test_arguments_already_on_the_command_line_are_not_proposed_again() -> None:
    fx = _ecovec_with("quiet lpj=1495040")
    adv = _advice(fx)
    # `quiet` is on: no console advisory, and no advisory proposes it.
    assert not [a for a in adv if a.rule == "console_output"]
    proposed = [a.knob for a in adv if a.knob and a.knob.kind == names.KNOB_KERNEL_ARG]
    assert all(k.name not in ("quiet",) for k in proposed)
    # This console still shows the measured calibration (it was recorded without the
    # preset), so the advisory stays, but its knob says the preset is there already.
    (lpj,) = _knobs(adv, "calibrate_delay")
    assert lpj.kind == names.KNOB_NONE and "already on" in (lpj.why or "")
    # The U-Boot knobs do not depend on the kernel's command line.
    (delay,) = _knobs(adv, "uboot_bootdelay")
    assert _key(delay) == _set(names.KNOB_UBOOT_ENV, "bootdelay", "0")


def _kernel(text: str) -> list[Advisory]:
    lines = split_lines([Chunk(0, text.replace("\n", "\r\n").encode())])
    return analyze_console(lines, build_timebase(None, lines, 0, 115200), 115200).advisories


def _arrivals(*parts: tuple[int, bytes], **options: Any) -> list[Advisory]:
    """A console read in `parts`, each arriving at its millisecond."""
    lines = split_lines([Chunk(t_ms * 1_000_000, data) for t_ms, data in parts])
    tb = build_timebase(None, lines, 0, 115200)
    return analyze_console(lines, tb, 115200, AnalysisOptions.from_mapping(options)).advisories


def test_no_lpj_printed_and_bootdelay_already_0_have_no_knob() -> None:
    # A kernel that prints BogoMIPS without `(lpj=N)`: nothing to preset from this boot.
    adv = _arrivals(
        (0, b"[    0.000000] Linux version 2.6.31\r\n[    0.010000] Calibrating delay loop... "),
        (285, b"299.00 BogoMIPS\r\n[    0.300000] next\r\n"),
    )
    (k,) = _knobs(adv, "calibrate_delay")
    assert k.kind == names.KNOB_NONE and "no `lpj=`" in (k.why or "")
    # bootdelay=0 already (its key check shows with min_gain_ms = 0): not proposed again.
    adv = _arrivals(
        (0, b"U-Boot 2009.01\r\nHit any key to stop autoboot:  0"),
        (30, b" \x08\x08\x080 \r\n## Booting kernel\r\n"),
        min_gain_ms=0,
    )
    (k,) = _knobs(adv, "uboot_bootdelay")
    assert k.kind == names.KNOB_NONE and "already 0" in (k.why or "")


def test_rootdelay_knob_removes_the_argument() -> None:
    adv = _kernel(
        "[    0.000000] Kernel command line: console=ttyS0 root=/dev/sda1 rootdelay=2\n"
        "[    1.000000] Waiting 2 sec before mounting root device...\n"
        "[    3.004000] EXT4-fs (sda1): mounted filesystem\n"
    )
    (k,) = _knobs(adv, "root_wait")
    assert _key(k) == (names.KNOB_KERNEL_ARG, names.KNOB_REMOVE, "rootdelay", None)
    assert k.label == "try: without rootdelay (kernel command line)"


def _initcall(fn: str, usecs: int, cmdline: str = "console=ttyS0") -> list[Advisory]:
    return _kernel(
        f"[    0.000000] Kernel command line: {cmdline}\n"
        f"[    1.000000] calling  {fn}+0x0/0x40 @ 1\n"
        f"[    1.{usecs:06d}] initcall {fn}+0x0/0x40 returned 0 after {usecs} usecs\n"
        "[    1.900000] Freeing unused kernel memory: 124k freed\n"
    )


def test_initcall_blacklist_only_for_optional_subsystems() -> None:
    (k,) = _knobs(_initcall("alsa_sound_init", 30000), "slow_initcall")
    assert _key(k) == _set(names.KNOB_KERNEL_ARG, "initcall_blacklist", "alsa_sound_init")
    # One already there: the list grows (the kernel reads one comma-separated list).
    (k,) = _knobs(
        _initcall("bt_init", 30000, "console=ttyS0 initcall_blacklist=cfg80211_init"),
        "slow_initcall",
    )
    assert k.value == "cfg80211_init,bt_init"
    # An optional subsystem's name on something a boot needs (the Bluetooth UART line
    # discipline says uart), and an ordinary driver: no knob.
    for fn in ("hci_uart_init", "mmc_blk_init", "sh_mobile_lcdc_init", "gpiolib_dev_init"):
        (k,) = _knobs(_initcall(fn, 30000), "slow_initcall")
        assert k.kind == names.KNOB_NONE, fn


@pytest.fixture(scope="module")
def initcall_debug_boot() -> list[Advisory]:
    return analyze_folder(REAL / "initcall-debug-1", write=False).advisories


def test_real_qemu_boot_initcalls_stay_in(initcall_debug_boot: list[Advisory]) -> None:
    # The QEMU target's slow initcalls create its platform devices, probe its root disk
    # (root=/dev/vda) and its character devices: blacklisting any would stop the boot.
    by_fn = {a.title.split()[1]: a.knob for a in initcall_debug_boot}
    assert set(by_fn) == {
        "of_platform_default_populate_init",
        "virtio_blk_init",
        "virtio_mmio_init",
        "chr_dev_init",
    }
    assert all(k is not None and k.kind == names.KNOB_NONE and k.why for k in by_fn.values())
