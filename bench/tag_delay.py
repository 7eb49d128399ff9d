"""The print path of each hook on the QEMU target: how long after its GPIO write the
hook's console tag is stamped, read from QEMU's own traces (no analysis involved).

Boots a QEMU target N times console-only with a second trace event, `pl011_write` (each
byte the guest writes to the console UART, stamped on the same wall clock as the GPIO
trace). The printk clock maps onto that clock through the least (first byte written -
printk stamp) over the stamped lines: a line printed while nothing is queued is written
microseconds after its stamp, so the map is late by that much and the delays below are
overstated by it, never understated. A tag's delay is its stamp on the wall clock minus
its traced GPIO edge (a tag without a stamp, U-Boot's: its first byte written): the
hook's print path, which a run without the GPIO cannot see and the analysis bounds
(`HOOK_BOUND_S` in rig/analysis/events.py). Each boot also gives the lag of QMP RESUME
behind the power-on command (a console-only run's t = 0) and the host's load.

The result line: per marker the delays (min, median, max, the boots), the bound the
analysis states, the ratio max/bound and "target_met" (every delay within its marker's
bound).

    python bench/tag_delay.py [--config config/qemu-arm64-stock.toml] [--boots N] [--keep DIR]
    python bench/tag_delay.py DIR...    # re-read boots kept with --keep
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import result  # noqa: E402
from rig.analysis.events import DEFAULT_HOOK_BOUND_S, HOOK_BOUND_S, first_tags  # noqa: E402
from rig.analysis.lines import split_lines  # noqa: E402
from rig.instruments.drivers import load_config  # noqa: E402
from rig.instruments.qemu.reference import reference_edges  # noqa: E402
from rig.instruments.setup import Instruments  # noqa: E402
from rig.measure.cycle import run_cycle  # noqa: E402
from rig.model import Chunk  # noqa: E402

DEFAULT_CONFIG = REPO / "config" / "qemu-arm64-stock.toml"
CONSOLE_EVENT = "pl011_write"
#: A write to the data register (offset 0): one console byte.
_DR = re.compile(r"^\d+@(\d+)\.(\d{6}):pl011_write addr 0x0+ value 0x([0-9a-f]+)\s*$")


def console_writes(folder: Path, resume_us: int) -> list[Chunk]:
    """Each console byte the guest wrote, as a one-byte read stamped when it was written
    (ns from power-on: QMP RESUME)."""
    out = []
    for line in (folder / "qemu-trace.log").read_text(errors="replace").splitlines():
        m = _DR.match(line)
        if m:
            wall_us = int(m.group(1)) * 1_000_000 + int(m.group(2))
            out.append(Chunk((wall_us - resume_us) * 1000, bytes([int(m.group(3), 16) & 0xFF])))
    return out


def measure(folder: Path) -> dict[str, Any]:
    info = json.loads((folder / "qemu.json").read_text(encoding="utf-8"))
    resume = info["resume_wall_us"]
    edges = reference_edges(folder)
    lines = split_lines(console_writes(folder, resume))
    stamped = [ln for ln in lines if ln.printk_ts is not None]
    if not stamped:
        raise SystemExit(
            f"{folder}: no console writes in the trace (booted without {CONSOLE_EVENT}?)"
        )
    offset = min(ln.t_ns / 1e9 - ln.printk_ts for ln in stamped if ln.printk_ts is not None)
    delays = {}
    for name, ln in first_tags(lines).items():
        if name in edges:
            t = ln.t_ns / 1e9 if ln.printk_ts is None else ln.printk_ts + offset
            delays[name] = t - edges[name]
    cmd = info.get("command_wall_us")
    lag = (resume - cmd) / 1e6 if isinstance(cmd, int) else None
    return {"boot": folder.name, "delays_s": delays, "resume_lag_s": lag}


def boot(config: Path, n: int, keep: Path | None) -> list[dict[str, Any]]:
    cfg = load_config(config, overrides=['analyzer.driver="none"'])
    rows = []
    with tempfile.TemporaryDirectory() as tmpd:
        cfg = dataclasses.replace(cfg, results_dir=Path(tmpd))
        with Instruments(cfg) as bench:
            machine = bench.power.machine  # type: ignore[attr-defined]
            machine.trace_events += (CONSOLE_EVENT,)
            machine.launch()  # the first QEMU was started without it
            for k in range(n):
                res = run_cycle(cfg, bench)
                load = Path("/proc/loadavg").read_text().split()[0]
                if keep is not None:
                    shutil.copytree(res.folder, keep / f"{res.folder.name}", dirs_exist_ok=True)
                rows.append({**measure(res.folder), "load1": float(load)})
                show(rows[-1], k)
    return rows


def show(row: dict[str, Any], k: int) -> None:
    d = " ".join(f"{n} {v * 1e3:7.3f} ms" for n, v in row["delays_s"].items())
    lag = row["resume_lag_s"]
    lag_s = f"lag {lag * 1e3:.3f} ms" if lag is not None else "lag ?"
    print(f"boot {k}: {d}  {lag_s}  load {row.get('load1', '?')}", file=sys.stderr)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted({n for r in rows for n in r["delays_s"]}):
        v = [r["delays_s"][name] for r in rows if name in r["delays_s"]]
        bound = HOOK_BOUND_S.get(name, DEFAULT_HOOK_BOUND_S)
        out[name] = {
            "n": len(v),
            "min_ms": min(v) * 1e3,
            "median_ms": statistics.median(v) * 1e3,
            "max_ms": max(v) * 1e3,
            "bound_ms": bound * 1e3,
            "max_over_bound": max(v) / bound,
            "over_bound": sum(x > bound or x < 0 for x in v),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("boots_dirs", nargs="*", type=Path, help="boots kept with --keep")
    ap.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    ap.add_argument("--boots", type=int, default=10)
    ap.add_argument("--keep", type=Path, help="keep each boot's artifacts here")
    args = ap.parse_args()
    if args.boots_dirs:
        rows = [measure(d) for d in sorted(args.boots_dirs)]
        for k, r in enumerate(rows):
            show(r, k)
    else:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
        rows = boot(args.config, args.boots, args.keep)
    markers = summary(rows)
    lags = [r["resume_lag_s"] * 1e3 for r in rows if r["resume_lag_s"] is not None]
    result(
        "tag_delay",
        boots=len(rows),
        markers=markers,
        resume_lag_ms={"min": min(lags), "max": max(lags)} if lags else None,
        load1=[r.get("load1") for r in rows],
        reference="QEMU traces: pl061_set_output (GPIO) and pl011_write (console bytes)",
        ratio={n: m["max_over_bound"] for n, m in markers.items()},
        target_met=bool(markers) and all(m["over_bound"] == 0 for m in markers.values()),
    )


if __name__ == "__main__":
    main()
