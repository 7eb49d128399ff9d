"""Chaos bench: a soak of the fast board under rig-side faults struck at random points.

`rig soak` (a process of its own) soaks the simulated fast board into a private influxd
on 127.0.0.1 that the bench starts and always stops, its results on a small tmpfs the
bench mounts (root only) and always unmounts. At seeded random points the bench strikes:

- `sigterm` / `sigkill`: the rig is signalled (at a random moment of a cycle), then
  continued with `rig soak --resume`;
- `disk_full`: the results' disk is filled for a while (0.6-1.4 s), then freed;
- `influx_down`: influxd is stopped by its PID for a few cycles, then started again
  on the same port and data;
- `relay_lost`: during a boot, the relay's port vanishes (the simulated board closes
  its pty: a USB relay module dropping off the bus);
- `analyzer_slow`: the analyzer takes 0.5-2 s to start at the next arming.

Then it accounts (bench/harness/chaos_judge.py): every cycle folder's classification against
what the evidence the bench recorded calls for, cycles lost (no journal line, a doubled
one, no report, no InfluxDB point after the spool is flushed), processes of the rig
still running after it ended (orphans), raw bytes left in the results (capture.bin,
temporary files, the spool). Targets: every run classified correctly, 0 lost, 0
orphans, 0 bytes left.

    python bench/chaos.py [--cycles 300] [--seed N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness import chaos_env as env  # noqa: E402
from bench.harness.chaos_judge import Evidence, account  # noqa: E402
from bench.harness.result import result  # noqa: E402
from bench.harness.soak import soak_cmd  # noqa: E402
from rig.sinks.influx.server import PrivateServer, free_port  # noqa: E402
from tests.e2e import make_config  # noqa: E402

KINDS = ("sigterm", "sigkill", "disk_full", "influx_down", "relay_lost", "analyzer_slow")
DATABASE = "chaos"
SOAK_ID = "chaos"
DISK_MB = 256
_RUN_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")


@dataclass
class Strike:
    kind: str
    at: int  # strikes once this many cycle folders exist
    delay_s: float  # after that
    length: float  # disk_full: seconds; influx_down: cycles; analyzer_slow: its start


def plan(cycles: int, rng: random.Random, kinds_: tuple[str, ...] = KINDS) -> list[Strike]:
    """Every kind at least once (about one strike each per 50 cycles), spread out."""
    kinds = [k for k in kinds_ for _ in range(max(1, cycles // 50))]
    rng.shuffle(kinds)
    first, last = 3, cycles - 4
    span = (last - first) / len(kinds)
    if span < 2:
        raise ValueError(f"--cycles {cycles}: too few for every fault kind (at least 19)")
    out = []
    for i, kind in enumerate(kinds):
        at = first + int(i * span + rng.uniform(0, span / 2))
        length = {
            "disk_full": rng.uniform(0.6, 1.4),
            "influx_down": float(rng.randint(1, max(1, min(6, int(span) - 1)))),
            "analyzer_slow": rng.uniform(0.5, 2.0),
        }.get(kind, 0.0)
        out.append(Strike(kind, at, rng.uniform(0.0, 0.7), length))
    return out


class Chaos:
    def __init__(
        self, tmp: Path, cycles: int, seed: int, kinds: tuple[str, ...] = KINDS, say: Any = print
    ) -> None:
        self.tmp, self.cycles, self.seed, self.say, self.kinds = tmp, cycles, seed, say, kinds
        self.rng = random.Random(seed)
        self.strikes = plan(cycles, self.rng, kinds)
        self.token = secrets.token_hex(8)
        self.rig_tmp = Path(tempfile.mkdtemp(prefix="bootrig-chaos-"))  # short: AF_UNIX paths
        self.disk = env.SmallDisk(tmp / "disk", DISK_MB)
        self.srv = PrivateServer(tmp / "influxd", free_port(), free_port())
        self.soak = tmp / "disk" / "results" / SOAK_ID
        self.order: list[str] = []
        self.seen: dict[str, int] = {}
        self.ends: dict[str, int] = {}
        self.evidence: list[Evidence] = []
        self.sessions: list[dict[str, Any]] = []
        self.orphans: list[str] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self.signalled: Evidence | None = None
        self.timers: list[tuple[int, Any]] = []  # (due ns, action)
        self.influx_up_at: int | None = None  # folder count that brings influxd back
        self.config = Path()

    # -- the rig -------------------------------------------------------------------
    def start_session(self, *args: str) -> None:
        n = len(self.sessions) + 1
        proc_env = {**os.environ, "TMPDIR": str(self.rig_tmp), env.TOKEN_VAR: self.token}
        log = (self.tmp / f"session{n}.log").open("wb")
        self.proc = subprocess.Popen(
            soak_cmd(self.config, *args), stdout=subprocess.PIPE, stderr=log, env=proc_env,
            cwd=REPO,
        )  # fmt: skip
        log.close()
        self.sessions.append({"session": n, "args": list(args)})

    def session_ended(self) -> dict[str, Any]:
        assert self.proc is not None
        out = b""
        if self.proc.stdout is not None:
            out = self.proc.stdout.read()
            self.proc.stdout.close()
        code = self.proc.wait()
        now = time.monotonic_ns()
        self.poll_folders()
        if self.order:
            self.ends[self.order[-1]] = now
        info = self.sessions[-1]
        info["exit_code"] = code
        try:
            doc = json.loads(out)
            info["status"] = doc.get("status")
            if doc.get("error"):
                info["error"] = doc["error"]
        except ValueError:
            info["status"] = None
        # What the rig left running: its board notices within half a second.
        left = env.wait_gone(self.token, 3.0)
        self.orphans += [cmd for _, cmd in left]
        env.end_processes(left)
        self.proc = None
        return info

    def poll_folders(self) -> None:
        try:
            names = [p.name for p in self.soak.iterdir() if _RUN_ID.match(p.name)]
        except OSError:
            return
        now = time.monotonic_ns()
        for name in sorted(names):
            if name not in self.seen:
                self.seen[name] = now
                self.order.append(name)

    # -- faults --------------------------------------------------------------------
    def strike(self, s: Strike) -> None:
        now = time.monotonic_ns()
        due = now + round(s.delay_s * 1e9)
        if s.kind in ("sigterm", "sigkill"):
            self.timers.append((due, lambda: self.signal(s.kind)))
        elif s.kind == "disk_full":
            self.timers.append((due, lambda: self.fill(s.length)))
        elif s.kind == "influx_down":
            self.influx_down(int(s.length))
        else:
            self.timers.append((now, lambda: self.at_power_on(s)))

    def signal(self, kind: str) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        ev = Evidence(kind, time.monotonic_ns())
        os.kill(self.proc.pid, signal.SIGTERM if kind == "sigterm" else signal.SIGKILL)
        self.signalled = ev
        self.evidence.append(ev)

    def fill(self, seconds: float) -> None:
        ev = Evidence("disk_full", time.monotonic_ns())
        ev.detail["bytes"] = self.disk.fill()
        self.evidence.append(ev)
        self.timers.append((ev.t_ns + round(seconds * 1e9), lambda: self.unfill(ev)))

    def unfill(self, ev: Evidence) -> None:
        self.disk.free()
        ev.end_ns = time.monotonic_ns()

    def influx_down(self, cycles: int) -> None:
        if self.srv.proc is None:
            return
        self.srv.stop()
        self.evidence.append(Evidence("influx_down", time.monotonic_ns()))
        self.influx_up_at = len(self.order) + cycles

    def influx_up(self) -> None:
        if self.srv.proc is None:
            self.srv.start()
            for ev in self.evidence:
                if ev.kind == "influx_down" and ev.end_ns is None:
                    ev.end_ns = time.monotonic_ns()
        self.influx_up_at = None

    def at_power_on(self, s: Strike, deadline: int | None = None) -> None:
        """relay_lost / analyzer_slow: once the cycle in flight has armed its analyzer
        and is powering the board on (its run.json is written just before)."""
        now = time.monotonic_ns()
        deadline = deadline or now + 5_000_000_000
        name = self.order[-1] if self.order else None
        ctl = env.sim_control(self.rig_tmp)
        ready = name and (self.soak / name / "run.json").exists() and ctl is not None
        if not ready or ctl is None or not ctl.status()["powered"]:
            if now < deadline:
                self.timers.append((now + 10_000_000, lambda: self.at_power_on(s, deadline)))
            return
        if s.kind == "relay_lost":
            ctl.call({"cmd": "inject", "fault": "relay-lost"})
            ev = Evidence("relay_lost", time.monotonic_ns(), folder=name)
        else:
            ctl.call({"cmd": "inject", "fault": "analyzer-slow", "delay_s": s.length})
            ev = Evidence("analyzer_slow", time.monotonic_ns(), detail={"delay_s": s.length})
            ev.detail["after"] = name  # the next cycle's arming is the slow one
        self.evidence.append(ev)

    # -- the soak ------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        t0 = time.monotonic()
        self.disk.mount()
        try:
            self.srv.start()
            try:
                return self._soak(t0)
            finally:
                if self.proc is not None and self.proc.poll() is None:
                    self.proc.kill()
                    self.session_ended()
                self.srv.stop()
        finally:
            left = env.marked_processes(self.token)
            env.end_processes(left)
            self.orphans += [cmd for _, cmd in left]
            env.copy_results(self.disk.mountpoint / "results", self.tmp / "results")
            self.disk.unmount()
            shutil.rmtree(self.rig_tmp, ignore_errors=True)

    def _soak(self, t0: float) -> dict[str, Any]:
        extra = f"""
[influx]
url = "{self.srv.url}"
database = "{DATABASE}"
timeout_s = 1

[soak]
max_failure_rate = 1.0
"""
        keys = {"boot_s": 2.0, "post_ui_s": 0.02, "seed": self.seed}
        self.config = make_config(self.disk.mountpoint, extra=extra, set_keys=keys,
                                  name="chaos.toml")  # fmt: skip
        strikes = list(self.strikes)
        self.start_session("--cycles", str(self.cycles), "--id", SOAK_ID)
        unexpected = 0
        while True:
            self.poll_folders()
            n = len(self.order)
            while strikes and strikes[0].at <= n and self.proc is not None:
                self.strike(strikes.pop(0))
            if self.influx_up_at is not None and n >= self.influx_up_at:
                self.influx_up()
            now = time.monotonic_ns()
            for timer in [t for t in self.timers if t[0] <= now]:
                self.timers.remove(timer)
                timer[1]()
            if self.proc is not None and self.proc.poll() is not None:
                info = self.session_ended()
                ev, self.signalled = self.signalled, None
                if ev is not None:
                    ev.folder = self.order[-1] if self.order else None
                    ev.detail["exit_code"] = info["exit_code"]
                    if ev.kind == "sigkill":
                        ev.state = _state(self.soak / ev.folder) if ev.folder else None
                    self.say(f"{len(self.order)} folders: {ev.kind}, exit {info['exit_code']}")
                elif info["exit_code"] == 0 and info["status"] == "completed":
                    break
                else:
                    unexpected += 1
                    info["unexpected"] = True
                    why = info.get("error", "")
                    self.say(f"{len(self.order)} folders: the rig exited {info['exit_code']} {why}")
                    if unexpected > 5:
                        raise RuntimeError(f"the rig keeps failing: {self.sessions[-1]}")
            if self.proc is None and not self.disk.full():
                if self.influx_up_at is not None and not strikes:
                    self.influx_up()
                self.start_session("--resume", str(self.soak))
            time.sleep(0.01)
        for timer in sorted(self.timers, key=lambda t: t[0]):  # a strike left pending
            timer[1]()
        self.influx_up()
        return self.figures(t0)

    def figures(self, t0: float) -> dict[str, Any]:
        for ev in self.evidence:  # the slow start is the next cycle's arming
            if ev.kind == "analyzer_slow" and ev.detail["after"] in self.order:
                i = self.order.index(ev.detail["after"]) + 1
                ev.folder = self.order[i] if i < len(self.order) else None
        acc = account(self.soak, self.order, self.seen, self.ends, self.evidence,
                      self.srv.url, DATABASE)  # fmt: skip
        left = env.leftovers(self.soak.parent)
        return {
            "cycles_target": self.cycles,
            "seed": self.seed,
            "kinds": list(self.kinds),
            "runs": acc["runs"],
            "classified_correctly": acc["classified_correctly"],
            "misclassified": acc["misclassified"],
            "lost": len(acc["lost"]),
            "lost_detail": acc["lost"],
            "orphans": len(self.orphans),
            "orphan_commands": self.orphans,
            "bytes_left": sum(size for _, size in left),
            "leftovers": [path for path, _ in left],
            "faults": dict(Counter(ev.kind for ev in self.evidence)),
            "evidence": [ev.to_json() for ev in self.evidence],
            "sessions": self.sessions,
            "rig_exits": [s for s in self.sessions if s.get("unexpected")],
            "wall_s": round(time.monotonic() - t0, 1),
        }


def _state(folder: Path) -> str:
    """What a killed cycle's folder says: no run.json, a capture in progress, or done."""
    try:
        run = json.loads((folder / "run.json").read_text())
    except (OSError, ValueError):
        return "no_run"
    return "completed" if run.get("completed_utc") else "running"


def run(
    tmp: Path, cycles: int, seed: int, kinds: tuple[str, ...] = KINDS, say: Any = print
) -> dict[str, Any]:
    """The whole scenario in `tmp` (results copied to tmp/results); returns the figures."""
    return Chaos(tmp, cycles, seed, kinds, say).run()


def verdict(f: dict[str, Any]) -> dict[str, Any]:
    every_kind = all(f["faults"].get(k) for k in f["kinds"])
    met = (
        f["classified_correctly"] == f["runs"] > 0
        and f["lost"] == 0
        and f["orphans"] == 0
        and f["bytes_left"] == 0
        and every_kind
    )
    ratio = f["classified_correctly"] / f["runs"] if f["runs"] else 0.0
    return {"ratio": {"classified_correctly": round(ratio, 4)}, "target_met": met}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=300)
    ap.add_argument("--seed", type=int, help="Seed of the strikes (default: random).")
    ap.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    ap.add_argument("--kinds", default=",".join(KINDS), help="Strike only these kinds.")
    args = ap.parse_args()
    kinds = tuple(k for k in args.kinds.split(",") if k)
    if not kinds or set(kinds) - set(KINDS):
        ap.error(f"--kinds: a comma-separated list of {', '.join(KINDS)}")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    print(f"seed {seed}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        f = run(args.keep, args.cycles, seed, kinds)
    else:
        with tempfile.TemporaryDirectory(prefix="bootrig-chaos-") as tmp:
            f = run(Path(tmp), args.cycles, seed, kinds)
    wrong = Counter(m.rsplit("(", 1)[-1].rstrip(")") for m in f["misclassified"])
    for kind in kinds:
        print(f"{kind:14} struck {f['faults'].get(kind, 0):3}  misclassified {wrong.get(kind, 0)}")
    print(
        f"runs {f['runs']} / classified correctly {f['classified_correctly']} / lost "
        f"{f['lost']} / orphans {f['orphans']} / bytes left {f['bytes_left']}; "
        f"wall {f['wall_s']:.0f} s"
    )
    for line in f["misclassified"] + f["lost_detail"] + f["orphan_commands"] + f["leftovers"]:
        print(f"  {line}")
    reference = {"classified_correctly": "runs", "lost": 0, "orphans": 0, "bytes_left": 0,
                 "every_fault_kind": list(kinds)}  # fmt: skip
    figures = {k: v for k, v in f.items() if k not in ("evidence", "sessions")}
    result("chaos", figures=figures, reference=reference, **verdict(f))


if __name__ == "__main__":
    main()
