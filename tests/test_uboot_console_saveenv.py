"""The console path end to end on the QEMU target (docs/uboot-env.md): U-Boot built from
Debian's source to program its flash word by word (firmware-hooks/u-boot/
build-qemu-saveenv.sh), the machine's private environment flash attached writable
(`qemu.env_writable`). From `bootdelay=1`, `changed_env` stops the countdown, sets
`bootdelay=0` and saves it; the measured boot inside has no countdown; afterwards the
next boot counts down again. Debian's own build cannot save there
(tests/test_uboot_console.py)."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rig.config.load import RigConfig
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
from rig.measure.cycle import run_cycle
from tests.qemu_env import qemu_config, saveenv_uboot, uboot_only_images
from tests.waiting import signal_when

pytestmark = pytest.mark.slow

COUNT_1 = "Hit any key to stop autoboot:  1"
COUNT_0 = "Hit any key to stop autoboot:  0"


def _console(path: Path) -> str:
    chunks = [json.loads(x)["data_b64"] for x in path.read_text().splitlines()]
    return b"".join(base64.b64decode(c) for c in chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def uboot() -> Path:
    return saveenv_uboot()


def _rig(tmp: Path, uboot: Path) -> RigConfig:
    cfg = qemu_config(tmp, uboot_only_images(tmp))
    sets = ('qemu.uboot_env.bootdelay="1"', "qemu.env_writable=true", f'qemu.bios="{uboot}"')
    return load_config(cfg, overrides=sets)


@pytest.fixture
def rig(tmp_path: Path, uboot: Path) -> RigConfig:
    return _rig(tmp_path, uboot)


@pytest.fixture
def bench(rig: RigConfig) -> Iterator[Bench]:
    with Instruments(rig) as b:
        yield b


def _bootdelay(bench: Bench, log: Path) -> tuple[str | None, str]:
    """A new power cycle into the prompt: the saved bootdelay, and the console."""
    prompt = UbootPrompt(bench.power, bench.console, log, 20.0)
    try:
        prompt.enter()
        return prompt.printenv("bootdelay"), _console(log)
    finally:
        prompt.leave()


def test_bootdelay_0_is_saved_measured_and_restored(
    tmp_path: Path, rig: RigConfig, bench: Bench
) -> None:
    run = tmp_path / "env"
    with changed_env(bench.power, bench.console, run, {"bootdelay": "0"}) as originals:
        assert originals == {"bootdelay": "1"}
        assert json.loads((run / JOURNAL).read_text())["state"] == "changed"
        assert "saveenv" in _console(run / SET_LOG) and "OK" in _console(run / SET_LOG)
        cycle = run_cycle(rig, bench, run_id="with-change")
        measured = (cycle.folder / "console.log").read_text(errors="replace")
        # The measured boot is the saved environment's: no countdown, and it booted.
        assert COUNT_0 in measured and COUNT_1 not in measured
        assert "bootrig: marker ui_ready" in measured
    doc = json.loads((run / JOURNAL).read_text())
    assert doc["state"] == "restored" and doc["originals"] == {"bootdelay": "1"}
    assert "setenv bootdelay '1'" in _console(run / RESTORE_LOG)
    value, text = _bootdelay(bench, tmp_path / "after.jsonl")
    assert value == "1" and COUNT_1 in text


def test_restore_journal_puts_back_what_a_killed_rig_left_saved(
    tmp_path: Path, bench: Bench
) -> None:
    """What a rig killed inside the block leaves: the change saved on the board, the
    journal in state `changed` (written as changed_env writes it, before the change)."""
    run = tmp_path / "env"
    run.mkdir()
    doc = {"changes": {"bootdelay": "0"}, "early_key": False, "prompt": "=> "}
    prompt = UbootPrompt(bench.power, bench.console, run / SET_LOG, 20.0)
    try:
        prompt.enter()
        doc["originals"] = {"bootdelay": prompt.printenv("bootdelay")}
        (run / JOURNAL).write_text(json.dumps({**doc, "state": "changed"}))
        prompt.apply({"bootdelay": "0"})
    finally:
        prompt.leave()
    assert doc["originals"] == {"bootdelay": "1"}
    # Saved: the next power cycle has bootdelay=0 (so the restore needs the early key).
    assert _bootdelay_early(bench, tmp_path / "changed.jsonl") == "0"
    assert restore_journal(run, bench.power, bench.console) is True
    assert json.loads((run / JOURNAL).read_text())["state"] == "restored"
    value, text = _bootdelay(bench, tmp_path / "after.jsonl")
    assert value == "1" and COUNT_1 in text
    assert restore_journal(run, bench.power, bench.console) is False


def _bootdelay_early(bench: Bench, log: Path) -> str | None:
    prompt = UbootPrompt(bench.power, bench.console, log, 20.0)
    try:
        prompt.enter(early_key=True)
        return prompt.printenv("bootdelay")
    finally:
        prompt.leave()


_INTERRUPTED = """
import json, sys, time
from pathlib import Path
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.instruments.uboot_console import UbootPrompt, changed_env
cfg, run, uboot = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
sets = ('qemu.uboot_env.bootdelay="1"', "qemu.env_writable=true", f'qemu.bios="{uboot}"')
rig = load_config(cfg, overrides=sets)
out = {}
with Instruments(rig) as bench:
    try:
        with changed_env(bench.power, bench.console, run, {"bootdelay": "0"}):
            print("changed", flush=True)
            time.sleep(600)  # the block: interrupted here
    except KeyboardInterrupt as e:
        out["raised"] = type(e).__name__
    prompt = UbootPrompt(bench.power, bench.console, run / "after.jsonl", 20.0)
    try:
        prompt.enter()
        out["bootdelay"] = prompt.printenv("bootdelay")
    finally:
        prompt.leave()
print(json.dumps(out))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_the_block_restores_the_saved_environment(
    tmp_path: Path, uboot: Path, signum: int
) -> None:
    cfg = qemu_config(tmp_path, uboot_only_images(tmp_path))
    run = tmp_path / "env"
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED, str(cfg), str(run), str(uboot)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    stdout = proc.stdout

    def changed() -> None:
        assert stdout.readline().strip() == "changed"

    out, _ = signal_when(proc, changed, signum, 240)
    result = json.loads(out.strip().splitlines()[-1])
    # SIGTERM unwinds as changed_env's own KeyboardInterrupt (docs/uboot-env.md).
    raised = "KeyboardInterrupt" if signum == signal.SIGINT else "_Interrupted"
    assert result == {"raised": raised, "bootdelay": "1"}, result
    assert json.loads((run / JOURNAL).read_text())["state"] == "restored"
    assert COUNT_1 in _console(run / "after.jsonl")
