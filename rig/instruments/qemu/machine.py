"""One emulated board: QEMU started paused (unpowered), resumed (power on), quit (power
off); a fresh process per power cycle, so every boot is cold. It dies with the rig."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from rig.errors import ConfigError, InstrumentError
from rig.instruments.children import die_with_parent, stop_child
from rig.instruments.qemu.qmp import QmpClient, QmpEvent
from rig.instruments.qemu.settings import QemuConfig
from rig.instruments.qemu.ubootenv import parse_env_text, write_flash

TRACE_EVENT = "pl061_set_output"


def boot_env(cfg: QemuConfig, images: Path) -> dict[str, str]:
    """The target's U-Boot environment: the image's text, the config's overrides, and
    `kernel_args` appended to bootargs."""
    where = images / "u-boot-env.txt"
    try:
        env = parse_env_text(where.read_text(encoding="utf-8"), str(where))
    except (OSError, UnicodeDecodeError) as e:
        raise InstrumentError(f"qemu: {where}: {e}") from None
    except ConfigError as e:
        raise InstrumentError(f"qemu: {e}") from None
    env.update(cfg.uboot_env)
    if cfg.kernel_args:
        env["bootargs"] = f"{env.get('bootargs', '')} {cfg.kernel_args}".strip()
    return env


class QemuMachine:
    def __init__(self, cfg: QemuConfig, images: Path) -> None:
        if shutil.which(cfg.binary) is None:
            raise InstrumentError(f"qemu: {cfg.binary} not found (Debian: qemu-system-arm)")
        if not cfg.bios.is_file():
            raise InstrumentError(f"qemu: U-Boot {cfg.bios} not found (Debian: u-boot-qemu)")
        self.cfg = cfg
        self.images = images
        self.env = boot_env(cfg, images)
        self._dir = Path(tempfile.mkdtemp(prefix="bootrig-qemu-"))
        self._flash = self._dir / "flash1.img"
        try:
            write_flash(self._flash, self.env)
        except ConfigError as e:
            raise InstrumentError(f"qemu: {e}") from None
        self._proc: subprocess.Popen[bytes] | None = None
        self._qmp: QmpClient | None = None
        self._launches = 0
        self.resumed = False
        self.trace: Path = self._dir / "trace-0.log"
        self.console_pty = ""
        self.resume_event: QmpEvent | None = None
        self.command_wall_us: int | None = None  # when `cont` was sent (wall clock, µs)
        self.command: list[str] = []
        #: QEMU trace events written to the trace file, from the next launch on (a bench
        #: may add the console's, pl011_write); the rig reads only TRACE_EVENT's lines.
        self.trace_events: tuple[str, ...] = (TRACE_EVENT,)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _command(self, qmp: Path) -> list[str]:
        c = self.cfg
        return [
            c.binary,
            "-M", c.machine,
            "-cpu", c.cpu,
            "-m", str(c.memory_mb),
            "-smp", str(c.smp),
            "-nic", "none",  # no network at all: the board needs none
            "-display", "none",
            "-monitor", "none",
            "-S",  # paused: the board is unpowered until `cont`
            "-qmp", f"unix:{qmp},server=on,wait=off",
            "-chardev", "pty,id=console",
            "-serial", "chardev:console",
            "-bios", str(c.bios),
            "-drive", f"if=pflash,format=raw,index=1,{self._flash_mode()}file={self._flash}",
            "-drive", f"if=none,format=raw,id=root,snapshot=on,file={self.images / 'rootfs.img'}",
            "-device", "virtio-blk-device,drive=root",
            *(a for e in self.trace_events for a in ("-trace", e)),
            "-D", str(self.trace),
            "-msg", "timestamp=on",
        ]  # fmt: skip

    def _flash_mode(self) -> str:
        # The flash is this machine's own copy, written when it was made: writable, what
        # U-Boot saves there stays for the next power cycle and never reaches the images.
        return "" if self.cfg.env_writable else "readonly=on,"

    def launch(self) -> None:
        """Start a fresh, paused QEMU (the previous one, if any, is quit first)."""
        self.quit()
        self._launches += 1
        qmp = self._dir / f"qmp-{self._launches}.sock"
        self.trace = self._dir / f"trace-{self._launches}.log"
        self.command = self._command(qmp)
        try:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                preexec_fn=die_with_parent,  # the only way to set PR_SET_PDEATHSIG
            )
        except OSError as e:
            raise InstrumentError(f"qemu: cannot start {self.cfg.binary}: {e}") from None
        try:
            self._qmp = QmpClient(qmp)
            chardevs = self._qmp.execute("query-chardev")
        except InstrumentError as e:
            raise InstrumentError(f"{e}{self._stderr_tail()}") from None
        pty = next((c["filename"] for c in chardevs if c.get("label") == "console"), "")
        if not pty.startswith("pty:"):
            raise InstrumentError(f"qemu: no console pty (query-chardev gave {chardevs!r})")
        self.console_pty = pty[4:]
        self.resumed = False
        self.resume_event = None
        self.command_wall_us = None

    def _stderr_tail(self) -> str:
        proc = self._proc
        if proc is None or proc.poll() is None or proc.stderr is None:
            return ""
        return ": " + proc.stderr.read().decode(errors="replace").strip()[-500:]

    def resume(self) -> int:
        """Power on: start the vCPUs. Returns host monotonic ns right before the command."""
        if self._qmp is None:
            raise InstrumentError("qemu: power on before the machine was started")
        t_ns = time.monotonic_ns()
        # Its wall-clock twin, on QEMU's trace clock: a console-only run's t = 0 there.
        self.command_wall_us = time.time_ns() // 1000
        self._qmp.execute("cont")
        self.resumed = True
        self.resume_event = self._qmp.event("RESUME")
        if self.resume_event is None:  # the event may trail the command's return
            self._qmp.execute("query-status")
            self.resume_event = self._qmp.event("RESUME")
        return t_ns

    def quit(self) -> None:
        """Power off: end the process (QMP quit, then SIGKILL by PID if it lingers)."""
        proc, qmp = self._proc, self._qmp
        self._proc, self._qmp = None, None
        if qmp is not None:
            # Already gone, or going: the wait below settles it.
            with contextlib.suppress(InstrumentError):
                qmp.execute("quit")
            qmp.close()
        if proc is not None:
            stop_child(proc, 5, first=None)  # asked to quit above
            if proc.stderr:
                proc.stderr.close()

    def close(self) -> None:
        self.quit()
        shutil.rmtree(self._dir, ignore_errors=True)
