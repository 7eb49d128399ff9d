"""InfluxDB sink throughput against a real private influxd (Debian's 1.x, 127.0.0.1).

1. Time to write one full report (5 stages, 500 initcalls, 2 advisories: 508 points) the
   way `rig run` does it (render + HTTP write + acknowledgement); target <= 50 ms.
2. Time to replay N spooled reports (default 10,000, ~5 M points) from the durable spool
   into the server; target >= 100,000 points/s. Every replayed boot is checked present.

The reference is the issue's targets; the ratios >= 1 mean a target is met.

    python bench/influx_write.py [--reports N] [--writes N] [--batch-points N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import Stopwatch, result  # noqa: E402
from rig.config.influx import InfluxSettings  # noqa: E402
from rig.sinks.influx.client import Client  # noqa: E402
from rig.sinks.influx.deliver import deliver  # noqa: E402
from rig.sinks.influx.points import report_lines, utc_to_ns  # noqa: E402
from rig.sinks.influx.replay import replay  # noqa: E402
from rig.sinks.influx.server import private_server  # noqa: E402
from rig.sinks.influx.spool import Spool, spool_dir  # noqa: E402
from tests.sample_report import sample_report  # noqa: E402

WRITE_MS_MAX = 50.0
REPLAY_PPS_MIN = 100_000.0


def boots_stored(client: Client, db: str) -> int:
    res = client.query('SELECT count("run_id") FROM "boot"', db)
    series = res[0].get("series")
    return int(series[0]["values"][0][1]) if series else 0


def bench_write(s: InfluxSettings, results: Path, n: int) -> dict[str, float]:
    times = []
    for i in range(n):
        report = sample_report(1_000_000 + i)
        with Stopwatch() as sw:
            d = deliver(report, s, results)
        times.append(sw.s * 1e3)
        assert d.status == "written", d.reason
    times.sort()
    return {
        "runs": n,
        "points": d.points,
        "median_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (n - 1))],
        "max_ms": times[-1],
    }


def fill_spool(spool: Spool, n: int) -> dict[str, float]:
    # Render one boot per index (real reports), spool each the way an outage does (fsync).
    put_ms = []
    points = 0
    for i in range(n):
        report = sample_report(i, spacing_s=60.0)
        lines = report_lines(report)
        with Stopwatch() as sw:
            spool.put(utc_to_ns(report.started_utc), report.run_id, lines, {"precision": "ns"})
        put_ms.append(sw.s * 1e3)
        points += len(lines)
    return {"points": points, "put_median_ms": statistics.median(put_ms)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reports", type=int, default=10_000, help="spooled reports to replay")
    ap.add_argument("--writes", type=int, default=50, help="single-report writes to time")
    ap.add_argument("--batch-points", type=int, default=InfluxSettings.batch_points)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bootrig-influx-bench-") as tmp:
        results = Path(tmp) / "results"
        with private_server(Path(tmp) / "influxd") as srv:
            s = InfluxSettings(url=srv.url, database="bench", batch_points=args.batch_points)
            with Client(s) as c:
                version = c.ping()
                c.create_database()
            write = bench_write(s, results, args.writes)
            print(
                f"one report ({write['points']} points): median {write['median_ms']:.2f} ms, "
                f"p95 {write['p95_ms']:.2f} ms over {args.writes} writes"
            )

            spool = Spool(spool_dir(results))
            with Stopwatch() as fill:
                filled = fill_spool(spool, args.reports)
            print(
                f"spooled {args.reports} reports ({filled['points']} points) in {fill.s:.1f} s "
                f"(fsynced put: median {filled['put_median_ms']:.2f} ms)"
            )

            with Stopwatch() as sw, Client(replace(s, timeout_s=60.0)) as c:
                res = replay(c, spool, s.batch_points)
            replay_s = sw.s
            assert res.error is None and res.left == 0, asdict(res)
            with Client(s) as c:
                stored = boots_stored(c, "bench")
            assert stored == args.reports + args.writes, stored
            pps = res.points / replay_s
            print(
                f"replayed {res.reports} reports, {res.points} points in {replay_s:.2f} s: "
                f"{pps:,.0f} points/s; {stored} boots stored"
            )

    ratio_write = WRITE_MS_MAX / write["median_ms"]
    ratio_replay = pps / REPLAY_PPS_MIN
    result(
        "influx_write",
        server=f"InfluxDB {version} (private influxd, 127.0.0.1)",
        cpus=os.cpu_count(),
        write_report={k: round(v, 3) for k, v in write.items()},
        replay={
            "reports": res.reports,
            "points": res.points,
            "seconds": round(replay_s, 3),
            "points_per_s": round(pps),
            "batch_points": s.batch_points,
            "spool_put_median_ms": round(filled["put_median_ms"], 3),
        },
        reference={
            "what": "issue targets",
            "write_report_ms_max": WRITE_MS_MAX,
            "replay_points_per_s_min": REPLAY_PPS_MIN,
        },
        ratio={
            "meaning": "measured against reference, >= 1 means the target is met",
            "write_report": round(ratio_write, 2),
            "replay": round(ratio_replay, 2),
        },
        target_met=ratio_write >= 1 and ratio_replay >= 1,
    )


if __name__ == "__main__":
    main()
