"""One rig per board on this host: a bench claims its console and power target before
opening them, by an identity two spellings of one target share (docs/instruments.md,
"Exclusive access"). A claim is an flock the kernel drops with the process, on a file
saying who holds it; claims nest within a process (a Robot suite and the soak it runs).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.errors import InstrumentError
from rig.instruments.exclusive import cmdline
from rig.instruments.power_command import CommandSettings
from rig.instruments.power_visa import SIM_RESOURCES, VisaSettings
from rig.instruments.relay_ch340 import Ch340Settings
from rig.instruments.relay_numato import NumatoSettings

if TYPE_CHECKING:
    from rig.instruments.drivers import DriverSpecs

#: This process's claims: lock file -> [fd, holders].
_HELD: dict[Path, list[int]] = {}
_GUARD = threading.Lock()
#: What a refused rig is told of the holder's command line, at most.
_CMDLINE_CHARS = 300


@dataclass(frozen=True)
class Target:
    """One thing a bench drives: `what` for people (`console socket://...`), `keys` the
    identities it is claimed by (any one held elsewhere refuses it)."""

    what: str
    keys: tuple[str, ...]


def claim_dir() -> Path:
    """Per user, owned by this user: another's files cannot block or fool our claims."""
    base = Path(tempfile.gettempdir()) / f"bootrig-{os.getuid()}"
    d = base / "targets"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = base.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise InstrumentError(f"{base}: not a folder of this user's; rigs claim boards there")
    return d


def device_key(path: str) -> str:
    return f"dev:{os.path.realpath(path)}"


def tcp_keys(host: str, port: int | None) -> tuple[str, ...]:
    """One key per address `host` resolves to, so `localhost` meets `127.0.0.1`."""
    host = host.strip("[]").lower()
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addrs = sorted({str(i[4][0]) for i in infos})
    except (OSError, UnicodeError):
        addrs = [host]  # opening it will fail and say so; still claim the name
    return tuple(f"tcp:[{a}]:{port}" for a in addrs)


def port_keys(port: str) -> tuple[str, ...]:
    """A pyserial device path or network URL (`spy://` around either); other URLs
    (`loop://`) reach no board."""
    if "://" not in port:
        return (device_key(port),)
    u = urllib.parse.urlsplit(port)
    scheme = u.scheme.lower()
    if scheme == "spy":
        return port_keys(port[len("spy://") :].split("?", 1)[0])
    if scheme in ("socket", "rfc2217") and u.hostname:
        try:
            return tcp_keys(u.hostname, u.port)
        except ValueError:  # a port that is not a number: opening it says so
            return (f"url:{port.split('?', 1)[0].lower()}",)
    return ()


def visa_keys(resource: str) -> tuple[str, ...]:
    import pyvisa.rname  # here: configs without a supply pay nothing for pyvisa

    try:
        r = pyvisa.rname.parse_resource_name(resource)
    except ValueError:
        return (f"visa:{resource}",)
    if isinstance(r, pyvisa.rname.ASRLInstr) and r.board.startswith("/"):
        return (device_key(r.board),)
    if isinstance(r, pyvisa.rname.TCPIPSocket):
        return tcp_keys(r.host_address, int(r.port))
    return (f"visa:{r}",)


def command_key(argv: Iterable[str]) -> str:
    args = list(argv)
    found = shutil.which(args[0])
    if found:
        args[0] = os.path.realpath(found)
    return f"command:{json.dumps(args)}"


def targets(port: str, specs: DriverSpecs) -> list[Target]:
    """What a bench drives (`port`: the console's): not a simulated or emulated board
    (this rig's own process), nor a labgrid place (PlaceClaim)."""
    out = []
    if specs.console.name == "serial" and port != "sim" and (keys := port_keys(port)):
        out.append(Target(f"console {port}", keys))
    s = specs.power.settings
    if isinstance(s, CommandSettings):
        on, off = command_key(s.on), command_key(s.off)
        out.append(Target(f"power command {list(s.on)}", (on,) if on == off else (on, off)))
    elif isinstance(s, VisaSettings) and s.resource not in SIM_RESOURCES:
        out.append(Target(f"power supply {s.resource}", visa_keys(s.resource)))
    elif isinstance(s, Ch340Settings | NumatoSettings) and s.port != "sim":
        keys = port_keys(s.port)
        out += [Target(f"power relay {s.port}", keys)] if keys else []
    return out


def _path(key: str) -> Path:
    name = hashlib.sha256(key.encode()).hexdigest()[:32]
    return claim_dir() / f"{name}.lock"


class TargetClaims:
    """`claim()` takes every target for this process or none, and fails naming the rig
    that holds them; `release()` gives them back (the kernel does when the process ends)."""

    def __init__(self, wanted: list[Target], results_dir: Path | None = None) -> None:
        self.wanted = wanted
        self.results_dir = results_dir
        self._mine: list[Path] = []

    def claim(self) -> None:
        refused: list[tuple[Target, dict[str, Any]]] = []
        with _GUARD:
            for t in self.wanted:
                holders = (self._take(_path(key)) for key in dict.fromkeys(t.keys))
                holder = next((h for h in holders if h is not None), None)  # the first refusal
                if holder is not None:
                    refused.append((t, holder))
        if refused:
            self.release()
            raise InstrumentError(self.refusal(refused))

    def refusal(self, refused: list[tuple[Target, dict[str, Any]]]) -> str:
        by: dict[str, list[str]] = {}
        for t, info in refused:
            by.setdefault(_who(info), []).append(t.what)
        held = "; ".join(
            f"{' and '.join(whats)} {'is' if len(whats) == 1 else 'are'} in use by another "
            f"rig on this host: {who}"
            for who, whats in by.items()
        )
        return (
            f"{held}. Two rigs on one board power-cycle it under each other's boots: wait "
            "for that rig to finish, or stop it"
        )

    def _take(self, path: Path) -> dict[str, Any] | None:
        """None when this process now holds `path`, else what its holder wrote."""
        held = _HELD.get(path)
        if held is not None:
            held[1] += 1
            self._mine.append(path)
            return None
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raw = os.pread(fd, 4096, 0)
            os.close(fd)
            try:
                info = json.loads(raw)
            except ValueError:
                info = None
            return info if isinstance(info, dict) else {}
        _HELD[path] = [fd, 1]
        self._mine.append(path)
        _write(fd, self.results_dir, None)
        return None

    def release(self) -> None:
        with _GUARD:
            for path in self._mine:
                held = _HELD[path]
                held[1] -= 1
                if held[1] == 0:
                    del _HELD[path]
                    with contextlib.suppress(OSError):
                        os.ftruncate(held[0], 0)
                    os.close(held[0])  # drops the flock
            self._mine = []


class PlaceClaim(TargetClaims):
    """A labgrid place, claimed on this host: labgrid grants it to a user, not a process,
    so two rigs of one user would both switch its board."""

    def __init__(self, place: str, coordinator: str | None) -> None:
        # The same place name under two coordinators is two boards.
        where = coordinator or os.environ.get("LG_COORDINATOR") or "default"
        super().__init__([Target(f"labgrid place {place!r}", (f"place:{where}--{place}",))])
        self.place = place

    def refusal(self, refused: list[tuple[Target, dict[str, Any]]]) -> str:
        return (
            f"labgrid place {self.place!r} is in use by another rig on this host "
            f"(PID {refused[0][1].get('pid', '?')}): labgrid grants a place to a user, not "
            "a process, so both would switch one board; run one rig (one suite, one soak) "
            "per place at a time"
        )


def _write(fd: int, results_dir: Path | None, run: Path | None) -> None:
    info = {
        "pid": os.getpid(),
        "cmdline": "?" if (cmd := cmdline("self")) is None else cmd[:_CMDLINE_CHARS],
        "results_dir": str(results_dir) if results_dir else None,
        "run": str(run) if run else None,
    }
    with contextlib.suppress(OSError):  # only the refusal's message reads it
        data = json.dumps(info).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def note_run(folder: Path) -> None:
    """This process now measures into `folder`: a rig refused any of its claims is told."""
    with _GUARD:
        for fd, _ in _HELD.values():
            _write(fd, folder.parent, folder)


def _who(info: dict[str, Any]) -> str:
    pid = info.get("pid")
    if not isinstance(pid, int):
        return "a rig that did not say who it is"
    who = f"PID {pid}"
    if isinstance(cmd := info.get("cmdline"), str) and cmd:
        who += f" (`{cmd}`)"
    if isinstance(run := info.get("run"), str):
        who += f", measuring into {run}"
    elif isinstance(res := info.get("results_dir"), str):
        who += f", results in {res}"
    if not Path(f"/proc/{pid}").exists():
        who += ", now gone (a process it started still holds the claim)"
    return who
