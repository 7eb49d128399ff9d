"""`rig` starts without the heavy imports, and a Ctrl-C while it starts prints no
traceback (issue 22, item 5). The imports are read from sys.modules after rig.cli's entry
ran; the Ctrl-C goes to the real `rig` executable at moments its imports mark (Python's
PYTHONPROFILEIMPORTTIME, the environment form of -X importtime)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import click
import pytest

from rig.commands.group import COMMANDS, main
from tests.e2e import REPO

RIG = Path(sys.executable).with_name("rig")
# What only a command's work needs: none of it for `rig --help` or `rig --version`.
HEAVY = ("numpy", "scipy", "plotly", "ruptures", "serial", "pyvisa", "rich.progress")
# What none of `rig <command> --help` needs.
NUMERIC = ("numpy", "scipy", "plotly", "ruptures")
IMPORT_LINE = "import time:"


def module(line: str) -> str | None:
    """The module a -X importtime line reports as imported, None for other lines."""
    parts = line.split("|")
    if not line.startswith(IMPORT_LINE) or len(parts) != 3 or parts[0].endswith("self [us] "):
        return None
    return parts[2].strip()


# `rig` as its executable runs it (rig.cli's entry), then the modules it had imported.
# sys.modules, not -X importtime: that lists no module imported by importlib.import_module,
# as the group imports its commands.
PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
sys.argv = ["rig", *sys.argv[1:]]
from rig.cli import entry
entry()
"""


def imported(*args: str) -> set[str]:
    p = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    modules: list[str] = json.loads(p.stderr.rsplit("\nMODULES ", 1)[1])
    return set(modules)


def among(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_help_and_version_import_no_command() -> None:
    for args in (["--help"], ["--version"]):
        modules = imported(*args)
        assert "click" in modules  # the check sees the imports at all
        assert among(modules, HEAVY) == [], args
        assert among(modules, ("rig.commands", "simboard")) == [
            "rig.commands",
            "rig.commands.group",
        ]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_help_imports_no_numerics(name: str) -> None:
    modules = imported(name, "--help")
    assert COMMANDS[name][0].split(":")[0] in modules
    assert among(modules, NUMERIC) == []


def test_listing_is_each_commands_own_help() -> None:
    """The group lists its commands from its table without importing them; the table's
    text is each command's first help paragraph, as click itself would list it."""
    ctx = click.Context(main)
    for name, (_, text) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name
        assert text == " ".join((command.help or "").split("\n\n")[0].split()), name
    assert sorted(main.list_commands(ctx)) == sorted(COMMANDS)


class Started:
    """A `rig` process whose stderr is read as it comes: an event for the first import
    line of each watched module (the line comes when that module's import ends)."""

    def __init__(self, program: list[str], args: list[str], watch: tuple[str, ...]) -> None:
        self.proc = subprocess.Popen(
            [*program, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "COLUMNS": "80"},
        )
        self.events = {name: threading.Event() for name in watch}
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            name = module(line)
            for watched, event in self.events.items():
                if name is not None and (name == watched or name.startswith(watched + ".")):
                    event.set()

    def finish(self) -> tuple[int, str]:
        """Exit status and stderr without the import lines."""
        try:
            self.proc.wait(timeout=120)
        finally:
            self.proc.kill()
            self.reader.join(timeout=10)
        return self.proc.returncode, "".join(x for x in self.lines if not x.startswith(IMPORT_LINE))


# When the Ctrl-C comes: the end of an import (the module's first import line), then
# that many seconds later. The package rig.commands is the first import inside
# rig.cli's entry(): before it are Python's own start (site) and the few lines of the
# generated `rig` script, which no program can guard (docs/exit-codes.md).
MOMENTS = [
    ("rig.commands", 0.0),
    ("rig.commands", 0.05),
    ("rig.commands", 0.2),
    ("rig.commands", 0.5),
    ("click", 0.0),
    ("numpy", 0.0),
    ("scipy", 0.0),
]


# The console script, and `python -m rig` at a few of the moments.
PROGRAMS = {"rig": [str(RIG)], "python -m rig": [sys.executable, "-m", "rig"]}
CASES = [("rig", *m) for m in MOMENTS] + [
    ("python -m rig", *m) for m in MOMENTS if m in (("rig.commands", 0.0), ("scipy", 0.0))
]


@pytest.mark.parametrize(("program", "after", "delay"), CASES)
def test_ctrl_c_while_starting_prints_no_traceback(
    tmp_path: Path, program: str, after: str, delay: float
) -> None:
    """`rig compare` imports numpy and scipy before it finds that its folders are not
    there (exit 2). A Ctrl-C at any moment of that is exit 130 and `interrupted`, or,
    once the command has ended, its own exit; never a traceback."""
    started = Started(
        PROGRAMS[program],
        ["compare", str(tmp_path / "before"), "--", str(tmp_path / "after")],
        watch=tuple({name for name, _ in MOMENTS}),
    )
    assert started.events[after].wait(timeout=120), "".join(started.lines)[-3000:]
    time.sleep(delay)
    started.proc.send_signal(signal.SIGINT)
    code, stderr = started.finish()
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    if code == 130:
        assert stderr.strip().splitlines() == ["interrupted"], stderr
    else:
        # It had ended: its own exit, or the kernel's end of a process that gets a Ctrl-C
        # while Python shuts down (which a shell reports as 130 too).
        assert code in (2, -signal.SIGINT), (code, stderr)
        assert code == -signal.SIGINT or "no such folder" in stderr, stderr
