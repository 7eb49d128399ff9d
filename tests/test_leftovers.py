"""Nothing a killed run started outlives it, and nothing it captured fills the disk:
sigrok-cli dies with the rig (the real sigrok-cli and its `demo` driver), and the raw
capture it left is converted by the next `rig run` or `rig analyze`."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts import rundir
from rig.artifacts.leftovers import LOCK, RunLock, is_locked, recover_folder
from rig.instruments.children import die_with_parent
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from tests.captures import read_sr
from tests.e2e import make_config

RIG = [sys.executable, "-m", "rig"]
CHANNELS = ["power", "bootm", "do_mount_root", "kernel_init", "ui_ready", "uart_tx", "D6", "D7"]


def _folder(tmp: Path, layout: bool = True) -> Path:
    folder = tmp / "20260101T000000Z-abcdef"
    folder.mkdir()
    run = {
        "schema": "bootrig.run/1",
        "run_id": folder.name,
        "board": "b",
        "power_on_ns": 5,
        "started_utc": "x",
    }
    if layout:
        run["capture"] = {"channels": CHANNELS, "samplerate_hz": 1_000_000}
    rundir.write_json(folder / rundir.RUN, run)
    data = np.zeros(5000, dtype=np.uint8)
    data[1000:] |= 1
    data.tofile(folder / rundir.CAPTURE_RAW)
    return folder


def test_leftover_is_converted_with_the_stated_layout(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    left = recover_folder(folder)
    assert left is not None and left.action == "converted"
    assert not (folder / rundir.CAPTURE_RAW).exists()
    cap = read_sr(folder / rundir.CAPTURE)
    assert list(cap.channels) == CHANNELS and cap.samples == 5000 and cap.samplerate == 1_000_000
    assert int(np.argmax(cap.data & 1)) == 1000
    assert json.loads((folder / rundir.RUN).read_text())["capture"]["recovered"] is True


def test_a_capture_in_progress_is_not_touched(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    lock = RunLock(folder)
    assert recover_folder(folder) is None and (folder / rundir.CAPTURE_RAW).exists()
    lock.release()
    assert recover_folder(folder) is not None


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _holding(path: Path) -> int:
    """This process's descriptors open on `path`: unlike the count of all of them, not
    moved by another thread opening or closing its own (a suite run saw 14 == 15)."""
    fds = Path("/proc/self/fd")
    out = 0
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone by now
            out += os.readlink(fd) == str(path)
    return out


def test_a_dropped_lock_frees_its_folder_and_descriptor(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    lock = RunLock(folder)
    assert is_locked(folder) and _holding(folder / LOCK) == 1
    del lock
    gc.collect()
    assert not is_locked(folder) and _holding(folder / LOCK) == 0


def test_a_cycle_that_returned_leaves_its_folder_unlocked(tmp_path: Path) -> None:
    # In one process (a soak, a Robot suite) each cycle's folder is free once it returns:
    # a held lock would keep a descriptor per cycle and mark its capture as in progress.
    cfg = load_config(make_config(tmp_path))
    before = _open_fds()
    with Instruments(cfg) as bench:
        folders = [run_cycle(cfg, bench).folder for _ in range(2)]
        gc.collect()
        assert [is_locked(f) for f in folders] == [False, False]
    assert _open_fds() <= before


def test_unreadable_leftover_is_removed_and_said(tmp_path: Path) -> None:
    folder = _folder(tmp_path, layout=False)
    left = recover_folder(folder)
    assert left is not None and left.action == "removed" and "no capture layout" in left.detail
    assert not (folder / rundir.CAPTURE_RAW).exists() and not (folder / rundir.CAPTURE).exists()


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().split(")")[-1].split()[1] == str(pid):
                out.append(int(stat.parent.name))
        except (OSError, IndexError):
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_sigkilled_run_leaves_no_sigrok_cli_and_its_capture_is_kept(tmp_path: Path) -> None:
    # The slow baseline board keeps the boot going; sigrok's demo driver is a real device.
    cfg = make_config(tmp_path, board="ecovec-baseline.toml", analyzer="sigrok", extra="")
    text = cfg.read_text().replace("debounce_us = 1000", 'debounce_us = 1000\ndevice = "demo"')
    cfg.write_text(text.replace("samplerate = 1_000_000", "samplerate = 100_000"))
    rig = subprocess.Popen(
        [*RIG, "run", "--config", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        raws: list[Path] = []
        while not raws:
            assert time.monotonic() < deadline, "no capture started"
            raws = [r for r in (tmp_path / "results").glob("*/capture.bin") if r.stat().st_size > 0]
            time.sleep(0.1)
        sigrok = [p for p in _children(rig.pid) if "sigrok" in Path(f"/proc/{p}/comm").read_text()]
        assert sigrok, "sigrok-cli is not the rig's child"
        os.kill(rig.pid, signal.SIGKILL)
        rig.wait()
        deadline = time.monotonic() + 5
        while any(map(_alive, sigrok)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(_alive, sigrok)), "sigrok-cli outlived a SIGKILLed rig"
    finally:
        if rig.poll() is None:
            rig.kill()
            rig.wait()
    folder = raws[0].parent
    assert json.loads((folder / rundir.RUN).read_text())["state"] == "running"
    p = subprocess.run([*RIG, "analyze", str(folder)], capture_output=True, text=True, timeout=120)
    said = " ".join(p.stderr.split())  # the terminal wraps long paths anywhere
    assert "raw capture left by an interrupted run converted" in said, p.stderr
    # Killed mid-cycle: the rig's failure, never a boot's result.
    assert p.returncode == 3, p.stderr
    report = json.loads((folder / rundir.REPORT).read_text())
    assert report["outcome"] == "rig_error", report["analysis"]
    assert "state 'running'" in report["analysis"]["rig_error"]
    assert not (folder / rundir.CAPTURE_RAW).exists()
    cap = read_sr(folder / rundir.CAPTURE)
    assert cap.samplerate == 100_000 and cap.samples > 0 and cap.channels[0] == "power"


def test_rig_run_recovers_leftovers_of_earlier_runs_and_soaks(tmp_path: Path) -> None:
    results = tmp_path / "results"
    soak = results / "soak-1"
    soak.mkdir(parents=True)
    a = _folder(results)
    b = _folder(soak)
    cfg = make_config(tmp_path)
    p = subprocess.run(
        [*RIG, "run", "--config", str(cfg), "--json"], capture_output=True, text=True, timeout=120
    )
    out = json.loads(p.stdout)
    assert sorted(out["recovered"]) == sorted(
        f"{f}: raw capture left by an interrupted run converted (5000 samples into capture.sr)"
        for f in (a, b)
    )
    assert (a / rundir.CAPTURE).exists() and (b / rundir.CAPTURE).exists()


_PDEATHSIG = (
    "import ctypes; libc = ctypes.CDLL(None); sig = ctypes.c_int(); "
    "libc.prctl(2, ctypes.byref(sig)); print(sig.value)"  # PR_GET_PDEATHSIG
)


@pytest.mark.parametrize(
    ("preexec", "expected"),
    [
        (die_with_parent, signal.SIGKILL),  # sigrok-cli, QEMU
        (functools.partial(die_with_parent, signal.SIGTERM), signal.SIGTERM),  # soak places
    ],
)
def test_die_with_parent_sets_the_signal(preexec: Callable[[], None], expected: int) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PDEATHSIG], preexec_fn=preexec, capture_output=True, check=True
    )
    assert int(out.stdout) == expected
