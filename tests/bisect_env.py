"""What the bisect tests and bench/bisect_qemu.py share: the repository's state as `rig bisect`
must leave it, and the QEMU bisect (the repository firmware-hooks/qemu-arm64/bisect-repo.sh
makes, each commit built by bisect-build.sh)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e import REPO

HOOKS = REPO / "firmware-hooks" / "qemu-arm64"
BISECT_REPO = HOOKS / "bisect-repo.sh"
BISECT_BUILD = HOOKS / "bisect-build.sh"
#: The QEMU bisect's search: ext4_init_fs's own duration (initcall_debug, on the guest's
#: clock), which TCG's spread over the whole kernel stage (110-185 ms a boot on a shared
#: 2-core VM) does not reach; a few boots decide each step.
QEMU_BISECT_ARGS = [
    "--stage", "initcall:ext4_init_fs", "--set", 'qemu.kernel_args="initcall_debug loglevel=8"',
    "--end-boots", "6", "--batch", "5", "--max-boots", "10",
]  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return out.stdout.decode().strip()


def state(repo: Path) -> dict[str, Any]:
    """What `left as found` means: HEAD, branch, status, worktrees, no bisect files."""
    git_dir = repo / ".git"
    return {
        "head": _git(repo, "rev-parse", "HEAD"),
        "branch": _git(repo, "symbolic-ref", "HEAD"),
        "status": _git(repo, "status", "--porcelain", "--untracked-files=all"),
        "worktrees": _git(repo, "worktree", "list", "--porcelain").count("worktree "),
        "bisect_files": sorted(p.name for p in git_dir.iterdir() if p.name.startswith("BISECT")),
        "worktree_dir": (git_dir / "worktrees").exists() and any((git_dir / "worktrees").iterdir()),
    }


@dataclass(frozen=True)
class QemuBisectRepo:
    """bisect-repo.sh's folder and its manifest.json."""

    folder: Path
    manifest: dict[str, Any]

    @property
    def repo(self) -> Path:
        return self.folder / "repo"

    @property
    def culprit(self) -> int:
        """The index of the commit adding the largest delay (the 30 ms one)."""
        delays = [c["delay_us"] for c in self.manifest["commits"]]
        return delays.index(max(delays))

    @property
    def below(self) -> int:
        """The index of the commit adding a delay too small to detect (0.3 ms)."""
        return next(i for i, c in enumerate(self.manifest["commits"]) if 0 < c["delay_us"] < 1000)


def qemu_bisect_repo() -> QemuBisectRepo | str:
    """The made repository, or why there is none (`make bisect-repo` makes it)."""
    try:
        r = subprocess.run(
            ["bash", str(BISECT_REPO), "--dir"], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{BISECT_REPO} --dir: {e}"
    if r.returncode != 0:
        why = (r.stderr.strip() or r.stdout.strip())[-500:]
        return f"the bisect repository is not made (make bisect-repo): {why}"
    folder = Path(r.stdout.strip().splitlines()[-1])
    return QemuBisectRepo(folder, json.loads((folder / "manifest.json").read_text()))


def qemu_bisect_argv(made: QemuBisectRepo, config: Path, out: Path, *extra: str) -> list[str]:
    """`rig bisect` over the whole series, good = the first commit, bad = the last."""
    build = shlex.join(["bash", str(BISECT_BUILD), str(made.folder)]) + " {worktree} {commit} {out}"
    return [
        sys.executable, "-m", "rig", "bisect", "--repo", str(made.repo),
        "--good", made.manifest["good"], "--bad", made.manifest["bad"], "--build", build,
        "--config", str(config), "--set", 'qemu.images="{out}"', *QEMU_BISECT_ARGS,
        "--out", str(out), *extra,
    ]  # fmt: skip
