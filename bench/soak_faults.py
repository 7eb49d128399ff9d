"""Soak under fire: faults in the board, an InfluxDB outage and a SIGKILL of the rig.

Runs `rig soak` (as `python -m rig.soak`, a process of its own) for N cycles of the fast
simulated board with per-boot faults (default 5 % hang, 2 % panic, 2 % console lost,
1 % analyzer failure), a real private InfluxDB that is stopped for about 20 % of the
cycles, and one SIGKILL of the rig in the middle of that outage followed by
`rig soak --resume`. Then it checks the account:

- cycles run (cycle folders) / classified (journal lines with an outcome) / lost;
- outcomes against the simulator's truth (the rig decides from evidence; truth.json
  says what was injected), the cycle killed in flight excepted;
- InfluxDB points expected (from every report.json) / present / duplicated;
- the rig's overhead per cycle (median): run.json `timing.overhead_s`, and from the
  soak's own rhythm (cycle start to next cycle start, minus hold and boot);
- RSS growth of the rig process within a session, from the cycle by which every kind of
  cycle the session had (ok, hang, panic, ...) has run once, and after a 10-cycle warm-up.

Targets: every cycle classified, 0 lost, 0 duplicated, overhead median <= 100 ms,
RSS growth < 10 MB; the ratios >= 1 mean a target is met.

    python bench/soak_faults.py [--cycles 300] [--keep DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import result  # noqa: E402
from bench.harness.soak import (  # noqa: E402
    alive,
    children,
    cycles_done,
    expected,
    journal,
    soak_cmd,
)
from rig.artifacts import rundir  # noqa: E402
from rig.config.influx import InfluxSettings  # noqa: E402
from rig.sinks.influx.client import Client  # noqa: E402
from rig.sinks.influx.points import report_lines  # noqa: E402
from rig.sinks.influx.server import PrivateServer, free_port  # noqa: E402
from tests.e2e import make_config  # noqa: E402
from tests.sample_report import stored_run_ids  # noqa: E402

RATES = {"hang": 0.05, "panic": 0.02, "console_lost": 0.02, "analyzer": 0.01}
OVERHEAD_MAX_S = 0.100
OVERHEAD_BEFORE_S = 0.110  # run.json overhead median before this work (the figure)
RSS_GROWTH_MAX_MB = 10.0
WARMUP = 10
RSS_MIN_CYCLES = 100
DATABASE = "soak"
MEASUREMENTS = ("boot", "stage", "initcall", "advisory")
KNOWN = {"ok", "no_power_edge", "panic", "console_lost", "analyzer_error", "rig_error"}


def known(outcome: str) -> bool:
    """An outcome class the issue defines (plus missing_marker, see docs/soak.md)."""
    return outcome in KNOWN or outcome == "missing_marker" or outcome.startswith("hang_in_")


def write_config(tmp: Path, influx_url: str, rates: dict[str, Any], boot_s: float) -> Path:
    faults = "\n".join(f"{k} = {json.dumps(v)}" for k, v in rates.items())
    extra = f"""
[sim.faults]
{faults}

[influx]
url = "{influx_url}"
database = "{DATABASE}"
timeout_s = 1

[soak]
max_failure_rate = 0.5
"""
    # post_ui_s: one USB latency period and more, so the tag line's end still arrives.
    keys = {"boot_s": boot_s, "post_ui_s": 0.02}
    return make_config(tmp, extra=extra, set_keys=keys, name="soak.toml")


def check_truth(folder: Path, cycles: list[dict[str, Any]]) -> tuple[int, list[str]]:
    checked, wrong = 0, []
    for r in cycles:
        truth = folder / r["run_id"] / "truth.json"
        if not truth.is_file():
            continue  # the cycle killed in flight never stopped its capture
        boots = json.loads(truth.read_text())["boots"]
        want = expected(boots[0].get("fault") if boots else None)
        checked += 1
        if want is not None and r["outcome"] != want:
            wrong.append(f"{r['run_id']}: {r['outcome']}, truth {boots[0].get('fault')}")
    return checked, wrong


def influx_figures(url: str, folder: Path, cycles: list[dict[str, Any]]) -> dict[str, int]:
    expected_points = 0
    with_report = set()
    for r in cycles:
        report = folder / r["run_id"] / "report.json"
        if report.is_file():  # not there: killed before power-on, nothing to write
            expected_points += len(report_lines(rundir.read_report(report)))
            with_report.add(r["run_id"])
    with Client(InfluxSettings(url=url, database=DATABASE)) as c:
        present = 0
        for m in MEASUREMENTS:
            res = c.query(f'SELECT * FROM "{m}"', DATABASE)
            series = res[0].get("series") or [] if res else []
            present += sum(len(s["values"]) for s in series)
        ids = stored_run_ids(c, DATABASE)
    return {
        "expected": expected_points,
        "present": present,
        "duplicated": len(ids) - len(set(ids)),
        "boots_missing": len(with_report - set(ids)),
    }


def overheads(folder: Path, cycles: list[dict[str, Any]]) -> dict[str, float]:
    per_run = [r["overhead_s"] for r in cycles if isinstance(r.get("overhead_s"), float)]
    by_session: dict[int, list[dict[str, Any]]] = {}
    for r in cycles:
        if r.get("t_ns") is not None:
            by_session.setdefault(r["session"], []).append(r)
    periods = []
    for rs in by_session.values():
        rs.sort(key=lambda r: r["t_ns"])
        for a, b in itertools.pairwise(rs):
            if a.get("off_hold_s") is None or a.get("boot_s") is None:
                continue
            periods.append((b["t_ns"] - a["t_ns"]) / 1e9 - a["off_hold_s"] - a["boot_s"])
    return {
        "run_json_median_s": statistics.median(per_run),
        "per_cycle_median_s": statistics.median(periods),
        "per_cycle_p95_s": statistics.quantiles(periods, n=20)[-1],
    }


def _family(outcome: object) -> str:
    """hang_in_kernel and hang_in_init run the same code: one family."""
    return str(outcome).split("_in_")[0]


def rss_growth(cycles: list[dict[str, Any]]) -> dict[str, float | int]:
    """The rig's RSS growth within a session, counted once every kind of cycle the
    session had has run once (and after the warm-up): a kind's first cycle loads its code
    and buffers once, a step that is not a leak (the seeded faults decide when the first
    hang comes). `raw_mb` is the growth after the warm-up alone, as measured before."""
    growth, raw, window = [], [], 0
    for s in sorted({r["session"] for r in cycles}):
        recs = [r for r in cycles if r["session"] == s and r.get("rss_kb")]
        if len(recs) <= WARMUP:
            continue
        raw.append((recs[-1]["rss_kb"] - recs[WARMUP - 1]["rss_kb"]) / 1024)
        first: dict[str, int] = {}
        for i, r in enumerate(recs):
            first.setdefault(_family(r.get("outcome")), i)
        start = max(WARMUP - 1, *first.values())
        if start < len(recs) - 1:
            growth.append((recs[-1]["rss_kb"] - recs[start]["rss_kb"]) / 1024)
            window = max(window, len(recs) - 1 - start)
    return {
        "growth_mb": max(growth, default=0.0),
        "raw_mb": max(raw, default=0.0),
        "cycles_measured": window,
    }


def run(
    tmp: Path,
    cycles: int,
    rates: dict[str, Any] | None = None,
    boot_s: float = 2.0,
    say: Any = print,
) -> dict[str, Any]:
    """The whole scenario in `tmp`; returns the figures."""
    srv = PrivateServer(tmp / "influxd", free_port(), free_port())
    srv.start()
    try:
        config = write_config(tmp, srv.url, rates or RATES, boot_s)
        folder = tmp / "results" / "bench"
        down_at, up_at, kill_at = round(0.2 * cycles), round(0.4 * cycles), round(0.3 * cycles)
        t0 = time.monotonic()
        log = (tmp / "soak1.log").open("wb")
        proc = subprocess.Popen(
            soak_cmd(config, "--cycles", str(cycles), "--id", "bench"),
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        sims_left = 0
        try:
            while proc.poll() is None:
                done = cycles_done(folder)
                if done >= down_at and srv.proc is not None and done < up_at:
                    srv.stop()
                    say(f"cycle {done}: InfluxDB stopped")
                if done >= kill_at:
                    sims = children(proc.pid)
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    deadline = time.monotonic() + 5
                    while any(map(alive, sims)) and time.monotonic() < deadline:
                        time.sleep(0.05)
                    sims_left = sum(map(alive, sims))
                    say(f"cycle {done}: rig killed (SIGKILL); boards left running: {sims_left}")
                    break
                time.sleep(0.02)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
        log = (tmp / "soak2.log").open("wb")
        resumed = subprocess.Popen(
            soak_cmd(config, "--resume", "bench"), stdout=subprocess.PIPE, stderr=log
        )
        try:
            while resumed.poll() is None:
                if srv.proc is None and cycles_done(folder) >= up_at:
                    srv.start()
                    say(f"cycle {cycles_done(folder)}: InfluxDB started again")
                time.sleep(0.05)
            out = json.loads(resumed.stdout.read() if resumed.stdout else b"{}")
        finally:
            if resumed.poll() is None:
                resumed.kill()
            resumed.wait()
            log.close()
        if srv.proc is None:
            srv.start()
        wall = time.monotonic() - t0
        records = journal(folder)
        recs = [r for r in records if r.get("type") == "cycle"]
        run_ids = [r["run_id"] for r in recs]
        # Cycle folders only: the soak folder also holds the pages' shared assets.
        folders = {p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")}
        classified = {r["run_id"] for r in recs if known(str(r.get("outcome")))}
        checked, wrong = check_truth(folder, recs)
        return {
            "cycles_target": cycles,
            "cycles_run": len(folders),
            "classified": len(classified),
            "lost": len(folders - classified),
            "journal_duplicates": len(run_ids) - len(set(run_ids)),
            "recovered": sum(1 for r in recs if r.get("recovered")),
            "outcomes": dict(Counter(r["outcome"] for r in recs)),
            "truth_checked": checked,
            "misclassified": wrong,
            "influx": influx_figures(srv.url, folder, recs),
            "overhead": overheads(folder, recs),
            "rss": rss_growth(recs),
            "boards_left_after_kill": sims_left,
            "exit_code": resumed.returncode,
            "status": out.get("status"),
            "wall_s": wall,
        }
    finally:
        srv.stop()


def verdict(f: dict[str, Any]) -> dict[str, Any]:
    o = f["overhead"]
    worst_overhead = max(o["run_json_median_s"], o["per_cycle_median_s"])
    ratio = {
        "overhead": OVERHEAD_MAX_S / worst_overhead,
        "rss_growth": RSS_GROWTH_MAX_MB / max(f["rss"]["growth_mb"], 1e-3),
    }
    met = (
        f["lost"] == 0
        and f["classified"] == f["cycles_run"]
        and f["journal_duplicates"] == 0
        and f["influx"]["duplicated"] == 0
        and f["influx"]["present"] == f["influx"]["expected"]
        and not f["misclassified"]
        and f["boards_left_after_kill"] == 0
        and f["rss"]["cycles_measured"] >= RSS_MIN_CYCLES  # a leak needs cycles to show
        and all(r >= 1 for r in ratio.values())
    )
    return {"ratio": {k: round(v, 2) for k, v in ratio.items()}, "target_met": met}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=300)
    ap.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    args = ap.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        figures = run(args.keep, args.cycles)
    else:
        with tempfile.TemporaryDirectory(prefix="bootrig-soak-bench-") as tmp:
            figures = run(Path(tmp), args.cycles)
    f, o, i = figures, figures["overhead"], figures["influx"]
    print(f"cycles run {f['cycles_run']} / classified {f['classified']} / lost {f['lost']}")
    print(f"outcomes {f['outcomes']}; misclassified vs truth {len(f['misclassified'])}")
    print(
        f"influx points expected {i['expected']} / present {i['present']} / "
        f"duplicated {i['duplicated']}"
    )
    print(
        f"overhead per cycle: median {o['run_json_median_s'] * 1e3:.1f} ms (run.json), "
        f"{o['per_cycle_median_s'] * 1e3:.1f} ms (cycle to cycle, analysis included)"
    )
    rss = f["rss"]
    print(
        f"RSS growth {rss['growth_mb']:.2f} MB over the last {rss['cycles_measured']} cycles "
        f"(after the warm-up alone {rss['raw_mb']:.2f} MB); wall {f['wall_s']:.0f} s"
    )
    result(
        "soak_faults",
        figures=figures,
        reference={
            "lost": 0,
            "duplicated": 0,
            "overhead_median_s_max": OVERHEAD_MAX_S,
            "overhead_median_s_before": OVERHEAD_BEFORE_S,
            "rss_growth_mb_max": RSS_GROWTH_MAX_MB,
            "rss_cycles_measured_min": RSS_MIN_CYCLES,
            "fault_rates": RATES,
        },
        **verdict(figures),
    )


if __name__ == "__main__":
    main()
