"""What the rig writes from recorded inputs, through its command line only, made comparable.

Three cases, each run in a folder of its own holding a copy of its inputs:

- `real`: the recorded real boots of tests/data/real (every one the rig analyses):
  `rig analyze` (terminal at a fixed width), `rig analyze --json --no-write` (on one
  boot of each kind: see JSON_BOOTS), and
  `rig report --js shared --each` (compare.html and each report.html);
- `soak`: the simulated soak of tests/data/sim-soak: `rig analyze` and `--json` on its
  cycles, `rig report --js shared` on the soak folder, and `rig soak --resume`, which
  rewrites summary.json and summary.html from the journal and spools the soak's InfluxDB
  point (line protocol) because the soak's config names an InfluxDB nobody listens on;
  the same resume with `--json` on a second copy;
- `grafana`: `rig grafana build` (terminal and `--json`) with a frozen budgets file.

A command's outputs are its exit code, stdout, stderr and every file it created or
rewrote in its folder (found by comparing the folder before and after), keyed
`<case>/<path in the folder>`. Binary files (`uart.bin`, the plotly.js asset) are kept
as their SHA-256. Commands run without PYTHONPATH changes, so the rig they run is the one
`sys.executable` imports (regen.py explains how to point that at another commit).

Normalised, because two runs of the same code differ there (found by running the
generation twice: regen.py refuses goldens that differ between two runs), and nothing else:

- absolute paths of the case's temporary folder -> `<tmp>` (the terminal and `--json`
  name the written files; summary.json names the soak folder);
- `updated_utc` and `elapsed_s` of summary.json and of `rig soak --json`: the resume's own
  end line is the newest record, stamped with the wall clock, and its elapsed time adds
  the resumed session's running time (milliseconds that vary) to the soak's;
- the lines `rig soak --resume` appends to journal.jsonl: their `utc` stamps and the end
  line's `elapsed_s` (the same clock and session time);
- `spooled_utc` in the spool file's header: when the point was spooled;
- the plotly.js the installed `plotly` package ships (third-party bytes, not the rig's
  output): its version in file names and pages -> `VERSION`, the asset's digest ->
  `<plotly.js sha256>` when it is that file's, so a newer plotly does not fail the test;
- not compared at all: `.lock` files (empty advisory locks, no output) and the stderr of
  `rig soak --resume` without `--json` (its live progress display shows elapsed time).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
GOLDEN = DATA / "golden"
REAL = DATA / "real"
SOAK_DATA = DATA / "sim-soak"
SOAK = "golden-soak"  # the soak folder inside SOAK_DATA
BUDGETS = SOAK_DATA / "budgets.toml"  # frozen copy of config/budgets.toml at c525b0b
WIDTH = "120"  # terminal columns for rich's tables

#: Every recorded real boot (tests/data/real/README.md); listed, so a boot added there
#: later does not change this test's inputs.
REAL_BOOTS = (
    "capture-1", "capture-2", "console-1", "console-2", "console-b-1", "console-b-2",
    "console-backlog-1", "console-backlog-2", "console-backlog-3", "console-backlog-4",
    "initcall-debug-1", "quiet-capture-1", "quiet-console-1", "stock-capture-1",
    "stock-console-1", "stock-console-2", "stock-console-busy-1", "stock-console-busy-2",
    "stock-console-busy-3", "stock-console-busy-4", "stock-quiet-1", "systemd-capture-1",
    "systemd-console-1", "systemd-console-2",
)  # fmt: skip

#: `--json` prints the same reports as report.json, indented wider (1.9 MB for all 24):
#: one boot of each kind keeps its golden small; report.json covers every boot.
JSON_BOOTS = ("capture-1", "console-1", "quiet-console-1", "stock-capture-1", "systemd-capture-1")

BINARY = (".bin", ".js")
IGNORED = (".lock",)


@dataclass
class Outputs:
    """`<case>/<name>` -> bytes, in the order produced; a name may come twice (two
    commands writing the same file), and then both must match its one golden."""

    items: list[tuple[str, bytes]] = field(default_factory=list)

    def add(self, key: str, data: bytes) -> None:
        self.items.append((key, data))

    def merged(self) -> tuple[dict[str, bytes], list[str]]:
        """One value per name, and the names produced twice with different bytes."""
        out: dict[str, bytes] = {}
        clash = []
        for k, v in self.items:
            if k in out and out[k] != v:
                clash.append(k)
            out.setdefault(k, v)
        return out, clash


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for k in ("FORCE_COLOR", "NO_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE",
              "TTY_INTERACTIVE", "COLORTERM", "BOOTRIG_DEBUG"):  # fmt: skip
        env.pop(k, None)
    env.update(COLUMNS=WIDTH, LINES="50", TERM="dumb", TZ="UTC")
    return env


def _snapshot(folder: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for p in folder.rglob("*"):
        if p.is_file():
            st = p.stat()
            out[p.relative_to(folder).as_posix()] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


@functools.cache
def _plotly() -> tuple[bytes, bytes]:
    """(version, sha256 hex) of the plotly.js the installed plotly package ships."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    js = get_plotlyjs().encode()
    return get_plotlyjs_version().encode(), hashlib.sha256(js).hexdigest().encode()


def _tmp_paths(data: bytes, folder: Path) -> bytes:
    for p in {str(folder.resolve()), str(folder)}:
        data = data.replace(p.encode(), b"<tmp>")
    version, digest = _plotly()
    data = data.replace(digest, b"<plotly.js sha256>")
    return data.replace(b"plotly-" + version + b".min.js", b"plotly-VERSION.min.js")


def _sub(pattern: str, repl: str, data: bytes, flags: int = 0) -> bytes:
    return re.sub(pattern.encode(), repl.encode(), data, flags=flags)


def normalise_summary(data: bytes) -> bytes:
    """summary.json and `rig soak --json`: the resume's clock and session time."""
    data = _sub(r'^  "updated_utc": "[^"]*"', '  "updated_utc": "<utc>"', data, re.M)
    return _sub(r'^  "elapsed_s": [0-9.eE+-]+', '  "elapsed_s": "<elapsed>"', data, re.M)


def normalise_journal(data: bytes, before: bytes) -> bytes:
    """The lines appended to journal.jsonl: their wall-clock stamps and session time."""
    if not data.startswith(before):
        return data  # the recorded lines changed: compared as they are
    tail = data[len(before) :]
    tail = _sub(r'"utc":"[^"]*"', '"utc":"<utc>"', tail)
    return before + _sub(r'"elapsed_s":[0-9.eE+-]+', '"elapsed_s":"<elapsed>"', tail)


def normalise_spool(data: bytes) -> bytes:
    return _sub(r'"spooled_utc": "[^"]*"', '"spooled_utc": "<utc>"', data)


Normaliser = Callable[[str, bytes], bytes]


def _keep(name: str, data: bytes) -> bytes:
    return data


class Case:
    """One case's folder: run commands in it and collect what they write."""

    def __init__(self, name: str, folder: Path, outputs: Outputs) -> None:
        self.name, self.folder, self.outputs = name, folder, outputs
        self.log: list[str] = []
        self.originals: dict[str, bytes] = {}

    def run(
        self,
        label: str,
        args: list[str],
        normalise: Normaliser = _keep,
        stderr: bool = True,
    ) -> None:
        before = _snapshot(self.folder)
        p = subprocess.run(
            [sys.executable, "-m", "rig", *args],
            cwd=self.folder,
            env=_env(),
            capture_output=True,
            timeout=600,
        )
        self.log.append(f"{label}: rig {' '.join(args)} -> exit {p.returncode}")
        self._add(f"{label}.stdout", normalise("stdout", _tmp_paths(p.stdout, self.folder)))
        if stderr:
            self._add(f"{label}.stderr", _tmp_paths(p.stderr, self.folder))
        after = _snapshot(self.folder)
        for gone in sorted(set(before) - set(after)):
            self.log.append(f"{label}: removed {gone}")
        for rel in sorted(after):
            if after[rel] == before.get(rel) or rel.endswith(IGNORED):
                continue
            data = (self.folder / rel).read_bytes()
            if rel.endswith(BINARY):
                digest = hashlib.sha256(data).hexdigest()
                line = f"{digest}  {Path(rel).name}\n".encode()
                self._add(
                    f"{_tmp_paths(rel.encode(), self.folder).decode()}.sha256",
                    _tmp_paths(line, self.folder),
                )
                continue
            data = _tmp_paths(data, self.folder)
            if rel in self.originals:
                data = normalise_journal(data, self.originals[rel])
            self._add(rel, normalise(rel, data))

    def _add(self, rel: str, data: bytes) -> None:
        self.outputs.add(f"{self.name}/{rel}", data)

    def finish(self) -> None:
        self._add("commands.txt", ("\n".join(self.log) + "\n").encode())


def _soak_files(name: str, data: bytes) -> bytes:
    if name.endswith("summary.json") or name == "stdout":
        data = normalise_summary(data)
    if "/.influx-spool/" in f"/{name}":
        data = normalise_spool(data)
    return data


def real(work: Path, outputs: Outputs) -> None:
    folder = work / "real"
    folder.mkdir()
    for boot in REAL_BOOTS:
        shutil.copytree(REAL / boot, folder / boot)
    case = Case("real", folder, outputs)
    boots = list(REAL_BOOTS)
    case.run("analyze", ["analyze", *boots])
    case.run("analyze-json", ["analyze", "--json", "--no-write", *JSON_BOOTS])
    case.run("report", ["report", "--js", "shared", "--each", "--out", "compare.html", *boots])
    case.finish()


def soak(work: Path, outputs: Outputs) -> None:
    folders = []
    for sub in ("soak", "soak-json"):
        folder = work / sub
        shutil.copytree(SOAK_DATA, folder, ignore=shutil.ignore_patterns("README.md"))
        folders.append(folder)
    case = Case("soak", folders[0], outputs)
    journal = f"{SOAK}/journal.jsonl"
    case.originals[journal] = (SOAK_DATA / journal).read_bytes()
    cycles = sorted(p.relative_to(folders[0]).as_posix() for p in (folders[0] / SOAK).iterdir()
                    if p.is_dir() and not p.name.startswith("."))  # fmt: skip
    case.run("analyze", ["analyze", *cycles])
    case.run("analyze-json", ["analyze", "--json", "--no-write", *cycles])
    case.run("report", ["report", "--js", "shared", SOAK])
    resume = ["soak", "--resume", SOAK, "--config", "rig.toml", "--budgets", "budgets.toml"]
    # Its stderr is the live progress display (elapsed time): not compared.
    case.run("resume", resume, _soak_files, stderr=False)
    # A second copy, since a resume appends to the journal: the same files must come out.
    again = Case("soak", folders[1], outputs)
    again.originals = case.originals
    again.run("resume-json", [*resume, "--json"], _soak_files)
    case.log += again.log
    case.finish()


def grafana(work: Path, outputs: Outputs) -> None:
    folder = work / "grafana"
    folder.mkdir()
    shutil.copy(BUDGETS, folder / "budgets.toml")
    case = Case("grafana", folder, outputs)
    build = ["grafana", "build", "--dashboards", "dashboards", "--budgets", "budgets.toml"]
    case.run("build", build)
    case.run("build-json", [*build, "--json"])
    case.finish()


CASES: dict[str, Callable[[Path, Outputs], None]] = {
    "real": real,
    "soak": soak,
    "grafana": grafana,
}


def generate(case: str, work: Path) -> Outputs:
    outputs = Outputs()
    CASES[case](work, outputs)
    return outputs


def goldens(case: str) -> dict[str, bytes]:
    root = GOLDEN / case
    return {
        p.relative_to(GOLDEN).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
    }


def first_difference(name: str, want: bytes, got: bytes) -> str:
    """Where `got` leaves the golden `want`: the file, the line, both versions."""
    a, b = want.splitlines(keepends=True), got.splitlines(keepends=True)
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"{name}: line {i + 1} differs\n  golden: {x!r}\n  now:    {y!r}"
    i = min(len(a), len(b))
    if len(a) > len(b):
        return f"{name}: ends at line {i}; the golden goes on with\n  golden: {a[i]!r}"
    return f"{name}: the golden ends at line {i}; now it goes on with\n  now:    {b[i]!r}"


def _first(key: str) -> tuple[int, str]:
    """Exit codes and the terminal first: they say why files went missing or changed."""
    name = key.rsplit("/", 1)[-1]
    return (0 if name == "commands.txt" else 1 if name.endswith(("stderr", "stdout")) else 2, key)


def compare(case: str, outputs: Outputs) -> list[str]:
    """Every way the outputs leave the goldens, one message each (empty: identical)."""
    got, clash = outputs.merged()
    want = goldens(case)
    problems = [
        first_difference(k, want[k], got[k])
        for k in sorted(set(got) & set(want), key=_first)
        if want[k] != got[k] and k not in clash
    ]
    problems += [f"{k}: written twice, differently" for k in clash]
    problems += [f"{k}: golden output not produced any more" for k in sorted(set(want) - set(got))]
    problems += [f"{k}: new output, no golden" for k in sorted(set(got) - set(want))]
    return problems
