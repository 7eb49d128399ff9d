"""Helpers for end-to-end runs against the simulated board (imported by tests and benches)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: The repository; computed here so that benches can import this without pytest.
REPO = Path(__file__).resolve().parents[1]


def make_config(
    tmp: Path,
    board: str = "fast.toml",
    drop_channels: tuple[str, ...] = (),
    analyzer: str = "sim",
    extra: str = "",
    *,
    off_hold_s: float = 0.1,
    set_keys: Mapping[str, object] | None = None,
    sim: Mapping[str, object] | None = None,
    name: str = "rig.toml",
) -> Path:
    """A copy of config/rig.toml writing into `tmp/results`, booting `board`.

    `drop_channels` unwires analyzer channels, `set_keys` replaces keys the file already
    has (e.g. `boot_s`, `seed`), `sim` adds keys to its [sim] table, `extra` is appended.
    Tests and benches share it so that one edit of rig.toml cannot leave a copy behind.
    """
    text = (REPO / "config" / "rig.toml").read_text()
    text = text.replace('results_dir = "../results"', f'results_dir = "{tmp / "results"}"')
    text = text.replace(
        'profile = "boards/ecovec-optimised.toml"',
        f'profile = "{REPO / "config" / "boards" / board}"',
    )
    text = text.replace('driver = "sim"          #', f'driver = "{analyzer}"  #')
    for key, value in {"off_hold_s": off_hold_s, **(set_keys or {})}.items():
        text, n = re.subn(rf"^{key} = [^\n]*", f"{key} = {json.dumps(value)}", text, flags=re.M)
        assert n == 1, f"config/rig.toml has no single key {key!r}"
    for key, value in (sim or {}).items():
        text = re.sub(
            r"^(seed = [^\n]*\n)", rf"\g<1>{key} = {json.dumps(value)}\n", text, flags=re.M
        )
    for channel in drop_channels:
        text = re.sub(rf"^{channel} = \"D\d\"\n", "", text, flags=re.M)
    path = tmp / name
    path.write_text(text + extra)
    return path


def rig_run_json(config: Path, timeout: float = 120) -> dict[str, Any]:
    """`rig run --config CONFIG --json` in a child process: its JSON output (it must exit 0)."""
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(config), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr or proc.stdout  # --json errors go to stdout
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def rig_analyze_json(folder: Path, timeout: float = 300) -> tuple[int, dict[str, Any]]:
    """`rig analyze FOLDER --json`, the real command in a child process: its exit code
    and the report (or the error object when it gave none)."""
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "analyze", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.stdout, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    return proc.returncode, out.get("report", out)


def interrupt_when(
    proc: subprocess.Popen[bytes], ready: Callable[[], bool], settle_s: float, timeout: float = 60
) -> tuple[bytes, bytes]:
    """Ctrl-C for `proc` once `ready()` holds and `settle_s` more have passed; its output.
    A child that outlives the wait is killed, so a failing test leaves no rig running."""
    try:
        deadline = time.monotonic() + timeout
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle_s)
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def truth_boot(folder: Path) -> dict[str, Any]:
    truth = json.loads((folder / "truth.json").read_text())
    assert len(truth["boots"]) == 1
    return truth["boots"][0]


def boundary_errors(report: dict[str, Any], boot: dict[str, Any]) -> list[dict[str, Any]]:
    """Each measured stage boundary against the simulator's truth."""
    true = {s["name"]: s for s in boot["stages"]}
    out = []
    for s in report["stages"]:
        for side in ("start", "end"):
            b = s[side]
            err = s[f"{side}_s"] - true[s["name"]][f"{side}_s"]
            out.append(
                {
                    "stage": s["name"],
                    "side": side,
                    "source": b["source"],
                    "error_s": err,
                    "uncertainty_s": b["uncertainty_s"],
                }
            )
    return out
