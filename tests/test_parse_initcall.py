from __future__ import annotations

import pytest

from rig.analysis.lines import Line, split_lines
from rig.analysis.parsers.initcall import AsyncWait, InitcallLine, parse_initcalls
from rig.model import Chunk
from tests.test_parse_replay import load


def _lines(*texts: str) -> list[Line]:
    return split_lines([Chunk(0, "\r\n".join(texts).encode() + b"\r\n")])


def _one(text: str) -> InitcallLine:
    (rec,) = parse_initcalls(_lines(text))
    assert isinstance(rec, InitcallLine)
    return rec


@pytest.mark.parametrize(
    "prefix", ["", "[    0.356022] ", "<7>[    0.356022] ", "[    0.356022][    T1] "]
)
def test_2631_call_and_return(prefix: str) -> None:
    call = _one(prefix + "calling  sh_mobile_lcdc_init+0x0/0x1c @ 1")
    assert (call.call, call.name, call.module, call.pid, call.cookie) == (
        True,
        "sh_mobile_lcdc_init",
        None,
        1,
        None,
    )
    ret = _one(prefix + "initcall sh_mobile_lcdc_init+0x0/0x1c returned 0 after 148437 usecs")
    assert (ret.call, ret.name, ret.ret, ret.usecs) == (False, "sh_mobile_lcdc_init", 0, 148437)


def test_module_suffix_negative_return_and_address() -> None:
    call = _one("calling  foo_init+0x0/0x1000 [foo] @ 123")
    assert (call.name, call.module, call.pid) == ("foo_init", "foo", 123)
    ret = _one("initcall foo_init+0x0/0x1000 [foo] returned -19 after 12 usecs")
    assert (ret.module, ret.ret, ret.usecs) == ("foo", -19, 12)
    assert _one("calling  0xc0012345 @ 1").name == "0xc0012345"
    assert _one("initcall snd_soc_init+0x0/0x8 [snd-soc-core] returned 0 after 1 usecs").module == (
        "snd-soc-core"
    )


def test_async_forms() -> None:
    old = _one("initcall 1_sd_probe_async+0x0/0x1c8 returned 0 after 245 usecs")
    assert (old.cookie, old.name, old.ret, old.usecs) == (1, "sd_probe_async", 0, 245)
    new = _one("initcall 12_do_populate_rootfs+0x0/0x1bc returned after 2652 usecs")
    assert (new.cookie, new.name, new.ret, new.usecs) == (12, "do_populate_rootfs", None, 2652)
    waits = parse_initcalls(_lines("async_waiting @ 1", "async_continuing @ 1 after 1520 usec"))
    assert waits == [AsyncWait(0, 1, True, None), AsyncWait(1, 1, False, 1520)]


def test_linux_612_lines_and_its_device_probes() -> None:
    """Lines of the QEMU target's 6.12 kernel with initcall_debug: the initcall lines have
    6.1's form; the driver core's `probe of <device> returned ...` lines, printed with
    them, are not initcalls."""
    recs = parse_initcalls(
        _lines(
            "[    0.354703] calling  pl061_gpio_driver_init+0x0/0x20 @ 1",
            "[    0.358020] pl061_gpio 9030000.pl061: PL061 GPIO chip registered",
            "[    0.358868] probe of 9030000.pl061 returned 0 after 3819 usecs",
            "[    0.359290] initcall pl061_gpio_driver_init+0x0/0x20 returned 0 after 4317 usecs",
            "[    0.353486] probe of platform-bus@c000000 returned 19 after 385 usecs",
        )
    )
    assert [(r.line, r.call, r.name, r.pid, r.ret, r.usecs) for r in recs] == [
        (0, True, "pl061_gpio_driver_init", 1, None, None),
        (3, False, "pl061_gpio_driver_init", None, 0, 4317),
    ]


def test_initstub_names_demangle() -> None:
    rec = _one("calling  __initstub__kmod_clk_imx8mm__270_638_imx8mm_clk_driver_init6+0x0/0x24 @ 1")
    assert rec.function == "imx8mm_clk_driver_init"
    assert _one(
        "calling  __initstub__kmod_pci_dma__250_136_pci_iommu_initrootfs+0x0/0x8 @ 1"
    ).function == ("pci_iommu_init")
    assert _one("calling  plain_init+0x0/0x8 @ 1").function == "plain_init"


def test_lookalikes_are_not_initcalls() -> None:
    assert (
        parse_initcalls(
            _lines(
                "calling the doctor @ home",
                "initcall foo returned nothing",
                "recalling  foo+0x0/0x1 @ 1",
                "calling foo+0x0/0x1 @ 1",  # one space: not the kernel's format
            )
        )
        == []
    )


def test_fixtures() -> None:
    recs = parse_initcalls(load("ecovec-2009.01-2.6.31").lines)
    calls = [r for r in recs if isinstance(r, InitcallLine) and r.call]
    rets = [r for r in recs if isinstance(r, InitcallLine) and not r.call]
    assert len(calls) == len(rets) == 36
    assert [r for r in recs if isinstance(r, AsyncWait)] == [
        AsyncWait(141, 1, True, None),
        AsyncWait(142, 1, False, 4),
    ]
    recs = parse_initcalls(load("imx8mm-2023.04-6.1-systemd").lines)
    mods = {r.module for r in recs if isinstance(r, InitcallLine)}
    assert mods == {None, "imx_sdma", "etnaviv", "brcmfmac"}
