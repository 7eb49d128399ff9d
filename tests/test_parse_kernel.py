from __future__ import annotations

import pytest

from rig.analysis.lines import Line, split_lines
from rig.analysis.parsers.kernel import parse_cmdline, parse_kernel
from rig.model import Chunk
from tests.test_parse_replay import load


def _lines(*texts: str) -> list[Line]:
    return split_lines([Chunk(0, "\r\n".join(texts).encode() + b"\r\n")])


def test_ecovec_2631() -> None:
    k = parse_kernel(load("ecovec-2009.01-2.6.31").lines)
    assert k.version is not None and k.version.value == "2.6.31"
    assert k.cmdline is not None and {"rootwait", "initcall_debug"} <= k.cmdline.args.keys()
    assert k.cmdline.args["root"] == "/dev/mmcblk0p2" and "quiet" not in k.cmdline.args
    (cal,) = k.calibrations
    assert (cal.kind, cal.bogomips, cal.lpj, cal.result_line) == (
        "measured",
        299.0,
        1495040,
        cal.line,
    )
    (wait,) = k.root_waits
    assert (wait.kind, wait.device) == ("rootwait", "/dev/mmcblk0p2")
    assert k.root_mount is not None and (k.root_mount.fstype, k.root_mount.device) == (
        "ext3",
        "179:2",
    )
    assert not k.root_mount.readonly
    assert k.freeing is not None and k.freeing.kib == 124
    assert k.run_init is None and k.panic is None  # 2.6.31 does not announce init
    new = [e for e in k.usb if e.new]
    assert [(e.device, e.speed) for e in new] == [("1-1", "full speed")]
    assert {e.device for e in k.usb} == {"usb1", "1-0:1.0", "1-1"}


def test_imx8_61_caller_ids() -> None:
    k = parse_kernel(load("imx8mm-2023.04-6.1-systemd").lines)
    assert k.version is not None and k.version.value == "6.1.55-yocto-standard"
    assert k.cmdline is not None and k.cmdline.args["dyndbg"] == "file kernel/async.c +p"
    (cal,) = k.calibrations
    assert (cal.kind, cal.lpj) == ("timer_frequency", 32000)
    assert k.root_mount is not None and k.root_mount.fstype == "ext4"
    assert k.freeing is not None and k.freeing.kib == 3008
    assert k.run_init is not None and k.run_init.value == "/sbin/init"
    assert [(e.device, e.speed) for e in k.usb if e.new] == [("1-1", "high-speed")]


@pytest.mark.parametrize(
    ("text", "kind", "lpj"),
    [
        ("Calibrating delay loop... 299.00 BogoMIPS (lpj=1495040)", "measured", 1495040),
        (
            "Calibrating delay loop (skipped) preset value.. 299.00 BogoMIPS (lpj=1495040)",
            "preset",
            1495040,
        ),
        (
            "Calibrating delay loop (skipped), value calculated using timer frequency.. "
            "48.00 BogoMIPS (lpj=240000)",
            "timer_frequency",
            240000,
        ),
        (
            "Calibrating delay using timer specific routine.. 5387.03 BogoMIPS (lpj=10774064)",
            "timer_routine",
            10774064,
        ),
        (
            "Calibrating delay loop (skipped) already calibrated this CPU",
            "cached",
            None,
        ),
    ],
)
def test_calibrate_forms(text: str, kind: str, lpj: int | None) -> None:
    for prefix in ("[    0.004000] ", "<6>[    0.004000] ", "[    0.004000][    T0] "):
        (cal,) = parse_kernel(_lines(prefix + text, "[    0.250000] next")).calibrations
        assert (cal.kind, cal.lpj) == (kind, lpj)


def test_calibrate_result_on_a_later_line() -> None:
    # Another message interrupted the continuation: the result follows on its own line.
    lines = _lines(
        "[    0.004000] Calibrating delay loop... ",
        "[    0.004100] irq: some interrupting message",
        "299.00 BogoMIPS (lpj=1495040)",
        "[    0.254000] pid_max: default: 32768 minimum: 301",
    )
    (cal,) = parse_kernel(lines).calibrations
    assert (cal.lpj, cal.result_line) == (1495040, 2)


@pytest.mark.parametrize(
    ("text", "fs", "ro"),
    [
        ("VFS: Mounted root (ext3 filesystem) on device 179:2.", "ext3", False),
        ("VFS: Mounted root (ext4 filesystem) readonly on device 179:2.", "ext4", True),
        ("VFS: Mounted root (squashfs filesystem) readonly on device 31:3.", "squashfs", True),
    ],
)
def test_root_mount(text: str, fs: str, ro: bool) -> None:
    m = parse_kernel(_lines("[    1.000000] " + text)).root_mount
    assert m is not None and (m.fstype, m.readonly) == (fs, ro)


@pytest.mark.parametrize(
    ("text", "kib", "what"),
    [
        ("Freeing unused kernel memory: 124k freed", 124, "unused kernel memory"),
        ("Freeing unused kernel image (initmem) memory: 2048K", 2048, "initmem"),
        ("Freeing unused kernel memory: 9984K", 9984, "unused kernel memory"),
        ("Freeing init memory: 1M", 1024, "init memory"),
    ],
)
def test_freeing(text: str, kib: int, what: str) -> None:
    f = parse_kernel(_lines("[    1.000000] " + text)).freeing
    assert f is not None and (f.kib, f.what) == (kib, what)


def test_waits_panic_notes_and_old_usb() -> None:
    k = parse_kernel(
        _lines(
            "[    1.000000] usb 2-1.3: new high speed USB device using ehci_hcd and address 4",
            "[    1.100000] Waiting 3 sec before mounting root device...",
            "[    1.200000] foo: loading out-of-tree module taints kernel.",
            "[    4.200000] Kernel panic - not syncing: VFS: Unable to mount root fs on "
            "unknown-block(179,2)",
            "[    4.300000] ---[ end Kernel panic - not syncing: VFS: Unable to mount root fs ]---",
        )
    )
    assert [(e.device, e.speed, e.new) for e in k.usb] == [("2-1.3", "high speed", True)]
    assert [(w.kind, w.seconds) for w in k.root_waits] == [("rootdelay", 3)]
    assert [n.text for n in k.module_notes] == ["foo: loading out-of-tree module taints kernel"]
    assert k.panic is not None and k.panic.line == 3
    assert k.panic.value == "VFS: Unable to mount root fs on unknown-block(179,2)"


def test_cmdline_parsing() -> None:
    args = parse_cmdline('console=ttyS0,115200 quiet lpj=1495040 dyndbg="file a.c +p" init=/x')
    assert args == {
        "console": "ttyS0,115200",
        "quiet": None,
        "lpj": "1495040",
        "dyndbg": "file a.c +p",
        "init": "/x",
    }
    assert parse_cmdline('bad="unterminated quote') == {"bad": "unterminated quote"}
