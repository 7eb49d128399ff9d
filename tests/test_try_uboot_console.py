"""`rig try --uboot-env console` on the QEMU target (docs/try.md, "U-Boot variables
through the console"): the `uboot_bootdelay` advice of a boot with `bootdelay=1` is
tried by setting `bootdelay=0` at U-Boot's prompt and saving it (U-Boot that can save on
QEMU's flash, tests/qemu_env.saveenv_uboot) around each block of boots with it, the
original put back after each; it gains about the second the advice predicted with the
boot's outcome kept. Ctrl-C or SIGTERM in the middle of the try restores the
environment. Where the knob goes is checked without boots too."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rig.instruments.drivers import load_config
from rig.instruments.uboot_console import JOURNAL, RESTORE_LOG, SET_LOG
from rig.model.knob import uboot_env
from rig.trial.knobs import Untryable, console_changes
from tests.e2e import REPO, make_config
from tests.qemu_env import qemu_config, rig_run, saveenv_uboot, uboot_only_images
from tests.waiting import signal_when, wait_until

COUNT_1 = "Hit any key to stop autoboot:  1"
COUNT_0 = "Hit any key to stop autoboot:  0"


def _console(path: Path) -> str:
    chunks = [json.loads(x)["data_b64"] for x in path.read_text().splitlines()]
    return b"".join(base64.b64decode(c) for c in chunks).decode(errors="replace")


def _try_args(source: str, cfg: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "rig", "try", source, "--config", str(cfg), "--json",
            "--advice", "uboot_bootdelay", "--uboot-env", "console", *more]  # fmt: skip


@pytest.fixture
def board(tmp_path: Path) -> tuple[Path, str]:
    """A QEMU config booting U-Boot that can save, from bootdelay=1; a boot's folder
    with the `uboot_bootdelay` advice."""
    cfg = qemu_config(tmp_path, uboot_only_images(tmp_path))
    text = cfg.read_text().replace("[qemu]\n", f'[qemu]\nbios = "{saveenv_uboot()}"\n', 1)
    cfg.write_text(text + '\n[qemu.uboot_env]\nbootdelay = "1"\n')
    code, out = rig_run(cfg)
    assert code == 0 and out["report"]["outcome"] == "ok", out
    (delay,) = [a for a in out["report"]["advisories"] if a["rule"] == "uboot_bootdelay"]
    assert delay["knob"]["value"] == "0" and delay["gain_s"] == pytest.approx(1.0, abs=0.1)
    return cfg, out["folder"]


@pytest.mark.slow
def test_bootdelay_0_through_the_console_gains_its_second(
    tmp_path: Path, board: tuple[Path, str]
) -> None:
    cfg, source = board
    # What a try killed inside a block left: the change saved, the journal `changed`.
    left = tmp_path / "results" / "try-killed" / "uboot-env-uboot_bootdelay-1"
    left.mkdir(parents=True)
    (left / JOURNAL).write_text(json.dumps({
        "changes": {"bootdelay": "0"}, "early_key": False, "prompt": "=> ",
        "originals": {"bootdelay": "1"}, "state": "changed",
    }))  # fmt: skip
    p = subprocess.run(
        _try_args(source, cfg, "--pairs", "4", "--warmup", "0", "--order", "abba"),
        capture_output=True, text=True, timeout=1500, cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert p.returncode == 0, doc
    # Put back before the board was touched (on QEMU a formality: each machine's flash is
    # its own, the killed try's went with it).
    assert doc["restored"] == [f"restored the U-Boot environment {left} left changed"]
    assert json.loads((left / JOURNAL).read_text())["state"] == "restored"
    assert "setenv bootdelay '1'" in _console(left / RESTORE_LOG)
    (trial,) = doc["trials"]
    assert trial["sets"] == []  # nothing in the config: the board's saved environment
    # abba with 4 pairs: on | off off | on on | off off | on: three blocks with the change.
    blocks = trial["uboot_console"]["blocks"]
    assert trial["uboot_console"]["changes"] == {"bootdelay": "0"}
    assert blocks == [f"uboot-env-uboot_bootdelay-{i}" for i in (1, 2, 3)]
    folder = Path(doc["folder"])
    for name in blocks:
        journal = json.loads((folder / name / JOURNAL).read_text())
        assert journal["state"] == "restored" and journal["originals"] == {"bootdelay": "1"}
        assert "OK" in _console(folder / name / SET_LOG).split("saveenv", 1)[1]
        assert "setenv bootdelay '1'" in _console(folder / name / RESTORE_LOG)
    boots = Path(trial["folder"])
    for boot in sorted(p for p in boots.iterdir() if p.is_dir()):
        log = (boot / "console.log").read_text(errors="replace")
        on = boot.name.startswith("on-")
        assert (COUNT_0 if on else COUNT_1) in log, boot.name
        assert (COUNT_1 if on else COUNT_0) not in log, boot.name
    m = trial["measured"]
    assert m["outcome_kept"] and m["outcomes_with"] == {"ok": 4}, m
    # One second of U-Boot's timer; TCG on a loaded host stretches what is around it.
    assert m["verdict"] == "gained" and 0.7 < m["gain_s"] < 1.5, m


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_try_restores_the_environment(
    tmp_path: Path, board: tuple[Path, str], signum: int
) -> None:
    cfg, source = board
    proc = subprocess.Popen(
        _try_args(source, cfg, "--pairs", "4", "--warmup", "0", "--order", "abab"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    results = tmp_path / "results"

    def saved() -> None:  # the change is saved on the board (the first block's boot)
        wait_until(
            "a block with the change saved",
            lambda: any(
                json.loads(j.read_text()).get("state") == "changed"
                for j in results.glob(f"try-*/uboot-env-*/{JOURNAL}")
            ),
            600,
        )

    out, err = signal_when(proc, saved, signum, 300)
    assert "Traceback" not in err, err
    assert proc.returncode == 128 + signum, (proc.returncode, err[-2000:])
    doc = json.loads(out)
    assert doc["interrupted"] is True
    (journal,) = results.glob(f"try-*/uboot-env-*/{JOURNAL}")
    assert json.loads(journal.read_text())["state"] == "restored"
    restore = _console(journal.parent / RESTORE_LOG)
    assert "setenv bootdelay '1'" in restore and "OK" in restore.split("saveenv", 1)[1]


def test_where_a_u_boot_variable_goes(tmp_path: Path) -> None:
    knob = uboot_env("bootdelay", "0", "bootdelay=0")
    qemu = load_config(qemu_config(tmp_path, uboot_only_images(tmp_path)))
    assert console_changes(knob, qemu, "auto") is None  # [qemu.uboot_env] carries it
    assert console_changes(knob, qemu, "config") is None
    assert console_changes(knob, qemu, "console") == {"bootdelay": "0"}
    (tmp_path / "sim").mkdir()
    sim = load_config(make_config(tmp_path / "sim"))
    assert console_changes(knob, sim, "auto") is None
    with pytest.raises(Untryable, match="no U-Boot prompt"):
        console_changes(knob, sim, "console")
