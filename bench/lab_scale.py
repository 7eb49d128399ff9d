"""Boots per minute and the rig's overhead per cycle with N boards in one labgrid lab.

A real labgrid coordinator and exporter (tests/labgrid_boards.py) export 8 simulated
boards of the fast profile (~0.3 s power-to-UI) as places b1..b8, each console behind a
real ser2net; one private influxd takes the points of every run (one database per N, so
they can be counted apart). For each N in 1, 2, 4, 8: `rig soak --places b1,..,bN
--cycles K` (one soak child per place, all at once, as a lab runs its nightly soak), and
around it the wall time, the host's CPU busy fraction (/proc/stat), the CPU time of the
coordinator, the exporter, the ser2nets and influxd (/proc/<pid>/stat, by the PIDs this
bench started) and of the rig itself (RUSAGE_CHILDREN: the soak and everything it waited
for, the simulated boards included), the points that landed in the database and the
bytes the soaks left on disk.

Figures per N: boots per minute (ok cycles / wall minutes of the soak command, start-up
and the places' acquire and release included), the overhead per cycle (each soak's
summary `overhead` p50: wall - hold - boot, docs/soak.md; the median and the max over the
places), and per boot: points, bytes, and CPU seconds of each process.

Targets (issue 14): throughput grows from N = 1 to N = 2, and from N = 2 to N = 4 unless
the cores are the limit at N = 4 (the host's CPU busy fraction over that soak >= 90 %);
the overhead p50 at N = 4 at most twice that at N = 1 (`ratio` = overhead(4) /
overhead(1), <= 2 met); every cycle of every soak run. N = 8 is reported, not judged:
8 boards, each simulated on this host, on 2 cores.

    python bench/lab_scale.py [--cycles 60] [--ns 1,2,4,8]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import result, rig_json, skipped  # noqa: E402
from rig.config.influx import InfluxSettings  # noqa: E402
from rig.sinks.influx.client import Client  # noqa: E402
from rig.sinks.influx.server import PrivateServer, private_server  # noqa: E402
from tests.labgrid_boards import BoardLab, boards  # noqa: E402
from tests.labgrid_lab import LABGRID_BIN  # noqa: E402

NS = (1, 2, 4, 8)
HOLD_S = 0.1
#: The host's cores are the limit when they are this busy over a soak.
SATURATED = 0.90
OVERHEAD_RATIO_MAX = 2.0
_TICK = os.sysconf("SC_CLK_TCK")
REFERENCE = {
    "throughput": "grows N=1->2, and N=2->4 unless cpu_busy(N=4) >= "
    f"{SATURATED:.0%} (the cores are the limit)",
    "overhead_ratio_max": OVERHEAD_RATIO_MAX,
    "saturated_cpu_busy": SATURATED,
}


def proc_cpu_s(pid: int | None) -> float:
    """utime + stime of a live process, seconds (0 once it is gone)."""
    if pid is None:
        return 0.0
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text.rpartition(")")[2].split()  # the name may hold spaces and parentheses
    return (int(fields[11]) + int(fields[12])) / _TICK


def host_jiffies() -> tuple[int, int]:
    """(busy, total) over all cores since boot, from /proc/stat's first line."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait: nothing to run
    total = sum(values[:8])  # guest time is already in user
    return total - idle, total


def own_children(comm: str) -> list[int]:
    """PIDs of this process's children named `comm` (the ser2nets tests/ser2net.py started;
    it keeps no handle we could ask)."""
    pids: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == comm:
                    pids.append(int(pid))
            except OSError:
                continue
    return pids


@dataclass
class Probe:
    """What the lab's processes and the host have used so far."""

    t: float
    busy: int
    total: int
    cpu: dict[str, float]

    @classmethod
    def take(cls, bl: BoardLab, srv: PrivateServer) -> Probe:
        coordinator, exporter = bl.lab.procs[0].pid, bl.lab.procs[1].pid  # started in order
        rig = resource.getrusage(resource.RUSAGE_CHILDREN)
        busy, total = host_jiffies()
        return cls(
            time.monotonic(),
            busy,
            total,
            {
                "coordinator": proc_cpu_s(coordinator),
                "exporter": proc_cpu_s(exporter),
                "ser2net": sum(proc_cpu_s(p) for p in own_children("ser2net")),
                "influxd": proc_cpu_s(srv.pid),
                "rig": rig.ru_utime + rig.ru_stime,
            },
        )


def count_points(srv: PrivateServer, database: str) -> dict[str, int]:
    """Points stored in `database`, by measurement: every point is one row of its series
    when grouped by all tags (the same time under other tags is another point)."""
    with Client(InfluxSettings(url=srv.url, database=database)) as c:
        rows = c.query("SELECT * FROM /.*/ GROUP BY *", database)
    out: dict[str, int] = {}
    for r in rows:
        if "error" in r:
            raise SystemExit(f"counting the points of {database}: {r['error']}")
        for s in r.get("series", []):
            out[s["name"]] = out.get(s["name"], 0) + len(s["values"])
    return out


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(bl: BoardLab, srv: PrivateServer, n: int, cycles: int, tmp: Path) -> dict[str, Any]:
    """One soak of places b1..bN, `cycles` each, into database `labN`: its figures."""
    database = f"lab{n}"
    sink = f'\n[influx]\nurl = "{srv.url}"\ndatabase = "{database}"\ntimeout_s = 5\n'
    places = bl.boards[:n]
    configs = [
        b.config(tmp / f"n{n}" / b.place, extra=sink, off_hold_s=HOLD_S, name=f"{b.place}.toml")
        for b in places
    ]
    own = [f"--place-config={b.place}={c}" for b, c in zip(places, configs, strict=True)][1:]
    argv = ["soak", "--config", str(configs[0]), "--places", ",".join(b.place for b in places),
            "--cycles", str(cycles), "--id", f"scale{n}", "--json", *own]  # fmt: skip
    before = Probe.take(bl, srv)
    # exit 1, a board failure, is still a figure
    doc = rig_json(*argv, timeout=120 + 10 * cycles * n, codes=(0, 1))
    after = Probe.take(bl, srv)
    load1 = os.getloadavg()[0]
    failed = [f"{p['place']}: {p['error']}" for p in doc["places"] if not p["soak"]]
    if failed:  # a place that never soaked has no figures to give
        raise SystemExit(f"rig soak N={n}: " + "; ".join(failed))
    soaks = [p["soak"] for p in doc["places"]]
    ok = sum(s["outcomes"].get("ok", 0) for s in soaks)
    run = sum(s["cycles"]["run"] for s in soaks)
    overheads = [s["overhead"]["p50"] for s in soaks]
    wall = after.t - before.t
    points = count_points(srv, database)
    boot_points = sum(v for k, v in points.items() if k != "soak")  # one soak point a place
    # A boot's run folder, apart from what each soak keeps once (journal, summary, the
    # shared plotly.js): the first grows with boots, the second with soaks.
    runs = [d for s in soaks for d in Path(s["folder"]).iterdir() if (d / "run.json").is_file()]
    run_bytes = sum(folder_bytes(d) for d in runs)
    soak_bytes = sum(folder_bytes(Path(s["folder"])) for s in soaks) - run_bytes
    cpu = {k: after.cpu[k] - before.cpu[k] for k in after.cpu}
    cores = os.cpu_count() or 1
    per_boot = max(ok, 1)
    return {
        "n": n,
        "cycles_per_place": cycles,
        "cycles_run": run,
        "ok": ok,
        "exit_code": doc["exit_code"],
        "wall_s": wall,
        "boots_per_min": ok / (wall / 60),
        "overhead_p50_s": statistics.median(overheads),
        "overhead_p50_max_s": max(overheads),
        # the host's cores, whoever used them; and the share the lab and the rig used
        "cpu_busy": (after.busy - before.busy) / max(after.total - before.total, 1),
        "cpu_busy_own": sum(cpu.values()) / (wall * cores),
        "loadavg_1m": load1,
        "cores": cores,
        "cpu_s": cpu,
        "cpu_s_per_boot": {k: v / per_boot for k, v in cpu.items()},
        # The coordinator only sees a place's acquire, release and its client's session,
        # never a boot (power goes to the PDU, the console to ser2net): per place-second.
        "coordinator_cpu_s_per_place_s": cpu["coordinator"] / (wall * n),
        "points": points,
        "points_per_boot": boot_points / per_boot,
        "soak_points_per_place": points.get("soak", 0) / n,
        "bytes_per_boot": run_bytes / per_boot,
        "bytes_per_soak": soak_bytes / n,
    }


def judge(figures: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets on the measured figures (N = 1, 2, 4 must all be there)."""
    bpm = {n: f["boots_per_min"] for n, f in figures.items()}
    saturated_4 = figures[4]["cpu_busy"] >= SATURATED
    ratio = figures[4]["overhead_p50_s"] / max(figures[1]["overhead_p50_s"], 1e-9)
    checks = {
        "grows_1_to_2": bpm[2] > bpm[1],
        "grows_2_to_4_or_cores_limit": bpm[4] > bpm[2] or saturated_4,
        "overhead_4_within_2x_of_1": ratio <= OVERHEAD_RATIO_MAX,
        "every_cycle_ran": all(
            f["cycles_run"] == f["n"] * f["cycles_per_place"] for f in figures.values()
        ),
    }
    return {"ratio": ratio, "saturated_at_4": saturated_4, "checks": checks}


def table(figures: dict[int, dict[str, Any]]) -> str:
    head = (f"{'N':>2} {'ok':>5} {'wall s':>7} {'boots/min':>9} {'ovh p50 ms':>10} "
            f"{'(max)':>7} {'CPU busy':>8} {'(own)':>6} {'load':>5} {'rig CPU/boot':>12} "
            f"{'coord ms/boot':>13} {'influxd ms/boot':>15} {'pts/boot':>8} "
            f"{'kB/boot':>8}")  # fmt: skip
    lines = [head]
    for f in figures.values():
        c = f["cpu_s_per_boot"]
        lines.append(
            f"{f['n']:>2} {f['ok']:>5} {f['wall_s']:>7.1f} {f['boots_per_min']:>9.1f} "
            f"{f['overhead_p50_s'] * 1e3:>10.1f} {f['overhead_p50_max_s'] * 1e3:>7.1f} "
            f"{f['cpu_busy']:>8.0%} {f['cpu_busy_own']:>6.0%} {f['loadavg_1m']:>5.2f} "
            f"{c['rig']:>10.3f} s "
            f"{c['coordinator'] * 1e3:>13.2f} {c['influxd'] * 1e3:>15.2f} "
            f"{f['points_per_boot']:>8.1f} {f['bytes_per_boot'] / 1e3:>8.1f}"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=60, help="cycles per place")
    ap.add_argument("--ns", default=",".join(map(str, NS)), help="board counts, 1,2,4 needed")
    args = ap.parse_args()
    ns = sorted({int(v) for v in args.ns.split(",")})
    if not (LABGRID_BIN / "labgrid-coordinator").is_file():
        why = f"labgrid's environment {LABGRID_BIN.parent} is missing: make labgrid"
        skipped("lab_scale", why, REFERENCE)
        return
    figures: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bootrig-lab-scale-") as t:
        tmp = Path(t)
        with private_server(tmp / "influxd") as srv, boards(tmp, ["fast.toml"] * max(ns)) as bl:
            for n in ns:
                figures[n] = measure(bl, srv, n, args.cycles, tmp)
                f = figures[n]
                print(f"N={n}: {f['ok']} ok boots in {f['wall_s']:.1f} s", file=sys.stderr)
    print(table(figures))
    verdict = judge(figures) if {1, 2, 4} <= set(figures) else None
    if verdict:
        for name, ok in verdict["checks"].items():
            print(f"{name}: {'met' if ok else 'NOT met'}")
    result(
        "lab_scale",
        figures={str(n): f for n, f in figures.items()},
        reference={
            **REFERENCE,
            "host_cores": os.cpu_count(),
            "hold_s": HOLD_S,
            "checks": verdict["checks"] if verdict else None,
        },
        ratio=verdict["ratio"] if verdict else None,
        ratio_is="overhead_p50(N=4) / overhead_p50(N=1); <= 2 met",
        target_met=bool(verdict and all(verdict["checks"].values())),
    )


if __name__ == "__main__":
    main()
