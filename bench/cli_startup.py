"""How long `rig --help` takes to answer: the wall time of the real `rig` executable,
start to exit, over N runs (issue 22, item 5: it took 2.7 s when every command and its
numpy, scipy and plotly loaded first; a CLI answers --help in well under half a second).

Also timed, for the record: `rig --version`, a few `rig <command> --help`, and the bare
interpreter (`python -c pass`, the floor no command goes below). The host's load average
is printed beside them: on a shared host the figures move with it.

The last line printed is one JSON object: the medians and spreads, the reference (the
0.5 s target and the interpreter's start), the ratio median(`rig --help`) / 0.5 s and
"target_met" (that median under 0.5 s).

    python bench/cli_startup.py [--runs N] [--rig PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 0.5
COMMANDS = {
    "rig --help": ["--help"],
    "rig --version": ["--version"],
    "rig run --help": ["run", "--help"],
    "rig analyze --help": ["analyze", "--help"],
    "rig compare --help": ["compare", "--help"],
}


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def timed(cmd: list[str], runs: int) -> dict[str, float]:
    wall(cmd)  # once untimed: the page cache and .pyc files, as on a second call
    times = sorted(wall(cmd) for _ in range(runs))
    return {
        "median_s": round(statistics.median(times), 4),
        "min_s": round(times[0], 4),
        "max_s": round(times[-1], 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rig", type=Path, default=Path(sys.executable).with_name("rig"))
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    python = timed([sys.executable, "-c", "pass"], args.runs)
    figures = {name: timed([str(args.rig), *argv], args.runs) for name, argv in COMMANDS.items()}
    load_after = os.getloadavg()[0]
    print(f"{'python -c pass':22} median {python['median_s']:.3f} s")
    for name, f in figures.items():
        print(
            f"{name:22} median {f['median_s']:.3f} s "
            f"(min {f['min_s']:.3f}, max {f['max_s']:.3f}; {args.runs} runs)"
        )
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")
    median = figures["rig --help"]["median_s"]
    print(
        json.dumps(
            {
                "bench": "cli_startup",
                "runs": args.runs,
                "figures": figures,
                "python_start": python,
                "load_avg_1m": [round(load_before, 2), round(load_after, 2)],
                "reference": {
                    "target_s": TARGET_S,
                    "what": "median wall time of `rig --help` under 0.5 s (issue 22, item 5)",
                },
                "ratio": round(median / TARGET_S, 3),
                "target_met": median < TARGET_S,
            }
        )
    )


if __name__ == "__main__":
    main()
