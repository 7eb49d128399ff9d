"""U-Boot's environment through the console (rig/instruments/uboot_console.py), on the
real QEMU target: Debian's U-Boot on QEMU's pflash, its bootdelay set through the flash
(`[qemu.uboot_env]`). QEMU 7.2's pflash takes U-Boot's buffered writes only in the first
4 KiB of a sector, so `saveenv` fails there (docs/qemu.md): the tests check that the rig
says so with U-Boot's words, journals the originals first and tries the restore."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rig.errors import InstrumentError
from rig.instruments.drivers import load_config
from rig.instruments.setup import Bench, Instruments
from rig.instruments.uboot_console import (
    JOURNAL,
    RESTORE_LOG,
    SET_LOG,
    UbootPrompt,
    changed_env,
    restore_journal,
)
from tests.qemu_env import qemu_config, uboot_only_images
from tests.waiting import signal_when, wait_until


def _bench(tmp: Path, bootdelay: str) -> Iterator[Bench]:
    cfg = qemu_config(tmp, uboot_only_images(tmp))
    rig = load_config(cfg, overrides=(f'qemu.uboot_env.bootdelay="{bootdelay}"',))
    with Instruments(rig) as bench:
        yield bench


def _console(path: Path) -> str:
    import base64

    lines = path.read_text().splitlines()
    return b"".join(base64.b64decode(json.loads(x)["data_b64"]) for x in lines).decode(
        errors="replace"
    )


@pytest.fixture
def bench1(tmp_path: Path) -> Iterator[Bench]:
    yield from _bench(tmp_path, "1")


def test_the_prompt_reads_the_environment(tmp_path: Path, bench1: Bench) -> None:
    prompt = UbootPrompt(bench1.power, bench1.console, tmp_path / "s.jsonl", 20.0)
    try:
        prompt.enter()
        assert prompt.printenv("bootdelay") == "1"
        assert prompt.printenv("verify") is None
        assert prompt.printenv(
            "bootcmd",
        ).startswith("mw.l 0x09030400 0x17")
    finally:
        prompt.leave()
    assert "Hit any key to stop autoboot:  1" in _console(tmp_path / "s.jsonl")


def test_a_failed_saveenv_is_said_and_the_originals_journaled(
    tmp_path: Path, bench1: Bench
) -> None:
    run = tmp_path / "run"
    changes = {"verify": "no", "bootdelay": "0"}
    with (
        pytest.raises(InstrumentError) as e,
        changed_env(bench1.power, bench1.console, run, changes),
    ):
        pytest.fail("the block ran without the change saved")
    # The set failed with U-Boot's own words, and so did the restore tried after it.
    assert "saveenv failed" in str(e.value) and "Failed" in str(e.value)
    assert str(e.value).startswith("restoring the environment") and "(after: " in str(e.value)
    doc = json.loads((run / JOURNAL).read_text())
    assert doc["originals"] == {"verify": None, "bootdelay": "1"}
    assert doc["state"] == "changing"  # not restored: a later restore_journal will
    typed = _console(run / SET_LOG)
    assert "setenv verify 'no'" in typed and "setenv bootdelay '0'" in typed
    restore = _console(run / RESTORE_LOG)
    assert "setenv verify\r" in restore and "setenv bootdelay '1'" in restore
    # The flash is QEMU's, reused by every power cycle: the next boot still counts 1.
    prompt = UbootPrompt(bench1.power, bench1.console, tmp_path / "after.jsonl", 20.0)
    try:
        prompt.enter()
        assert prompt.printenv("bootdelay") == "1" and prompt.printenv("verify") is None
    finally:
        prompt.leave()


def test_no_autoboot_prompt_is_said_and_nothing_changed(tmp_path: Path) -> None:
    for bench in _bench(tmp_path, "-2"):
        run = tmp_path / "run"
        with (
            pytest.raises(InstrumentError, match=r"no autoboot prompt.*bootdelay=-2"),
            changed_env(bench.power, bench.console, run, {"verify": "no"}, timeout_s=5),
        ):
            pass
        assert not (run / JOURNAL).exists()


def test_bootdelay_0_needs_the_early_key(tmp_path: Path) -> None:
    for bench in _bench(tmp_path, "0"):
        prompt = UbootPrompt(bench.power, bench.console, tmp_path / "a.jsonl", 20.0)
        try:
            with pytest.raises(InstrumentError, match=r"did not stop \(bootdelay=0\).*early_key"):
                prompt.enter()
        finally:
            prompt.leave()
        prompt = UbootPrompt(bench.power, bench.console, tmp_path / "b.jsonl", 20.0)
        try:
            prompt.enter(early_key=True)
            assert prompt.printenv("bootdelay") == "0"
        finally:
            prompt.leave()


def test_values_that_cannot_be_typed_are_refused_before_any_power_cycle(
    tmp_path: Path, bench1: Bench
) -> None:
    for bad, message in (
        ({"a b": "1"}, "not a variable name"),
        ({"x": "it's"}, "with '"),
        ({"bootdelay": "-2"}, "without checking for a key"),
    ):
        with (
            pytest.raises(InstrumentError, match=message),
            changed_env(bench1.power, bench1.console, tmp_path / "run", bad),
        ):
            pass
    assert not (tmp_path / "run").exists()


def test_restore_journal_puts_back_what_a_killed_rig_changed(tmp_path: Path, bench1: Bench) -> None:
    assert restore_journal(tmp_path / "nothing-here", bench1.power, bench1.console) is False
    run = tmp_path / "run"
    run.mkdir()
    doc = {"changes": {"verify": "no"}, "early_key": False, "originals": {"verify": None}}
    (run / JOURNAL).write_text(json.dumps({**doc, "state": "changed"}))
    # QEMU's saveenv fails (module docstring): the restore got as far as saveenv.
    with pytest.raises(InstrumentError, match="saveenv failed"):
        restore_journal(run, bench1.power, bench1.console)
    assert "setenv verify\r" in _console(run / RESTORE_LOG)
    (run / JOURNAL).write_text(json.dumps({**doc, "state": "restored"}))
    assert restore_journal(run, bench1.power, bench1.console) is False


_INTERRUPTED = """
import json, sys
from pathlib import Path
from rig.errors import InstrumentError
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.instruments.uboot_console import changed_env
cfg, run = Path(sys.argv[1]), Path(sys.argv[2])
rig = load_config(cfg, overrides=('qemu.uboot_env.bootdelay="1"',))
with Instruments(rig) as bench:
    try:
        with changed_env(bench.power, bench.console, run, {"verify": "no", "bootdelay": "3"}):
            pass
    except BaseException as e:
        print(json.dumps({"raised": type(e).__name__, "message": str(e)}))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_the_middle_restores(tmp_path: Path, signum: int) -> None:
    cfg = qemu_config(tmp_path, uboot_only_images(tmp_path))
    run = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED, str(cfg), str(run)],
        stdout=subprocess.PIPE,
        text=True,
    )

    def journaled() -> None:  # right before the first setenv: signal the rig there
        wait_until("the journal", lambda: (run / JOURNAL).exists(), 60)

    out, _ = signal_when(proc, journaled, signum, 120)
    result = json.loads(out.strip().splitlines()[-1])
    # Whether the signal came in the setenv or in the restore the failed saveenv began
    # (it is held there), the restore ran to its saveenv with the originals.
    # On QEMU the restore's saveenv fails too, which is what ends the rig, saying why the
    # restore ran: the signal (in the setenv), or the set's failed saveenv (the signal was
    # held in the restore).
    assert result["raised"] == "InstrumentError", result
    assert "(after: Ctrl-C or SIGTERM)" in result["message"] or (
        "(after: U-Boot: saveenv failed" in result["message"]
    ), result
    assert json.loads((run / JOURNAL).read_text())["originals"] == {
        "verify": None,
        "bootdelay": "1",
    }
    restore = _console(run / RESTORE_LOG)
    assert "setenv verify\r" in restore and "setenv bootdelay '1'" in restore
    assert "saveenv" in restore


def test_a_prompt_that_never_comes_is_said(tmp_path: Path, bench1: Bench) -> None:
    prompt = UbootPrompt(bench1.power, bench1.console, tmp_path / "p.jsonl", 20.0, "U-Boot> ")
    try:
        with pytest.raises(InstrumentError, match=r"bootdelay=1\).*prompt is not 'U-Boot> '"):
            prompt.enter()
    finally:
        prompt.leave()
