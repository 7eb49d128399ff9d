"""A board that starts again during its boot is `reset`, timed on its first boot only
(issue 22, item 2): each sign on its own, real recorded consoles (Debian's U-Boot and
Linux 6.1 under QEMU, tests/data/real) spliced into two boots as a reset leaves them,
and a capture whose rail falls and rises again. `rig analyze` runs as the real command.
The simulator's brown-out and a real U-Boot resetting itself: test_reset_boards.py."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from rig.analysis.lines import Line, split_lines
from rig.analysis.reset import console_reset, power_reset, printk_restart, second_banner
from rig.artifacts import rundir
from rig.model import Chunk, MarkerScan
from tests.captures import make_capture
from tests.e2e import rig_analyze_json

DATA = Path(__file__).resolve().parent / "data"


def lines_of(*texts: str) -> list[Line]:
    return split_lines([Chunk(0, "".join(f"{t}\r\n" for t in texts).encode())])


KERNEL = ("[    0.000000] Booting Linux", "[    0.210000] bootrig: marker do_mount_root")


@pytest.mark.parametrize(
    ("texts", "at"),
    [
        (("U-Boot SPL 2023.04 (Apr 03 2023)", "DRAM: 2 GiB", "U-Boot 2023.04 (Apr 03 2023)"), None),
        (("U-Boot TPL 2023.04", "U-Boot SPL 2023.04", "U-Boot 2023.04", *KERNEL), None),
        (("U-Boot 2023.01 (Jun 22 2026)", "Hit any key", "U-Boot 2023.01 (Jun 22 2026)"), 2),
        (("U-Boot SPL 2023.04", "U-Boot 2023.04", "U-Boot SPL 2023.04"), 2),
        (("U-Boot 2023.01", *KERNEL, "U-Boot SPL 2023.01"), 3),
        (("U-Boot 2023.01", *KERNEL, "\x1b[2J\x00U-Boot 2023.01"), 3),  # escapes, a NUL
        (("barebox 2023.01.0 #1", "barebox 2023.01.0 #1"), 1),
        # Not a banner: the text anywhere else in a line.
        (("U-Boot 2023.01", *KERNEL, "[    0.3] Machine model: U-Boot 2023.01 board"), None),
        (("U-Boot 2023.01", "=> version", "U-Boot 2023.01 (Jun 22 2026)"), 2),
    ],
)
def test_a_second_banner_starts_a_boot_over_and_a_chain_does_not(
    texts: tuple[str, ...], at: int | None
) -> None:
    assert second_banner(lines_of(*texts)) == at


def test_the_blank_lines_a_bootloader_starts_with_are_the_new_boots() -> None:
    # U-Boot prints two newlines before its banner: the old boot's last line says so.
    got = console_reset(lines_of("U-Boot 2023.01", "resetting ...", "", "", "U-Boot 2023.01"))
    assert got is not None and (got.line, got.signs) == (2, (("bootloader_banner", 4),))


def test_a_restarted_printk_clock_is_two_lines_below_the_highest_stamp() -> None:
    boot = ["[    0.100000] a", "[    0.200000] b", "[    0.300000] c"]
    # One line out of order is line noise turning a digit, not a new kernel.
    assert printk_restart(lines_of(*boot, "[    0.030000] garbled", "[    0.310000] d")) is None
    # Lines logged on two CPUs come out microseconds out of order.
    assert printk_restart(lines_of(*boot, "[    0.299000] e", "[    0.301000] f")) is None
    got = printk_restart(lines_of(*boot, "U-Boot 2023.01", "[    0.000000] x", "[    0.000000] y"))
    assert got == (4, 0.3, 0.0)
    assert printk_restart(lines_of(*boot)) is None


def test_a_second_power_up_is_a_reset_at_the_fall_before_it() -> None:
    def scan(up: tuple[int, ...], down: tuple[int, ...]) -> MarkerScan:
        return MarkerScan(1_000_000, 10**6, ("power",), up, down)

    assert power_reset(scan((1000, 350_000), (300_000,))) == 300_000
    assert power_reset(scan((1000,), (900_000,))) is None  # the rig's own power-off
    assert power_reset(scan((1000,), ())) is None
    no_rail = MarkerScan(1_000_000, 10, ("bootm",), (0,), (), power_channel=False)
    assert power_reset(no_rail) is None


@pytest.mark.parametrize(
    "folder",
    sorted(p for p in (DATA / "real").iterdir() if (p / "console.jsonl").exists()),
    ids=lambda p: p.name,
)
def test_no_recorded_boot_shows_a_reset(folder: Path) -> None:
    assert console_reset(split_lines(rundir.read_console(folder))) is None


@pytest.mark.parametrize("log", sorted((DATA / "consoles").glob("*.log")), ids=lambda p: p.name)
def test_no_recorded_console_shows_a_reset(log: Path) -> None:
    # imx8mm: SPL then U-Boot proper, one boot; stm32mp1: a vendor version suffix.
    assert console_reset(split_lines([Chunk(0, log.read_bytes())])) is None


def sliced(chunks: Sequence[Chunk], start: int) -> list[Chunk]:
    """The reads of the console stream from byte `start` on."""
    out, done = [], 0
    for c in chunks:
        if done + len(c.data) > start:
            out.append(Chunk(c.t_ns, c.data[max(0, start - done) :]))
        done += len(c.data)
    return out


def spliced(tmp: Path, cut: str, again_from: str | None) -> Path:
    """console-1 up to the line holding `cut` (the board reset there), then console-2
    from the line holding `again_from` (None: its start), 50 ms after the cut."""
    first, second = DATA / "real" / "console-1", DATA / "real" / "console-2"
    a = rundir.read_console(first)
    end = next(ln.offset for ln in split_lines(a) if cut in ln.text)
    head = [c for c in a if sum(len(x.data) for x in a[: a.index(c)]) < end]
    head[-1] = Chunk(head[-1].t_ns, head[-1].data[: end - sum(len(x.data) for x in head[:-1])])
    b = rundir.read_console(second)
    start = next((ln.offset for ln in split_lines(b) if again_from and again_from in ln.text), 0)
    tail = sliced(b, start)
    shift = head[-1].t_ns + 50_000_000 - tail[0].t_ns
    folder = tmp / "two-boots"
    folder.mkdir()
    shutil.copy(first / "run.json", folder / "run.json")
    with (folder / "console.jsonl").open("w") as f:
        for c in [*head, *(Chunk(c.t_ns + shift, c.data) for c in tail)]:
            f.write(json.dumps({"t_ns": c.t_ns, "data_b64": base64.b64encode(c.data).decode()}))
            f.write("\n")
    return folder


@pytest.mark.parametrize(
    ("again_from", "signs"),
    [
        (None, ["bootloader_banner", "printk_restart"]),  # power cycled: U-Boot again
        ("Booting Linux", ["printk_restart"]),  # a bootloader that prints no banner
    ],
)
def test_two_real_boots_in_one_console_are_a_reset_not_one_slow_boot(
    tmp_path: Path, again_from: str | None, signs: list[str]
) -> None:
    # Reset in the kernel, before its root mount; the second boot runs to the UI. Timed
    # as one boot (before the fix) this was `ok` with a kernel over 1 s long.
    folder = spliced(tmp_path, "bootrig: marker do_mount_root", again_from)
    code, report = rig_analyze_json(folder)
    assert (code, report["outcome"]) == (1, "reset"), report["analysis"]["notes"]
    reset = report["reset"]
    assert [s["sign"] for s in reset["signs"]] == signs
    assert reset["stage"] == "kernel" and reset["bound"] == "upper"
    # The reset lies between the old boot's last line and the new boot's first.
    assert reset["after_s"] < reset["t_s"] < reset["after_s"] + 0.2
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["bootloader"]["duration_s"] is not None
    assert all(stages[n]["end_s"] is None for n in ("kernel", "rootfs_mount", "application"))
    assert report["power_to_ui_s"] is None
    assert {e["name"] for e in report["events"]} >= {"bootm"}
    assert not {"kernel_init", "ui_ready"} & {e["name"] for e in report["events"]}
    assert report["console"]["lines"] > len(report["console_times"]) > 20
    # The first boot's share is timed as that boot recorded alone is.
    shutil.copytree(DATA / "real" / "console-1", tmp_path / "alone")
    _, alone = rig_analyze_json(tmp_path / "alone")
    ours, whole = stages["bootloader"], alone["stages"][0]
    assert abs(ours["end_s"] - whole["end_s"]) <= ours["uncertainty_s"] + whole["uncertainty_s"]


def test_a_capture_whose_rail_falls_and_rises_again_is_a_reset(tmp_path: Path) -> None:
    folder = tmp_path / "bare"
    folder.mkdir()
    # The first boot gets to bootm; the rail falls at 0.3 s and is back 50 ms later; the
    # second boot reaches its UI. Before the fix: `hang_in_kernel`, a hang that never was.
    make_capture(
        folder / "capture.sr",
        900_000,
        {
            "power": [1000, 301_000, 351_000],
            "bootm": [101_000, 301_000, 451_000],
            "do_mount_root": [601_000],
            "kernel_init": [701_000],
            "ui_ready": [801_000],
        },
    )
    code, report = rig_analyze_json(folder)
    assert (code, report["outcome"]) == (1, "reset")
    reset = report["reset"]
    assert [s["sign"] for s in reset["signs"]] == ["power_edge"]
    assert reset["t_s"] == pytest.approx(0.3, abs=1e-6) and reset["bound"] is None
    assert reset["source"] == "gpio" and reset["stage"] == "kernel"
    assert report["capture"]["power_ups"] == 2
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["bootloader"]["end_s"] == pytest.approx(0.1, abs=1e-6)
    assert stages["kernel"]["end_s"] is None and report["power_to_ui_s"] is None
