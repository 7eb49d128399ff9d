"""`rig bisect` on the real QEMU target (issue 24 item 1): the repository bisect-repo.sh makes
from linux-source-6.1 with our hooks and eight small commits (one adds 30 ms to
ext4_init_fs, an earlier one 0.3 ms to virtio_mmio_init, below what the boots detect),
each commit's kernel built incrementally by bisect-build.sh and booted under QEMU through
the CLI, searched by ext4_init_fs's own duration (`--stage initcall:ext4_init_fs`: the
kernel's clock, which TCG's spread over the whole kernel stage does not reach). `make
pytest` makes the repository first (`make bisect-repo`) and requires it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.bisect_env import QemuBisectRepo, qemu_bisect_argv, qemu_bisect_repo, state
from tests.e2e import REPO
from tests.qemu_env import qemu_config
from tests.require import require

#: A cold build of this kernel compiles about 1500 files; a step compiles what its commit
#: and the version stamp touch.
MAX_COMPILED = 100


@pytest.fixture(scope="module")
def made() -> QemuBisectRepo:
    found = qemu_bisect_repo()
    if isinstance(found, str):
        require("qemu", found)
    return found


def test_bisect_names_the_30_ms_commit(tmp_path: Path, made: QemuBisectRepo) -> None:
    commits = [c["commit"] for c in made.manifest["commits"]]
    culprit = made.culprit
    assert made.manifest["commits"][culprit]["delay_us"] == 30_000
    before = state(made.repo)
    out = tmp_path / "bisect"
    argv = qemu_bisect_argv(made, qemu_config(tmp_path), out, "--json")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=3600, cwd=REPO)
    assert proc.stdout, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, doc
    assert doc["status"] == "found"
    assert doc["first_bad"] == {
        "commit": commits[culprit],
        "subject": made.manifest["commits"][culprit]["subject"],
    }
    assert doc["stage"] == "initcall:ext4_init_fs" and doc["commits"] == len(commits) - 1
    # The plan stated a detectable change far below the 30 ms.
    assert doc["ends"]["differ"] and doc["ends"]["detectable_s"] < 0.01
    d = doc["difference"]  # mdelay(30) on the kernel's clock, within a few ms
    assert 0.025 < d["difference_s"] < 0.040 and d["ci_high_s"] > d["ci_low_s"] > 0.02

    # The per-step table: every commit tested has its boots, median, verdict and p; before
    # the culprit "good" (the 0.3 ms commit among them), from it on "bad".
    steps = {s["index"]: s for s in doc["steps"]}
    assert steps[0]["role"] == "good_end" and steps[len(commits) - 1]["role"] == "bad_end"
    tested = sorted(i for i, s in steps.items() if s["role"] == "step")
    assert tested and len(tested) <= doc["budget"]["steps"]
    assert culprit in tested and (culprit == 1 or steps[culprit - 1]["verdict"] == "good")
    for i in tested:
        s = steps[i]
        assert s["commit"] == commits[i] and s["build"] == "ok"
        assert s["verdict"] == ("bad" if i >= culprit else "good"), s
        assert s["boots"] >= 5 and s["median_s"] > 0 and s["p"] < doc["budget"]["per_test"]
        # QEMU: both ends boot again beside each step, after each of its boots
        own = sum(f["run"].startswith("boot-") for f in s["failed"])
        refs = sum(s["reference_boots"].values()) + len(s["failed"]) - own
        assert refs == 2 * (s["boots"] + own)
    # A commit holding the 0.3 ms delay (not the 30 ms) was judged like the good end.
    assert any(made.below <= i < culprit for i in tested)

    # Each build after the first was incremental, in the shared object tree.
    for i in (*tested, len(commits) - 1):
        log = (out / "steps" / f"{i:03d}-{commits[i][:10]}" / "build.log").read_text()
        compiled = len(re.findall(r"^\s+CC\s", log, re.M))
        assert 0 < compiled < MAX_COMPILED, (i, compiled)
    assert json.loads((out / "bisect.json").read_text())["steps"] == doc["steps"]
    assert commits[culprit][:12] in (out / "bisect.html").read_text()
    assert state(made.repo) == before
    assert not (out / "worktree").exists()
