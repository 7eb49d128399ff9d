"""`rig soak --resume ID` without `--config`: the soak is found by id under the default
config's results_dir (or by its folder) and continues with the config file its journal
names, only while that file is unchanged; a changed or vanished config is refused with
a message naming it, unless `--config` is given explicitly. Real soaks, simulated board."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import InputError
from rig.model.soak import HeaderRecord, record_from_json
from rig.names import JOURNAL
from rig.soak.resume import original_config
from tests.conftest import REPO
from tests.e2e import make_config
from tests.soak_journal import read_journal

pytestmark = pytest.mark.slow


def soak(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "rig.soak", *args, "--json"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture
def lab(tmp_path: Path) -> tuple[Path, Path]:
    """A working folder whose default config (config/rig.toml) keeps its results in
    `tmp/results`, and a first soak of 2 cycles started there with that config."""
    (tmp_path / "config").mkdir()
    keys = {"boot_s": 1.0, "post_ui_s": 0.02}
    config = make_config(tmp_path / "config", off_hold_s=0.05, set_keys=keys)
    text = config.read_text().replace(str(tmp_path / "config" / "results"), "../results")
    config.write_text(text)
    first = soak(tmp_path, "--config", "config/rig.toml", "--cycles", "2", "--id", "night")
    assert first.returncode == 0, first.stdout + first.stderr
    assert Path(json.loads(first.stdout)["folder"]) == tmp_path / "results" / "night"
    return tmp_path, config


def cycles_run(proc: subprocess.CompletedProcess[str]) -> int:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return int(json.loads(proc.stdout)["cycles"]["run"])


def error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    return str(json.loads(proc.stdout)["error"])


def test_resume_by_id_or_folder_without_config(lab: tuple[Path, Path]) -> None:
    tmp, config = lab
    folder = tmp / "results" / "night"
    head = read_journal(folder / JOURNAL)[0][0]
    assert head["config"] == str(config.resolve()) and len(head["config_sha256"]) == 64
    assert len(head["board_profile_sha256"]) == 64

    # By id, from where the default config says soaks live; by folder or its journal,
    # from anywhere.
    assert cycles_run(soak(tmp, "--resume", "night", "--cycles", "3")) == 3
    assert cycles_run(soak(REPO, "--resume", str(folder), "--cycles", "4")) == 4
    assert cycles_run(soak(REPO, "--resume", str(folder / JOURNAL), "--cycles", "5")) == 5
    types = [r["type"] for r in read_journal(folder / JOURNAL)[0]]
    assert types.count("resume") == 3 and types.count("cycle") == 5

    # The repository's default config keeps its results elsewhere: the id is not there,
    # and the message says where it looked and what to give instead.
    msg = error(soak(REPO, "--resume", "night"))
    assert "no soak 'night'" in msg and "config/rig.toml" in msg and "--config" in msg


def test_changed_or_vanished_config_is_refused_unless_given(lab: tuple[Path, Path]) -> None:
    tmp, config = lab
    original = config.read_text()
    config.write_text(original.replace("off_hold_s = 0.05", "off_hold_s = 0.06"))
    msg = error(soak(tmp, "--resume", "night", "--cycles", "3"))
    assert str(config.resolve()) in msg and "has changed since the soak started" in msg
    assert f"--config {config.resolve()}" in msg
    # Given explicitly, it is the operator's choice: the soak goes on with it.
    assert cycles_run(soak(tmp, "--resume", "night", "--config", str(config), "--cycles", "3")) == 3

    moved = tmp / "config" / "renamed.toml"  # same folder: same results_dir
    shutil.move(config, moved)
    folder = str(tmp / "results" / "night")
    msg = error(soak(tmp, "--resume", folder, "--cycles", "4"))
    assert str(config.resolve()) in msg and "no longer exists" in msg
    assert cycles_run(soak(tmp, "--resume", "night", "--config", str(moved), "--cycles", "4")) == 4


def test_old_journal_checked_against_run_json(lab: tuple[Path, Path]) -> None:
    """A journal from before the header kept hashes: the config must still load to the
    settings the newest cycle's run.json recorded (comments may differ)."""
    tmp, config = lab
    folder = tmp / "results" / "night"
    head = read_journal(folder / JOURNAL)[0][0]
    for key in ("config_sha256", "board_profile_sha256"):
        del head[key]
    old = record_from_json(head)  # the header as the soak reads it
    assert isinstance(old, HeaderRecord)
    original = config.read_text()
    config.write_text(original + "\n# a comment changes no setting\n")
    assert original_config(folder, old, None, None).path == Path(head["config"])
    config.write_text(original.replace("off_hold_s = 0.05", "off_hold_s = 0.06"))
    with pytest.raises(InputError, match="has changed since the soak started"):
        original_config(folder, old, None, None)
