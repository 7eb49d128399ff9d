"""The entry point the report calls: analyze_console(lines, tb, baud, options)."""

from __future__ import annotations

import json

import pytest

from rig.analysis.console import analyze_console
from rig.analysis.lines import split_lines
from rig.model import Chunk
from rig.model.codec import dump
from rig.model.options import AnalysisOptions
from rig.model.sections import BootstageRow, BootstageTotal
from tests.test_parse_replay import FIXTURES, load

KEYS = {
    "initcalls",
    "modules",
    "top",
    "advisories",
    "uboot",
    "kernel",
    "systemd",
    "app_events",
    "phases",
    "unattributed",
    "pacing",
    "notes",
}
APP = AnalysisOptions.from_mapping(
    {"app_events": [{"name": "first_frame", "regex": r"first frame after (?P<ms>\d+) ms"}]}
)


@pytest.mark.parametrize("name", FIXTURES)
def test_shape_json_and_determinism(name: str) -> None:
    fx = load(name)
    tb = fx.analyzer_tb()
    out = analyze_console(fx.lines, tb, fx.baud, APP, chunks=fx.chunks)
    assert set(dump(out)) == KEYS
    text = json.dumps(dump(out), allow_nan=False, sort_keys=True)
    again = analyze_console(fx.lines, tb, fx.baud, APP, chunks=fx.chunks)
    assert json.dumps(dump(again), sort_keys=True) == text


def test_top_table_where_is_the_time_going() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    opts = AnalysisOptions(top_n=14)
    top = analyze_console(fx.lines, fx.analyzer_tb(), fx.baud, opts, chunks=fx.chunks).top
    items = [r for r in top if r.kind != "unattributed"]
    assert [(r.kind, r.name) for r in items[:6]] == [
        ("autoboot", "autoboot countdown (bootdelay=1)"),
        ("uncompress", "Uncompressing Kernel Image ... OK"),
        ("verify", "Verifying Checksum ... OK"),
        ("rootwait", "rootwait /dev/mmcblk0p2"),
        ("calibrate_delay", "calibrate_delay (measured)"),
        ("initcall", "sh_mobile_lcdc_init"),
    ]
    assert {r.stage for r in items} == {"bootloader", "kernel"}
    # The init scripts' silences have no evidence of what ran: they rank as such.
    rest = {r.name: r for r in top if r.kind == "unattributed"}
    app = rest["after 'Starting application: /usr/bin/ecovec-ui'"]
    assert app.stage == "userspace"
    assert [r.rank for r in top] == list(range(1, 15))


def test_top_counts_a_module_once_and_lists_bootstage_rows() -> None:
    fx = load("imx8mm-2023.04-6.1-systemd")
    opts = AnalysisOptions(top_n=50)
    top = analyze_console(fx.lines, fx.analyzer_tb(), fx.baud, opts, chunks=fx.chunks).top
    assert ("module", "brcmfmac") in {(r.kind, r.name) for r in top}
    assert not any(r.kind == "initcall" and r.name == "brcmfmac_module_init" for r in top)
    assert any(r.kind == "unit" and r.name == "Weston Wayland Compositor" for r in top)
    st = load("stm32mp1-2023.04-bootstage")
    rows = analyze_console(st.lines, st.analyzer_tb(), st.baud, chunks=st.chunks).top
    assert (rows[0].kind, rows[0].name, rows[0].source) == (
        "bootstage",
        "bootm_start",
        "uboot",
    )
    assert rows[0].duration_s == pytest.approx(2.517699)


def test_sections_imx8() -> None:
    fx = load("imx8mm-2023.04-6.1-systemd")
    out = analyze_console(fx.lines, fx.analyzer_tb(), fx.baud, APP, chunks=fx.chunks)
    u = out.uboot
    assert [b.phase for b in u.banners] == ["SPL", "U-Boot"]
    assert u.autoboot.bootdelay == 2
    # The countdown alone: the 3.1 ms of bootcmd before U-Boot prints again is not it.
    assert u.autoboot.measured_s == pytest.approx(2.0, abs=1e-3)
    assert [s.kind for s in u.steps] == ["read", "verify", "verify", "uncompress", "load_fdt"]
    assert u.steps[0].source == "uboot" and u.steps[0].duration_s == 0.134
    k = out.kernel
    assert k.version == "6.1.55-yocto-standard"
    assert k.run_init.path == "/sbin/init" and k.run_init.source == "printk"
    sd = out.systemd
    assert sd.startup.parts == {"kernel": 0.742, "userspace": 2.108}
    assert sd.startup.total_s == 2.851
    assert [f.unit_id for f in sd.failed] == ["systemd-timesyncd.service"]
    weston = next(x for x in sd.units if x.detail["unit_id"] == "weston.service")
    assert weston.duration_s == pytest.approx(0.648, abs=2e-3)
    (ev,) = out.app_events
    assert ev.name == "first_frame" and ev.groups == {"ms": "412"}
    line = fx.lines[ev.line]
    assert ev.t_s == pytest.approx(fx.start_s(line), abs=ev.uncertainty_s)


def test_bootstage_section() -> None:
    fx = load("stm32mp1-2023.04-bootstage")
    out = analyze_console(fx.lines, fx.analyzer_tb(), fx.baud, chunks=fx.chunks)
    assert out.uboot is not None
    (bs,) = out.uboot.bootstage
    assert bs.records == 12
    assert bs.rows[-1] == BootstageRow("start_kernel", 3.866544, 0.031442)
    assert bs.accumulated[1] == BootstageTotal("dm_r", 0.041718)


def test_console_only_run() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    out = analyze_console(fx.lines, fx.host_tb(), fx.baud, chunks=fx.chunks)
    assert out.notes == [] and out.initcalls[0].source == "printk"
    # U-Boot phases stay on the host clock; kernel spans use the printk clock.
    assert out.uboot.steps[0].source == "host"
    cal = out.kernel.calibrate_delay[0]
    assert cal.source == "printk" and cal.duration_s == pytest.approx(0.2499, abs=1e-5)


def test_without_a_printk_fit_times_are_printk_relative_and_say_so() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    out = analyze_console(fx.lines, fx.nofit_tb(), fx.baud, chunks=fx.chunks)
    assert any("printk-relative" in n for n in out.notes)
    assert out.initcalls[0].source == "printk_relative"
    cal = out.kernel.calibrate_delay[0]
    assert cal.source == "printk" and cal.duration_s == pytest.approx(0.2499, abs=1e-5)


def test_options_object_and_unknown_baud() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    opts = AnalysisOptions(top_n=3)
    out = analyze_console(fx.lines, fx.analyzer_tb(), 0, opts, chunks=fx.chunks)
    assert len(out.top) == 3
    assert "baud unknown" in " ".join(out.notes)
    assert not any(a.rule in ("console_output", "uboot_console") for a in out.advisories)


def test_panic_boot() -> None:
    data = (
        b"[    1.000000] Waiting for root device /dev/mmcblk0p2...\r\n"
        b"[   11.000000] Kernel panic - not syncing: VFS: Unable to mount root fs on "
        b"unknown-block(0,0)\r\n"
    )
    lines = split_lines([Chunk(0, data)])
    fx = load("ecovec-2009.01-2.6.31")
    out = analyze_console(lines, fx.host_tb(), 115200)
    k = out.kernel
    assert k.panic.reason == "VFS: Unable to mount root fs on unknown-block(0,0)"
    assert k.panic.line == 1 and k.version is None
    # No device appeared and nothing was mounted: the wait has no end to measure.
    assert k.root_waits == []
