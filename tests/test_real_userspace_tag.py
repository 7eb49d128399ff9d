"""The userspace tag on recorded console-only boots (tests/data/real/, see its README).

ui-ready raises its GPIO, then writes its tag to /dev/kmsg: a run without the GPIO
places the edge up to the hook's bound before the tag's printk stamp (docs/analysis.md,
"The userspace tag's print path"). On Debian's stock kernel under QEMU that path took
2-19 ms, longest on a busy host; `stock-console-busy-1` was recorded on one and its tag
was stamped about 19.5 ms after the edge (the bound was 12 ms). Every recorded
console-only boot with the tag must have QEMU's traced edge within the uncertainty its
report states, counted from the power-on command (the report's t = 0), which QEMU's
RESUME follows by a lag of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.instruments.qemu.reference import command_lag_s, reference_edges, report_edges
from rig.measure.pipeline import analyze_folder
from tests.test_real_boots import DATA

CONSOLE = sorted(
    p
    for pattern in ("console-*", "stock-console-*", "systemd-console-*")
    for p in DATA.glob(pattern)
)
BUSY = sorted(DATA.glob("stock-console-busy-*"))


def test_the_busy_host_boots_are_there_and_keep_the_command_time() -> None:
    assert len(BUSY) >= 4
    for boot in BUSY:
        run = json.loads((boot / "run.json").read_text())
        assert run["instruments"]["analyzer"] is None and run["variant"] == "stock"
        lag = command_lag_s(boot)
        # QEMU resumes after the command, within a few ms on a busy host.
        assert lag is not None and 0 <= lag < 0.05, (boot.name, lag)


@pytest.mark.parametrize("boot", CONSOLE, ids=lambda p: p.name)
def test_ui_ready_from_its_tag_covers_the_traced_edge(boot: Path) -> None:
    report = analyze_folder(boot, write=False).to_json()
    truth = report_edges(boot, console_only=True)
    app = {s["name"]: s for s in report["stages"]}["application"]
    end = app["end"]
    assert report["time_base"]["reference"] == "host"
    assert (end["event"], end["source"]) == ("ui_ready", "printk")
    err = app["end_s"] - truth["ui_ready"]
    assert abs(err) <= end["uncertainty_s"], (boot.name, err, end["uncertainty_s"])


def test_a_console_only_run_counts_the_edges_from_the_power_on_command() -> None:
    boot = BUSY[0]
    lag = command_lag_s(boot)
    assert lag is not None and lag > 0
    edges = reference_edges(boot)
    on_report = report_edges(boot, console_only=True)
    assert on_report == {m: pytest.approx(t + lag, abs=1e-9) for m, t in edges.items()}
    # With the capture, t = 0 is the power edge, which QEMU's analyzer puts at RESUME.
    assert report_edges(boot, console_only=False) == edges
    # A boot recorded before qemu.json kept the command's time: the RESUME is all there is.
    old = DATA / "stock-console-1"
    assert command_lag_s(old) is None
    assert report_edges(old, console_only=True) == reference_edges(old)
