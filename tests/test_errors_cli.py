"""Exit codes, messages and no tracebacks, through the real `rig` executable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import REPO, make_config

RIG = Path(sys.executable).with_name("rig")
CONSOLE_RUN = REPO / "tests" / "data" / "real" / "console-1"


def rig(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RIG), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "80", **(env or {})},
        check=False,
    )


def no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr + p.stdout, p.stderr[-3000:]


def stored_run(tmp_path: Path, name: str, **run_keys: Any) -> Path:
    """A copy of a recorded console-only boot (outcome ok), with run.json keys replaced."""
    folder = tmp_path / name
    shutil.copytree(CONSOLE_RUN, folder)
    run = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**run, **run_keys}))
    return folder


def test_input_config_and_artifact_errors_exit_2(tmp_path: Path) -> None:
    p = rig("analyze", "--map", "TX=console", str(CONSOLE_RUN), "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["kind"] == "input"
    p = rig("run", "--config", str(tmp_path / "none.toml"), "--json")
    out = json.loads(p.stdout)
    assert (p.returncode, out["kind"], out["exit_code"]) == (2, "config", 2)
    assert "none.toml" in out["error"]
    (tmp_path / "empty").mkdir()
    p = rig("analyze", str(tmp_path / "empty"), "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["kind"] == "artifact"
    no_traceback(p)


def test_instrument_error_exits_3_and_keeps_brackets(tmp_path: Path) -> None:
    """A relay port that is not there: the rig failed (3), not the board (1) nor the user
    (2); the port's name, brackets and all, reaches the terminal intact."""
    config = make_config(tmp_path)
    port = f"{tmp_path}/ttyNOPE[device 1]"
    relay = 'port = "sim"            # a serial port'
    config.write_text(config.read_text().replace(relay, f'port = "{port}" #'))
    p = rig("run", "--config", str(config))
    assert p.returncode == 3, p.stderr
    assert f"cannot open {port}" in p.stderr
    no_traceback(p)
    p = rig("run", "--config", str(config), "--json")
    assert p.returncode == 3 and json.loads(p.stdout)["kind"] == "instrument"


def test_sink_error_exits_3(tmp_path: Path) -> None:
    missing = tmp_path / "no-influxd"
    p = rig("influx", "serve", "--data-dir", str(tmp_path / "db"), "--influxd", str(missing))
    assert p.returncode == 3 and "influxd not found" in p.stderr
    no_traceback(p)


def test_bracketed_text_survives_in_error_messages(tmp_path: Path) -> None:
    folder = tmp_path / "[sim] run [bold]"
    p = rig("analyze", str(folder))
    assert p.returncode == 2
    assert f"error: {folder}: not an artifact folder" in p.stderr


def test_huge_message_is_bounded_on_the_terminal_and_in_json() -> None:
    huge = "TX=" + "x" * 100_000
    for extra in ((), ("--json",)):
        p = rig("analyze", "--map", huge, str(CONSOLE_RUN), *extra)
        assert p.returncode == 2
        text = json.loads(p.stdout)["error"] if extra else p.stderr
        assert len(text) < 2200 and "more characters)" in text, len(text)


@pytest.mark.parametrize(
    ("run_keys", "code"),
    [
        ({}, 0),
        ({"rig_error": "rig_error", "rig_error_detail": "killed"}, 3),
        ({"rig_error": "analyzer_error"}, 3),
        ({"aborted": True}, 130),
    ],
)
def test_analyze_exits_with_the_runs_outcome(
    tmp_path: Path, run_keys: dict[str, Any], code: int
) -> None:
    folder = stored_run(tmp_path, "run", **run_keys)
    p = rig("analyze", str(folder), "--no-write", "--json")
    assert p.returncode == code, (json.loads(p.stdout)["outcome"], p.stderr)


def test_analyze_exits_1_for_a_board_failure_and_the_worst_of_several(tmp_path: Path) -> None:
    hang = stored_run(tmp_path, "hang")
    lines = (hang / "console.jsonl").read_text().splitlines(keepends=True)
    (hang / "console.jsonl").write_text("".join(lines[:40]))  # the console stops early
    p = rig("analyze", str(hang), "--no-write", "--json")
    assert (p.returncode, json.loads(p.stdout)["outcome"]) == (1, "hang_in_kernel")
    ok = stored_run(tmp_path, "ok")
    crashed = stored_run(tmp_path, "crashed", rig_error="rig_error")
    p = rig("analyze", str(ok), str(hang), "--no-write", "--json")
    assert p.returncode == 1
    p = rig("analyze", str(ok), str(hang), str(crashed), "--no-write")
    assert p.returncode == 3
    no_traceback(p)


# A command added to the real `rig` group that fails the way a bug does: the last-resort
# handling in rig.cli.entry and in json_option, not something a user can reach on purpose.
BUGGY = """
import sys
import click
from rig.cli import entry
from rig.commands.group import main
from rig.commands.common import json_option

@main.command("buggy")
def buggy() -> None:
    {{}}["[sim] missing key"]

@main.command("buggy-json")
@json_option
def buggy_json(as_json: bool) -> None:
    raise ZeroDivisionError("[device 1] " + "z" * 5000)

sys.argv = ["rig", *sys.argv[1:]]
entry()
"""


def buggy(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BOOTRIG_DEBUG"} | (env or {})
    return subprocess.run(
        [sys.executable, "-c", BUGGY.replace("{{}}", "{}"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
        check=False,
    )


def test_unexpected_exception_is_one_line_and_exit_3() -> None:
    p = buggy("buggy")
    assert p.returncode == 3
    no_traceback(p)
    assert "internal error: KeyError: '[sim] missing key'" in p.stderr
    assert "BOOTRIG_DEBUG=1" in p.stderr
    p = buggy("buggy-json", "--json")
    out = json.loads(p.stdout)
    assert (p.returncode, out["exit_code"], out["kind"]) == (3, 3, "rig")
    assert out["error"].startswith("internal error: ZeroDivisionError: [device 1] zzz")
    assert len(out["error"]) < 2200
    no_traceback(p)


def test_debug_env_shows_the_traceback() -> None:
    p = buggy("buggy", env={"BOOTRIG_DEBUG": "1"})
    assert p.returncode == 3
    assert "Traceback" in p.stderr and "KeyError" in p.stderr
