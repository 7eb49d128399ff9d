"""A real labgrid lab on 127.0.0.1 for the tests: `labgrid-coordinator`, exporters and
`labgrid-client` from PyPI's labgrid, in its own environment (`make labgrid`, see
docs/instruments.md "labgrid"). Every process is started here and stopped by its PID,
even when a test fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rig.instruments.children import stop_child
from tests.e2e import REPO
from tests.require import require
from tests.ser2net import free_port

LABGRID_BIN = Path(os.environ.get("BOOTRIG_LABGRID_VENV", REPO / ".venv-labgrid")) / "bin"
LABGRID_PYTHON = LABGRID_BIN / "python"


def require_labgrid() -> None:
    """Skip without labgrid's environment; where it is required (tests/require.py; `make
    test` builds it first) its absence is a failure."""
    if not (LABGRID_BIN / "labgrid-coordinator").is_file():
        missing = f"labgrid's environment {LABGRID_BIN.parent} is missing: run `make labgrid`"
        require("labgrid", missing)


class Lab:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.address = f"127.0.0.1:{free_port()}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = {**os.environ, "LG_COORDINATOR": self.address}
        self.env.pop("LG_PLACE", None)

    def _spawn(self, argv: list[str], log: str) -> subprocess.Popen[bytes]:
        with open(self.tmp / log, "ab") as out:
            p = subprocess.Popen(argv, cwd=self.tmp, stdout=out, stderr=out, env=self.env)
        self.procs.append(p)
        return p

    def log(self, name: str) -> str:
        return (self.tmp / name).read_text(errors="replace")[-2000:]

    def start(self) -> None:
        p = self._spawn([str(LABGRID_BIN / "labgrid-coordinator"), "-l", self.address],
                        "coordinator.log")  # fmt: skip
        self._until(lambda: self.client("places", check=False).returncode == 0, p,
                    "coordinator.log")  # fmt: skip

    def exporter(self, name: str, resources: dict[str, Any]) -> None:
        """Export `resources` ({group: {ResourceClass: params}}) as exporter `name`."""
        cfg = self.tmp / f"exporter-{name}.yaml"
        cfg.write_text(json.dumps(resources))  # JSON is YAML
        argv = [str(LABGRID_BIN / "labgrid-exporter"), "-c", self.address, "-n", name,
                "--hostname", "127.0.0.1", str(cfg)]  # fmt: skip
        p = self._spawn(argv, f"exporter-{name}.log")
        self._until(lambda: f"{name}/" in self.client("resources").stdout, p,
                    f"exporter-{name}.log")  # fmt: skip

    def _until(self, ok: Any, proc: subprocess.Popen[bytes], log: str) -> None:
        deadline = time.monotonic() + 30
        while not ok():
            assert proc.poll() is None, f"{log}: exited at start: {self.log(log)}"
            assert time.monotonic() < deadline, f"{log}: not ready: {self.log(log)}"
            time.sleep(0.2)

    def client(
        self, *args: str, user: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **({"LG_USERNAME": user} if user else {})}
        p = subprocess.run(
            [str(LABGRID_BIN / "labgrid-client"), "-x", self.address, *args],
            capture_output=True, text=True, env=env, timeout=30, check=False,
        )  # fmt: skip
        if check:
            assert p.returncode == 0, f"labgrid-client {' '.join(args)}: {p.stderr}"
        return p

    def place(self, name: str, *matches: str) -> None:
        self.client("-p", name, "create")
        for m in matches:
            self.client("-p", name, "add-match", m)

    def acquired(self, place: str) -> str | None:
        """Who holds `place` ("host/user"), or None."""
        out = self.client("-p", place, "show").stdout
        m = re.search(r"^\s*acquired: (\S+)", out, re.M)
        return None if m is None or m.group(1) == "None" else m.group(1)

    def stop(self) -> None:
        for p in reversed(self.procs):  # exporters first, the coordinator last
            stop_child(p, 10)


@contextmanager
def lab(tmp: Path) -> Iterator[Lab]:
    require_labgrid()
    tmp.mkdir(parents=True, exist_ok=True)
    the_lab = Lab(tmp)
    try:
        the_lab.start()
        yield the_lab
    finally:
        the_lab.stop()
