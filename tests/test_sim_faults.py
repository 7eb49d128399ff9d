"""Injected faults: hang, panic and a lost console, planned and live."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import serial

from simboard.client import SimControl, SimProcess
from simboard.timeline import Fault, load, plan

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"
FAST = BOARDS / "fast.toml"


def test_hang_stops_the_cpu_in_the_stage() -> None:
    p = load(FAST)
    ok = plan(p, seed=1)
    tl = plan(p, seed=1, fault=Fault.parse("hang:init"))
    assert tl.halted == "hang"
    assert [s.name for s in tl.stages] == ["bootloader", "kernel", "rootfs_mount"]
    assert set(tl.markers) == {"bootm", "do_mount_root", "kernel_init"}
    assert ok.data.startswith(tl.data) and len(tl.data) < len(ok.data)
    assert not any("Starting application" in ln.text for ln in tl.lines)


def test_panic_prints_the_kernel_panic_line_and_stops() -> None:
    tl = plan(load(FAST), seed=1, fault=Fault.parse("panic:rootfs_mount"))
    assert tl.halted == "panic"
    assert tl.lines[-1].text.endswith(
        "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(179,2)"
    )
    assert tl.lines[-1].printk_ts is not None
    assert "kernel_init" not in tl.markers


@pytest.mark.parametrize("text", ["panic:bootloader", "hang", "hang:nowhere", "melt"])
def test_bad_fault_names_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="console-lost, hang:STAGE"):
        Fault.parse(text)


def test_live_console_lost_and_panic(tmp_path: Path) -> None:
    for fault in ("console-lost", "panic:kernel"):
        with (
            SimProcess(FAST, seed=2, options={"fault": fault}) as sim,
            serial.Serial(sim.relay, 9600) as relay,
            serial.Serial(sim.console, 115200, timeout=0.4) as con,
        ):
            assert sim.info["fault"] == fault
            ctl = SimControl(sim.control_path)
            ctl.arm({"power": 0, "uart_tx": 1})
            relay.write(bytes((0xA0, 1, 1, 0xA2)))
            relay.flush()
            got = b""
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                got += con.read(con.in_waiting or 1)
            ctl.stop(truth=tmp_path / "t.json")
        doc = json.loads((tmp_path / "t.json").read_text())
        (boot,) = doc["boots"]
        assert doc["fault"] == fault
        assert boot["completed"] is (fault == "console-lost")  # the board itself is fine
        if fault == "console-lost":
            assert got == b"" and set(boot["markers"]) == {
                "bootm",
                "do_mount_root",
                "kernel_init",
                "ui_ready",
            }
        else:
            assert b"Kernel panic - not syncing" in got and boot["halted"] == "panic"
            assert set(boot["markers"]) == {"bootm"}
