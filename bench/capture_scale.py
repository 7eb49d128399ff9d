"""Bounded cost of big captures: a 20 s, 24 MHz raw capture (480 M samples), once sparse
(power, four markers, an idle console) and once with one mapped channel toggling every
two samples (a floating probe or a clock on the wrong channel).

For each, in a fresh process so the peak is its own, it times and measures the peak RSS
of the conversion of the raw `-O binary` file to `.sr` (what every `rig run` does after
the capture stops) and of the analysis of that `.sr` (`rig analyze`'s fast engine).
Targets: at most 300 MB peak for each; the dense channel reported as such, the other
boundaries exact. The rig's overhead per cycle in a soak with a 24 MHz analyzer is
bench/soak_overhead.py's.

    python bench/capture_scale.py [--seconds 20] [--rate 24000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import result  # noqa: E402

LIMIT_MB = 300.0
CHANNELS = ["power", "bootm", "do_mount_root", "kernel_init", "ui_ready", "uart_tx"]
BLOCK = 1 << 24


def write_raw(path: Path, samples: int, rate: int, dense: bool) -> dict[str, int]:
    """Power at 1 ms, markers at fixed fractions, console idle high; truth in samples."""
    truth = {"power": rate // 1000}
    for i, m in enumerate(CHANNELS[1:5]):
        truth[m] = samples * (i + 1) // 6
    with path.open("wb") as f:
        for start in range(0, samples, BLOCK):
            n = min(BLOCK, samples - start)
            idx = np.arange(start, start + n, dtype=np.int64)
            block = np.full(n, 1 << 5, dtype=np.uint8)  # uart_tx idles high
            for bit, name in enumerate(CHANNELS[:5]):
                block |= ((idx >= truth[name]).astype(np.uint8)) << bit
            if dense:  # ui_ready (bit 4) wired to a clock instead
                block = (block & ~np.uint8(1 << 4)) | (((idx >> 1) & 1).astype(np.uint8) << 4)
            f.write(block.tobytes())
    return truth


CHILD = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from rig.artifacts.srzip import convert_binary
from rig.artifacts.fastscan import scan_capture
what, raw, sr = sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
t = time.perf_counter()
out = {}
if what == "convert":
    out["samples"] = convert_binary(raw, sr, json.loads(sys.argv[5]), int(sys.argv[6]))
else:
    r = scan_capture(sr, 0.0)
    out = {"power_up": list(r.markers.power_up), "dense": r.markers.dense,
           "edges": {k: list(v[:1]) for k, v in r.markers.edges.items()}}
out["seconds"] = time.perf_counter() - t
# VmHWM: this process's own peak (ru_maxrss would include the parent's at fork).
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
out["peak_mb"] = int(hwm.split()[1]) / 1024
print(json.dumps(out))
"""


def child(*args: str) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(REPO), *args], capture_output=True, text=True, check=False
    )
    if p.returncode != 0:
        raise SystemExit(f"capture_scale: child failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rate", type=int, default=24_000_000)
    args = ap.parse_args()
    samples = int(args.seconds * args.rate)
    cases = {}
    with tempfile.TemporaryDirectory(prefix="bootrig-scale-") as tmp:
        for name, dense in (("sparse", False), ("dense", True)):
            raw, sr = Path(tmp) / f"{name}.bin", Path(tmp) / f"{name}.sr"
            truth = write_raw(raw, samples, args.rate, dense)
            conv = child(
                "convert", str(raw), str(sr), json.dumps([*CHANNELS, "D6", "D7"]), str(args.rate)
            )
            raw.unlink()
            ana = child("analyze", "", str(sr))
            sr.unlink()
            exact = ana["power_up"] == [truth["power"]] and all(
                ana["edges"].get(m) == [truth[m]]
                for m in CHANNELS[1:5]
                if not (dense and m == "ui_ready")
            )
            flagged = list(ana["dense"]) == (["ui_ready"] if dense else [])
            cases[name] = {
                "convert_s": round(conv["seconds"], 2),
                "convert_peak_mb": round(conv["peak_mb"], 1),
                "analyze_s": round(ana["seconds"], 2),
                "analyze_peak_mb": round(ana["peak_mb"], 1),
                "boundaries_exact": exact,
                "dense_flagged": flagged,
            }
            print(f"{name}: {cases[name]}", flush=True)
    peak = max(max(c["convert_peak_mb"], c["analyze_peak_mb"]) for c in cases.values())
    ok = peak <= LIMIT_MB and all(
        c["boundaries_exact"] and c["dense_flagged"] for c in cases.values()
    )
    result(
        "capture_scale",
        samples=samples,
        rate_hz=args.rate,
        cases=cases,
        peak_mb=peak,
        reference=f"{LIMIT_MB:g} MB peak per step (issue 10, item 7)",
        ratio=round(peak / LIMIT_MB, 3),
        target_met=ok,
    )


if __name__ == "__main__":
    main()
