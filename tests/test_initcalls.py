from __future__ import annotations

import pytest

from rig.analysis.events import Timebase
from rig.analysis.hostclock import host_only
from rig.analysis.initcalls import async_waits, module_breakdown, pair_initcalls
from rig.analysis.lines import Line, split_lines
from rig.analysis.parsers.initcall import parse_initcalls
from rig.model import Chunk
from rig.model.report import Initcall
from tests.test_parse_replay import load


def _lines(*texts: str) -> list[Line]:
    return split_lines([Chunk(1_000_000_000, "\r\n".join(texts).encode() + b"\r\n")])


def _pair(lines: list[Line]) -> tuple[list[Initcall], Timebase]:
    tb = Timebase("host", None, None, None, host_only(0, 10 / 115200), {})
    return pair_initcalls(parse_initcalls(lines), lines, tb), tb


def test_ecovec_on_the_power_on_time_base() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    tb = fx.analyzer_tb()
    calls = pair_initcalls(parse_initcalls(fx.lines), fx.lines, tb)
    assert len(calls) == 36 and all(c.returned for c in calls)
    lcdc = next(c for c in calls if c.name == "sh_mobile_lcdc_init")
    assert lcdc.module is None and lcdc.return_code == 0
    assert lcdc.duration_s == pytest.approx(0.155130)  # "after 155130 usecs"
    assert lcdc.source == "printk"
    # Reference time of the "calling" line: where its first byte left the board.
    line = fx.lines[lcdc.line]
    assert lcdc.start_s == pytest.approx(fx.start_s(line), abs=5e-6)
    assert lcdc.uncertainty_s < 1e-4
    assert [c.start_s for c in calls] == sorted(c.start_s or 0.0 for c in calls)


def test_without_a_fit_times_stay_printk_relative() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    calls = pair_initcalls(parse_initcalls(fx.lines), fx.lines, fx.nofit_tb())
    d = calls[0]
    assert d.source == "printk_relative" and d.uncertainty_s is None
    assert d.start_s == fx.lines[d.line].printk_ts


def test_console_only_maps_printk_through_the_arrival_envelope() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    calls = pair_initcalls(parse_initcalls(fx.lines), fx.lines, fx.host_tb())
    d = next(c for c in calls if c.name == "sh_mobile_lcdc_init")
    assert d.source == "printk"
    truth = fx.start_s(fx.lines[d.line])
    assert abs(d.start_s - truth) <= d.uncertainty_s


def test_modules_async_and_interleaving_on_imx8() -> None:
    fx = load("imx8mm-2023.04-6.1-systemd")
    tb = fx.analyzer_tb()
    recs = parse_initcalls(fx.lines)
    calls = pair_initcalls(recs, fx.lines, tb)
    by_name = {c.function: c for c in calls}
    rootfs = by_name["do_populate_rootfs"]
    assert rootfs.async_cookie == 1 and rootfs.returned and rootfs.return_code is None
    # Its return comes after another initcall's call and return: still paired.
    assert rootfs.end_line is not None and rootfs.line is not None
    assert rootfs.end_line - rootfs.line > 2
    assert by_name["brcmfmac_module_init"].module == "brcmfmac"
    rows = module_breakdown(calls)
    assert [(r.module, r.initcalls) for r in rows] == [
        ("brcmfmac", 1),
        (None, 11),
        ("etnaviv", 1),
        ("imx_sdma", 1),
    ]
    assert rows[0].duration_s == pytest.approx(0.224583)
    assert rows[1].slowest == "ci_hdrc_imx_driver_init"
    (wait,) = async_waits(recs, fx.lines, tb)
    assert wait.duration_s == pytest.approx(1520e-6) and wait.pid == 1


def test_recursion_unreturned_and_orphans() -> None:
    calls, _ = _pair(
        _lines(
            "[    1.000000] calling  outer+0x0/0x10 @ 1",
            "[    1.000100] calling  outer+0x0/0x10 @ 1",  # the same symbol again, nested
            "[    1.000200] initcall outer+0x0/0x10 returned 0 after 100 usecs",
            "[    1.000300] initcall outer+0x0/0x10 returned -19 after 300 usecs",
            "[    1.500000] initcall lost_call+0x0/0x10 returned 0 after 2000 usecs",
            "[    2.000000] calling  hangs_here+0x0/0x10 @ 1",
        )
    )
    got = [(c.name, c.duration_s, c.return_code) for c in calls]
    assert got == [
        ("outer", pytest.approx(300e-6), -19),
        ("outer", pytest.approx(100e-6), 0),
        ("lost_call", pytest.approx(2e-3), 0),
        ("hangs_here", None, None),
    ]
    orphan = calls[2]
    assert orphan.line is None and orphan.start_s == pytest.approx(1.498)
    hang = calls[3]
    assert hang.returned is False and hang.end_line is None and hang.duration_s is None


def test_no_printk_stamps_fall_back_to_host_arrival() -> None:
    calls, tb = _pair(
        _lines("calling  foo+0x0/0x10 @ 1", "initcall foo+0x0/0x10 returned 0 after 5 usecs")
    )
    d = calls[0]
    assert d.source == "host" and d.start_s == pytest.approx(tb.host.to_ref(1_000_000_000))
