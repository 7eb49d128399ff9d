"""The QEMU instruments against real QEMU and real U-Boot (Debian's u-boot-qemu): power
through QMP, the PL011 pty console, the PL061 trace as a capture. The board here is
U-Boot alone, its environment raising every marker (tests/qemu_env.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from rig.errors import ArtifactError, ConfigError
from rig.instruments.drivers import load_config
from rig.instruments.qemu.reference import reference_edges
from rig.instruments.qemu.trace import parse_trace
from rig.instruments.qemu.ubootenv import env_image, parse_env_text
from tests.qemu_env import RIG, UBOOT_ONLY_ENV, qemu_config, rig_run, rig_soak, uboot_only_images
from tests.waiting import console_so_far, wait_until

MARKERS = ("bootm", "do_mount_root", "kernel_init", "ui_ready")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"


def _qemu_child(pid: int) -> int | None:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().split(")")[-1].split()
            if fields[1] == str(pid) and "qemu" in (stat.parent / "comm").read_text():
                return int(stat.parent.name)
        except OSError:
            continue
    return None


def test_env_image_is_what_mkenvimage_writes(tmp_path: Path) -> None:
    assert shutil.which("mkenvimage"), "u-boot-tools is installed by `make qemu-images`"
    text = tmp_path / "env.txt"
    text.write_text(UBOOT_ONLY_ENV.replace("\\\n", ""))
    subprocess.run(
        ["mkenvimage", "-s", "0x40000", "-o", str(tmp_path / "env.bin"), str(text)], check=True
    )
    env = parse_env_text(text.read_text(), str(text))
    assert env_image(env) == (tmp_path / "env.bin").read_bytes()


def test_trace_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "t.log"
    bad.write_text(
        "1@1.000001:pl061_set_output /m/d[6] setting output 0 to 1\n1@x:pl061_set_output garbage\n"
    )
    with pytest.raises(ArtifactError, match=r"t\.log:2: not a pl061_set_output line"):
        parse_trace(bad)
    with pytest.raises(ArtifactError, match="No such file"):
        parse_trace(tmp_path / "missing.log")


def test_config_errors(tmp_path: Path) -> None:
    images = uboot_only_images(tmp_path)
    cfg = qemu_config(tmp_path, images)
    text = cfg.read_text()
    cases = {
        "\nbootm = 0": (
            "\nbootm = 3",
            "qemu.gpio.bootm': expected a PL061 line",
        ),
        "ui_ready = 4": ("ui_ready = 0", "two markers share a PL061 line"),
        "[qemu]\n": ("[qemux]\n", "unknown key 'qemux'"),
        "debounce_us = 0 ": (
            'debounce_us = 0\n[analyzer.channels]\npower = "D0"\n#',
            "fixed channels",
        ),
    }
    for old, (new, message) in cases.items():
        assert old in text, old
        bad = tmp_path / "bad.toml"
        bad.write_text(text.replace(old, new, 1))
        with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
            load_config(bad)
    # No [qemu] table at all, but the drivers ask for one.
    bad.write_text(text[: text.index("[qemu]")] + text[text.index("[power]") :])
    with pytest.raises(ConfigError, match=r"'power.driver': 'qemu' needs a \[qemu\] table"):
        load_config(bad)


def test_missing_images_say_what_torig_run(tmp_path: Path) -> None:
    cfg = qemu_config(tmp_path, tmp_path / "nowhere")
    code, out = rig_run(cfg)
    assert code != 0 and "make qemu-images" in out["error"]


def test_measured_boot_matches_the_traced_edges(tmp_path: Path) -> None:
    images = uboot_only_images(tmp_path)
    code, out = rig_run(qemu_config(tmp_path, images))
    report, folder = out["report"], Path(out["folder"])
    assert code == 0, report["outcome"]
    assert report["time_base"]["clock"].startswith("QEMU host wall clock")
    truth = reference_edges(folder)
    assert set(truth) == set(MARKERS)
    events = {e["name"]: e for e in report["events"] if e["source"] == "gpio"}
    for marker in MARKERS:
        # The capture is sampled at 1 MHz from the same µs stamps: one sample either way.
        assert events[marker]["t_s"] == pytest.approx(truth[marker], abs=1.5e-6), marker
    # The environment's sleeps are the stage lengths U-Boot really spent: at least the
    # sleep less U-Boot's 1 ms timer tick, and more by what TCG runs between the edges (an
    # echo, a write), which a loaded host delays; never as much as the next longer sleep.
    stages = {s["name"]: s for s in report["stages"]}
    for stage, sleep_s in (("kernel", 0.3), ("rootfs_mount", 0.1)):
        assert sleep_s - 1e-3 <= stages[stage]["duration_s"] < sleep_s + 0.09, stage
    run = json.loads((folder / "run.json").read_text())
    assert run["instruments"]["qemu"] == {"trace": "qemu-trace.log", "info": "qemu.json"}
    pid = json.loads((folder / "qemu.json").read_text())["pid"]
    assert not _alive(pid), "QEMU outlived the rig"


def test_console_only_boot_keeps_the_reference(tmp_path: Path) -> None:
    images = uboot_only_images(tmp_path)
    code, out = rig_run(qemu_config(tmp_path, images, analyzer="none"))
    report, folder = out["report"], Path(out["folder"])
    assert code == 0, report["outcome"]
    assert report["time_base"]["reference"] == "host"
    assert not (folder / "capture.sr").exists()
    truth = reference_edges(folder)
    events = {e["name"]: e for e in report["events"]}
    for marker in MARKERS:
        # The console-only boundary is a host arrival time less the hook's print path: the
        # edge lies within what the rig states (the arrival band, the host's read
        # lateness, the hook bound), which on this board puts it 10 ms (ui_ready: 20 ms)
        # from the middle; a fixed 20 ms bound sat on that edge.
        err = events[marker]["t_s"] - truth[marker]
        assert abs(err) <= events[marker]["uncertainty_s"], (marker, err, events[marker])


def test_every_cycle_is_a_fresh_qemu_and_the_console_follows(tmp_path: Path) -> None:
    images = uboot_only_images(tmp_path)
    folders = rig_soak(qemu_config(tmp_path, images), 2, tmp_path / "results")
    assert len(folders) == 2
    infos = [json.loads((f / "qemu.json").read_text()) for f in folders]
    assert len({i["pid"] for i in infos}) == 2
    for f in folders:
        assert json.loads((f / "report.json").read_text())["outcome"] == "ok"


def test_qemu_dies_with_a_killed_rig(tmp_path: Path) -> None:
    env = UBOOT_ONLY_ENV.replace("echo bootrig: marker ui_ready", "sleep 30")
    images = uboot_only_images(tmp_path, env)
    rig = subprocess.Popen(
        [*RIG, "run", "--config", str(qemu_config(tmp_path, images))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        child = wait_until("the rig to start QEMU", lambda: _qemu_child(rig.pid), 60)
        # Booting: U-Boot has run the environment up to its final sleep.
        wait_until(
            "U-Boot's 'Starting application' on the console",
            lambda: "Starting application" in console_so_far(tmp_path / "results"),
            60,
        )
        assert _alive(child)
        os.kill(rig.pid, signal.SIGKILL)
        rig.wait()
        wait_until("QEMU to end with its SIGKILLed rig", lambda: not _alive(child), 30)
    finally:
        if rig.poll() is None:
            rig.kill()
            rig.wait()


def test_record_keeps_raw_artifacts_and_reference_without_machine_paths(tmp_path: Path) -> None:
    images = uboot_only_images(tmp_path)
    cfg = qemu_config(tmp_path, images)
    out = tmp_path / "recorded"
    p = subprocess.run(
        [*RIG, "qemu", "record", "--config", str(cfg), "--out", str(out), "--boots", "1",
         "--console-only", "--name", "t", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    folder = out / "t-1"
    assert sorted(f.name for f in folder.iterdir()) == [
        "console.jsonl", "console.log", "qemu-trace.log", "qemu.json", "reference.json", "run.json",
    ]  # fmt: skip
    ref = json.loads((folder / "reference.json").read_text())
    assert ref["edges_s"] == reference_edges(folder) and set(ref["edges_s"]) == set(MARKERS)
    for f in ("qemu.json", "run.json"):
        text = (folder / f).read_text()
        assert str(tmp_path) not in text and str(images) not in text, f
