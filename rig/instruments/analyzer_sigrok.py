"""A real logic analyzer through sigrok-cli.

It captures with `-O binary` (sigrok-cli writing `.sr` directly rewrites the zip per
packet and cannot keep up at MHz rates) and `--continuous`, which stops when stdin gets a
newline; the rig converts the raw file to `.sr` afterwards.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from rig.instruments.children import die_with_parent
from rig.instruments.protocols import AnalyzerProtocol, CaptureResult, InstrumentError


class SigrokAnalyzer(AnalyzerProtocol):
    def __init__(
        self, device: str, samplerate: int, sigrok_cli: str = "sigrok-cli", settle_s: float = 0.5
    ) -> None:
        if not device:
            raise InstrumentError("sigrok analyzer: no device (analyzer.device, e.g. 'fx2lafw')")
        self.device = device
        self.samplerate = samplerate
        self.sigrok_cli = sigrok_cli
        self.settle_s = settle_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._raw: Path | None = None
        self._armed_ns = 0

    def arm(self, raw: Path) -> int:
        channels = ",".join(f"D{i}" for i in range(8))
        cmd = [
            self.sigrok_cli,
            "-d",
            self.device,
            "--config",
            f"samplerate={self.samplerate}",
            "--continuous",
            "-C",
            channels,
            "-O",
            "binary",
            "-o",
            str(raw),
        ]
        self._raw = raw
        try:
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                preexec_fn=die_with_parent,  # even a SIGKILLed rig leaves no sigrok-cli
            )
        except OSError as e:
            raise InstrumentError(f"sigrok analyzer: cannot run {self.sigrok_cli}: {e}") from None
        self._armed_ns = time.monotonic_ns()
        # The device needs time to start streaming; the reference clock is its sample
        # clock, so arming early only costs disk space, never accuracy.
        deadline = time.monotonic() + self.settle_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                raise InstrumentError(f"sigrok analyzer: sigrok-cli exited at start: {err}")
            if raw.exists() and raw.stat().st_size > 0:
                break
            time.sleep(0.01)
        return self._armed_ns

    def stop(self) -> CaptureResult:
        proc, raw = self._proc, self._raw
        if proc is None or raw is None:
            raise InstrumentError("sigrok analyzer: stop without a running capture")
        try:
            _, err = proc.communicate(b"\n", timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise InstrumentError("sigrok analyzer: sigrok-cli did not stop within 30 s") from None
        finally:
            self._proc = None
        stopped = time.monotonic_ns()
        if proc.returncode != 0:
            msg = err.decode(errors="replace").strip()
            raise InstrumentError(f"sigrok analyzer: sigrok-cli failed ({proc.returncode}): {msg}")
        size = raw.stat().st_size if raw.exists() else 0
        return CaptureResult(raw, size, self.samplerate, self._armed_ns, stopped)

    def close(self) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None
