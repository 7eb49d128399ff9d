"""The chaos bench's own instruments: a small disk it mounts and fills, the simulated
board's control socket (found through the TMPDIR the bench gives the rig), the rig's
processes (found by a token in their environment) and the raw bytes left in results.

Everything here acts only on what the bench created: its mount point, its filler
files, processes carrying its token.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import time
from pathlib import Path

from simboard.client import SimControl

#: The environment variable that marks every process the bench's rig starts.
TOKEN_VAR = "BOOTRIG_CHAOS_BENCH"
FILLER = ".chaos-filler"


class SmallDisk:
    """A size-limited tmpfs the bench mounts for the results (root only), filled on
    demand (every block taken, as by another process) and freed again."""

    def __init__(self, mountpoint: Path, size_mb: int) -> None:
        self.mountpoint = mountpoint
        self.size_mb = size_mb
        self.mounted = False
        self.fillers: list[Path] = []

    def mount(self) -> None:
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size_mb}m,mode=0755", "chaos-disk",
             str(self.mountpoint)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        self.mounted = True

    def fill(self) -> int:
        """Take every free block; returns the bytes taken."""
        taken = 0
        for i in range(2):  # the second one picks up what was freed meanwhile
            path = self.mountpoint / f"{FILLER}{len(self.fillers)}-{i}"
            self.fillers.append(path)
            fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
            try:
                st = os.statvfs(self.mountpoint)
                free = st.f_bavail * st.f_frsize
                if free:
                    with contextlib.suppress(OSError):
                        os.posix_fallocate(fd, 0, free)
                        taken += free
                block = b"\0" * 4096
                while True:  # the blocks fallocate could not promise
                    try:
                        taken += os.write(fd, block)
                    except OSError as e:
                        if e.errno != errno.ENOSPC:
                            raise
                        break
            finally:
                os.close(fd)
        return taken

    def free(self) -> None:
        for path in self.fillers:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self.fillers.clear()

    def full(self) -> bool:
        return bool(self.fillers)

    def unmount(self) -> None:
        if not self.mounted:
            return
        self.free()
        p = subprocess.run(["umount", str(self.mountpoint)], capture_output=True)
        if p.returncode != 0:  # busy: detach it now, the kernel frees it when unused
            subprocess.run(["umount", "-l", str(self.mountpoint)], capture_output=True)
        self.mounted = False


def sim_control(rig_tmp: Path) -> SimControl | None:
    """The control socket of the simulated board now running (the rig starts it with the
    bench's TMPDIR, so its state folder is there); None while there is none."""
    for sock in sorted(rig_tmp.glob("bootrig-sim-*/control.sock"), key=_mtime, reverse=True):
        ctl = SimControl(sock, timeout=5)
        try:
            ctl.status()
        except OSError:
            continue
        return ctl
    return None


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def marked_processes(token: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose environment carries the token:
    the rig the bench started and everything it started in turn."""
    needle = f"{TOKEN_VAR}={token}".encode()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        if state != "Z":
            out.append((int(entry.name), cmd.strip()))
    return out


def wait_gone(token: str, within_s: float) -> list[tuple[int, str]]:
    """The marked processes still running after `within_s` (a board notices its rig is
    gone within half a second)."""
    deadline = time.monotonic() + within_s
    while (left := marked_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def end_processes(procs: list[tuple[int, str]]) -> None:
    """End marked processes the bench's rig left behind (counted first), by PID."""
    for pid, _ in procs:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


#: Raw bytes a soak must not leave behind: unconverted captures, temporary files of
#: atomic writes, spooled InfluxDB points not yet delivered.
def leftovers(results: Path) -> list[tuple[str, int]]:
    """(path relative to `results`, size) of every raw leftover under it."""
    out = []
    for p in sorted(results.rglob("*")):
        if not p.is_file() or p.is_symlink() or p.name == ".lock":  # empty lock files
            continue
        rel = p.relative_to(results)
        raw = p.name == "capture.bin" or p.name.endswith(".part") or p.name.endswith(".tmp")
        spooled = rel.parts[0] == ".influx-spool"
        if raw or spooled:
            out.append((str(rel), p.stat().st_size))
    return out


def copy_results(results: Path, dest: Path) -> None:
    """Keep the results off the small disk before it is unmounted."""
    if results.is_dir():
        shutil.copytree(results, dest, symlinks=True, dirs_exist_ok=True)
