from __future__ import annotations

from typing import Any

import pytest

from rig.analysis.console import analyze_console
from rig.analysis.events import Timebase, build_timebase
from rig.analysis.lines import split_lines
from rig.model import Chunk
from rig.model.options import AnalysisOptions
from rig.model.report import Advisory
from tests.test_parse_replay import Fixture, load

CHAR_S = 10 / 115200


def _advice(fx: Fixture, tb: Timebase | None = None, **options: Any) -> list[Advisory]:
    opts = AnalysisOptions.from_mapping(options)
    return analyze_console(fx.lines, tb or fx.analyzer_tb(), fx.baud, opts, fx.chunks).advisories


def _rule(advisories: list[Advisory], rule: str) -> list[Advisory]:
    return [a for a in advisories if a.rule == rule]


def _between(fx: Fixture, a: str, b: str) -> float:
    """True time between the first bytes of the first lines containing `a` and `b`."""
    la = next(ln for ln in fx.lines if a in ln.text)
    lb = next(ln for ln in fx.lines if b in ln.text and ln.index > la.index)
    return fx.start_s(lb) - fx.start_s(la)


def test_sorted_by_gain_with_the_contract_keys() -> None:
    adv = _advice(load("ecovec-2009.01-2.6.31"))
    assert [a.gain_s for a in adv] == sorted((a.gain_s for a in adv), reverse=True)
    for a in adv:
        assert a.rule and a.title and a.gain_s is not None and a.evidence and a.advice
        assert a.gain_kind in ("measured", "estimate", "upper_bound")
        for ev in a.evidence:
            assert ev.line is not None and ev.text is not None and ev.t_s is not None
    assert adv[0].rule == "uboot_bootdelay"


def test_bootloader_offenders_measured_on_this_boot() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    adv = _advice(fx)
    # Model truth: bootdelay=1, CRC32 402 ms, gunzip 587 ms. Host arrival is quantized to
    # 1 ms USB frames, so allow 2 ms.
    (delay,) = _rule(adv, "uboot_bootdelay")
    assert delay.gain_s == pytest.approx(1.0, abs=2e-3)
    assert "bootdelay 0" in delay.advice
    # The countdown line's own bytes (prompt to line feed) are the evidence, not the
    # line after it.
    assert [e.line for e in delay.evidence] == [12]
    (verify,) = _rule(adv, "image_verify")
    assert verify.gain_s == pytest.approx(0.402, abs=2e-3)
    assert "verify n" in verify.advice
    (unc,) = _rule(adv, "kernel_decompress")
    assert unc.gain_s == pytest.approx(0.587, abs=2e-3)
    assert unc.gain_kind == "upper_bound"


def test_calibrate_delay_proposes_the_printed_lpj() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    (cal,) = _rule(_advice(fx), "calibrate_delay")
    # The loop ran 249.7 ms; the stamps also hold the next line's 0.2 ms of work.
    assert cal.gain_s == pytest.approx(0.2499, abs=1e-5)
    assert "`lpj=1495040`" in cal.advice
    # Preset or timer-derived values are not flagged.
    assert _rule(_advice(load("imx8mm-2023.04-6.1-systemd")), "calibrate_delay") == []


def test_slow_initcalls_threshold_is_configurable() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    default = _rule(_advice(fx), "slow_initcall")
    assert len(default) == 9 and all(a.gain_s >= 0.010 for a in default)
    assert default[0].title == "initcall sh_mobile_lcdc_init takes 155.1 ms"
    assert default[0].gain_s == pytest.approx(0.155130)
    # Two driver messages printed inside it, at 10/baud per byte.
    lcdc = default[0].evidence[0].line
    inside = load("ecovec-2009.01-2.6.31").lines[lcdc + 1 : lcdc + 3]
    assert default[0].detail["console_s"] == pytest.approx(
        sum(len(x.raw) + 2 for x in inside) * CHAR_S
    )
    strict = _rule(_advice(fx, initcall_threshold_ms=50), "slow_initcall")
    assert [a.title.split()[1] for a in strict] == [
        "sh_mobile_lcdc_init",
        "inet_init",
        "r8a66597_init",
    ]


def test_module_and_async_initcalls_are_upper_bounds() -> None:
    adv = _rule(_advice(load("imx8mm-2023.04-6.1-systemd")), "slow_initcall")
    kinds = {a.title.split()[1]: a.gain_kind for a in adv}
    assert kinds["brcmfmac_module_init"] == "upper_bound"
    assert kinds["do_populate_rootfs"] == "upper_bound"
    assert kinds["ci_hdrc_imx_driver_init"] == "measured"


def test_root_wait_ends_where_the_device_appeared() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    (wait,) = _rule(_advice(fx), "root_wait")
    truth = _between(fx, "Waiting for root device", "bootrig: marker do_mount_root")
    assert wait.gain_s == pytest.approx(truth, abs=2e-6)
    assert wait.gain_kind == "upper_bound"


def test_rootdelay_is_a_measured_sleep() -> None:
    lines = split_lines(
        [
            Chunk(
                0,
                b"[    1.000000] Waiting 2 sec before mounting root device...\r\n"
                b"[    3.004000] EXT4-fs (sda1): mounted filesystem\r\n",
            )
        ]
    )
    out = analyze_console(lines, build_timebase(None, lines, 0, 115200), 115200)
    (wait,) = _rule(out.advisories, "root_wait")
    # The sleep is the 2 s the line announced; the 4 ms after it is not the sleep.
    assert wait.gain_s == pytest.approx(2.0) and wait.gain_kind == "measured"
    assert wait.evidence_s == pytest.approx(2.004)


def test_usb_in_uboot_and_kernel() -> None:
    fx = load("stm32mp1-2023.04-bootstage")
    (usb,) = _rule(_advice(fx), "usb_probe")
    # Model: 21.3 ms to the bus line, 1218.1 ms scanning, 2.2 ms for storage; console
    # time of the scan output is excluded.
    assert usb.gain_s == pytest.approx(0.0213 + 1.2181 + 0.0022, abs=2e-3)
    (kusb,) = _rule(_advice(load("imx8mm-2023.04-6.1-systemd")), "usb_probe")
    assert kusb.gain_s == pytest.approx(0.058227)  # ci_hdrc_imx_driver_init's own measure
    assert kusb.detail["enumerations"][0]["name"] == "usb 1-1 (high-speed)"


def test_image_copy() -> None:
    (copy,) = _rule(_advice(load("stm32mp1-2023.04-bootstage")), "image_copy")
    assert copy.gain_s == pytest.approx(0.0268, abs=2e-3)


def test_console_output_quantifies_the_uncertainty_principle() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    (con,) = _rule(_advice(fx), "console_output")
    stamped = [ln for ln in fx.lines if ln.printk_ts is not None]
    nbytes = sum(fx.lines[ln.index + 1].offset - ln.offset for ln in stamped[:-1])
    nbytes += len(stamped[-1].raw)
    assert con.detail["bytes"]["kernel"] == nbytes
    assert con.gain_s == pytest.approx(nbytes * CHAR_S)
    assert con.gain_kind == "estimate" and "`quiet`" in con.advice
    debug = con.detail["bytes"]["initcall_debug"]
    assert con.detail["lines"]["initcall_debug"] == 72
    assert con.detail["initcall_debug_s"] == pytest.approx(debug * CHAR_S)
    assert "initcall_debug" in con.advice
    (ub,) = _rule(_advice(fx), "uboot_console")
    assert ub.detail["bytes"] == fx.lines[24].offset  # up to "Starting kernel ..."


def test_quiet_means_no_console_advisory() -> None:
    text = (
        b"[    0.000000] Kernel command line: console=ttyS0,115200 quiet\r\n"
        + b"[    0.100000] some message that still made it out\r\n" * 50
    )
    lines = split_lines([Chunk(0, text)])
    out = analyze_console(lines, build_timebase(None, lines, 0, 115200), 115200)
    assert _rule(out.advisories, "console_output") == []


def test_min_gain_filters_small_advisories() -> None:
    fx = load("imx8mm-2023.04-6.1-systemd")
    rules = {a.rule for a in _advice(fx, min_gain_ms=500)}
    assert rules == {"uboot_bootdelay", "console_output"}


def test_no_console_no_advice() -> None:
    out = analyze_console([], build_timebase(None, [], 0, 115200), 115200)
    assert out.advisories == [] and out.top == [] and out.initcalls == []
    assert out.uboot is None and out.kernel is None and out.systemd is None
