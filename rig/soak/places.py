"""`rig soak --places a,b,c`: one `rig soak --place NAME` child process per labgrid
place, all at once, each its own journal, summary, exit code and core (the cycles are
CPU-bound between boots); Ctrl-C and SIGTERM are passed on to every child, and a child
gets SIGTERM should this process die (docs/soak.md, "Many boards")."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rig.errors import (
    EXIT_BOARD_FAILED,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_RIG_FAILED,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    ArtifactError,
    InputError,
    bounded,
)
from rig.instruments.children import die_with_parent
from rig.model.soak import CYCLE
from rig.model.summary import SoakSummary
from rig.names import JOURNAL
from rig.soak.start import check_id
from rig.untrusted import parse_json

#: How long a child has to finish its cycle, power off and release after SIGTERM.
STOP_TIMEOUT_S = 120.0
#: Worst first: the exit code of the whole is the worst of its places'.
_SEVERITY = (EXIT_RIG_FAILED, EXIT_SIGTERM, EXIT_SIGINT, EXIT_INPUT, EXIT_BOARD_FAILED, EXIT_OK)


def parse_places(text: str, configs: tuple[str, ...], default: Path) -> dict[str, Path]:
    """`a,b,c` and `--place-config NAME=PATH` pairs: each place's config, in order."""
    names = [p.strip() for p in text.split(",")]
    if not all(names):
        raise InputError(f"--places {text!r}: expected place names separated by commas")
    if len(set(names)) != len(names):
        raise InputError(f"--places {text!r}: a place is named twice")
    out = {n: default for n in names}
    for item in configs:
        name, sep, path = item.partition("=")
        if not sep or not path:
            raise InputError(f"--place-config {item!r}: expected NAME=CONFIG")
        if name not in out:
            raise InputError(f"--place-config {item!r}: {name!r} is not one of --places")
        out[name] = Path(path)
    for name in names:
        check_id(name)  # it becomes part of the soak id
    return out


@dataclass
class PlaceSoak:
    """One place's soak: its child process and, once it ends, what it printed."""

    place: str
    config: Path
    soak_id: str
    proc: subprocess.Popen[bytes]
    stderr: IO[bytes]
    journal: Path  # where the child journals (it may not exist yet)
    exit_code: int | None = None
    summary: SoakSummary | None = None
    error: str | None = None
    # How far the progress display has read the journal, and the cycles found so far:
    # it asks twice a second, and a night's journal is megabytes.
    _read_to: int = field(default=0, repr=False)
    _cycles: int = field(default=0, repr=False)

    def cycles_done(self) -> int:
        """Cycles journaled so far (for the progress display): the journal's new
        whole lines since the last call."""
        try:
            with self.journal.open("rb") as f:
                f.seek(self._read_to)
                new = f.read()
        except OSError:
            return self._cycles
        whole = new[: new.rfind(b"\n") + 1]  # a line still being written waits
        self._read_to += len(whole)
        for line in whole.splitlines():
            try:
                rec = parse_json(line)
            except ValueError:
                continue  # a torn line: the soak's own reader reports it
            if isinstance(rec, dict) and rec.get("type") == CYCLE:
                self._cycles += 1
        return self._cycles

    def as_json(self) -> dict[str, Any]:
        return {
            "place": self.place,
            "config": str(self.config),
            "soak_id": self.soak_id,
            "exit_code": self.exit_code,
            "error": self.error,
            "soak": self.summary.to_json() if self.summary else None,
        }


@dataclass
class PlacesResult:
    soak_id: str
    places: list[PlaceSoak] = field(default_factory=list)
    reason: str = "completed"

    signal: int | None = None  # what stopped it, when something did

    @property
    def exit_code(self) -> int:
        """The worst place's (a rig error first); stopped by a signal: 128 + it,
        unless a place had a rig error."""
        codes = [c if (c := p.exit_code) in _SEVERITY else EXIT_RIG_FAILED for p in self.places]
        worst = min(codes, key=_SEVERITY.index, default=EXIT_OK)
        if self.signal is not None and worst != EXIT_RIG_FAILED:
            return 128 + self.signal
        return worst

    def as_json(self) -> dict[str, Any]:
        return {
            "soak_id": self.soak_id,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "places": [p.as_json() for p in self.places],
        }


def _argv(place: str, config: Path, soak_id: str, limits: list[str]) -> list[str]:
    return [sys.executable, "-m", "rig", "soak", "--config", str(config), "--place", place,
            "--id", soak_id, *limits, "--json"]  # fmt: skip


def run_places(
    places: dict[str, Path],
    soak_id: str,
    limits: list[str],
    results_dirs: Mapping[str, Path],
    show: Callable[[list[PlaceSoak]], None] | None = None,
) -> PlacesResult:
    """Start one soak per place, wait for all; `limits`: the soak options they share
    (`--cycles N`, `--duration T`, ...). `results_dirs`: each place's config's, where its
    journal will be, for the progress display."""
    result = PlacesResult(soak_id)
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        result.signal = result.signal or signum
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for place, config in places.items():
            child_id = check_id(f"{soak_id}-{place}")
            err = tempfile.TemporaryFile()  # noqa: SIM115 - _collect closes it
            proc = subprocess.Popen(
                _argv(place, config, child_id, limits),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                # SIGTERM, a clean stop, should this process die
                preexec_fn=functools.partial(die_with_parent, signal.SIGTERM),
                start_new_session=True,  # Ctrl-C reaches the children through us only
            )
            journal = results_dirs[place] / child_id / JOURNAL
            result.places.append(PlaceSoak(place, config, child_id, proc, err, journal))
        readers = [threading.Thread(target=_collect, args=(p,), daemon=True)
                   for p in result.places]  # fmt: skip
        for t in readers:
            t.start()
        while any(t.is_alive() for t in readers):
            if stop.is_set() and result.reason != "interrupted":
                result.reason = "interrupted"
                for p in result.places:
                    if p.proc.poll() is None:
                        p.proc.send_signal(signal.SIGTERM)
            if show is not None:
                show(result.places)
            time.sleep(0.5)
        for t in readers:
            t.join()
        if show is not None:
            show(result.places)
    finally:
        for p in result.places:  # only after an error of our own: never leave one running
            if p.proc.poll() is None:
                p.proc.send_signal(signal.SIGTERM)
                try:
                    p.proc.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    p.proc.kill()
                    p.proc.wait()
        for s, h in previous.items():
            signal.signal(s, h)
    return result


def _collect(p: PlaceSoak) -> None:
    """Read the child's JSON to its end, then its exit code and, on failure, why."""
    assert p.proc.stdout is not None
    out = p.proc.stdout.read()
    p.exit_code = p.proc.wait()
    p.stderr.seek(0)
    err = p.stderr.read().decode(errors="replace").strip()
    p.stderr.close()
    try:
        doc = json.loads(out.decode(errors="replace")) if out.strip() else None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and "soak_id" in doc:
        try:
            p.summary = SoakSummary.from_json(doc)
        except ArtifactError as e:
            p.error = f"its summary does not fit: {e}"
    elif isinstance(doc, dict) and "error" in doc:
        p.error = str(doc["error"])
    elif p.exit_code != 0:
        p.error = bounded((err or out.decode(errors="replace")).strip()) or f"exit {p.exit_code}"
