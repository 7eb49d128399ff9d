"""Disk per boot beyond the measurement itself (issue 14 item 5).

Boots go through the real rig: a soak of N cycles of the fast simulated board (`rig
soak`, its own process), one boot of the Ecovec baseline profile (`rig run`, 19 s of
boot, the largest simulated console) and, for real kernels, the QEMU folders of
tests/data/real copied to a temporary folder and re-analyzed (`rig analyze`), the
initcall_debug boot among them (487 console lines, 171 initcalls).

Per boot, "beyond the measurement" is every file the rig writes in the run folder except
the measurement (capture.sr, capture.bin, console.jsonl, console.log, uart.bin,
power.jsonl, truth.json, and the QEMU target's qemu-trace.log and qemu.json): report.json,
report.html and run.json (counted although it holds the power-on stamp). The shared
plotly.js (one file per results or soak folder) is printed apart and amortized over the
soak's boots. The old figure is measured on the same boots: the page with plotly.js
embedded (`--js gzip`, what every boot wrote before) and report.json fully indented.

Target: every boot <= 200 kB beyond its measurement (the worst boot is the figure); the
ratio is target / measured (>= 1 met).

    python bench/disk_footprint.py [--cycles 20] [--no-ecovec] [--no-real]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import result, rig_json  # noqa: E402
from rig.artifacts.rundir import read_json  # noqa: E402
from rig.sinks.html.plotlyjs import ASSETS, asset_name  # noqa: E402
from rig.sinks.html.write import write_html  # noqa: E402
from tests.e2e import make_config  # noqa: E402

TARGET_BYTES = 200_000
MEASUREMENT = {
    "capture.sr", "capture.bin", "console.jsonl", "console.log", "uart.bin", "power.jsonl",
    "truth.json", "qemu-trace.log", "qemu.json",
    "reference.json",  # tests/data/real only: the test data's own expectations
}  # fmt: skip


def footprint(folder: Path) -> dict[str, int]:
    """Bytes of each file beyond the measurement in a run folder."""
    return {
        p.name: p.stat().st_size
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name not in MEASUREMENT and p.stat().st_size
    }


def old_footprint(folder: Path, tmp: Path) -> int:
    """The same boot as the rig wrote it before: plotly.js embedded in the page (gzip,
    the old default), report.json indented throughout, run.json as is."""
    page = write_html(folder, "gzip", out=tmp / f"old-{folder.name}.html")
    report = json.dumps(read_json(folder / "report.json"), indent=2) + "\n"
    return page.stat().st_size + len(report.encode()) + (folder / "run.json").stat().st_size


def describe(name: str, folder: Path, tmp: Path) -> dict[str, Any]:
    files = footprint(folder)
    return {
        "boot": name,
        "bytes": sum(files.values()),
        "files": files,
        "old_bytes": old_footprint(folder, tmp),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--no-ecovec", action="store_true", help="skip the 19 s Ecovec boot")
    ap.add_argument("--no-real", action="store_true", help="skip the QEMU folders")
    args = ap.parse_args()
    boots: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bootrig-disk-") as t:
        tmp = Path(t)
        cfg = make_config(tmp, "fast.toml", name="fast.toml")
        soak_id = "disk-bench"
        # exit 1, a board failure, is still a boot on disk
        rig_json("soak", "--config", str(cfg), "--cycles", str(args.cycles), "--id", soak_id,
                 "--json", timeout=60 + 20 * args.cycles, codes=(0, 1))  # fmt: skip
        soak = tmp / "results" / soak_id
        cycles = sorted(p for p in soak.iterdir() if (p / "run.json").is_file())
        fast = [describe(f"fast #{i + 1}", f, tmp) for i, f in enumerate(cycles)]
        asset = soak / ASSETS / asset_name()
        asset_bytes = asset.stat().st_size
        boots += fast
        if not args.no_ecovec:
            eco_cfg = make_config(tmp, "ecovec-baseline.toml", name="eco.toml")
            out = rig_json("run", "--config", str(eco_cfg), "--json", timeout=180, codes=(0, 1))
            boots.append(describe("ecovec-baseline", Path(out["folder"]), tmp))
        if not args.no_real:
            real = tmp / "real"
            shutil.copytree(REPO / "tests" / "data" / "real", real)
            for folder in sorted(p for p in real.iterdir() if p.is_dir()):
                rig_json("analyze", str(folder), "--json", timeout=120, codes=(0, 1))
                boots.append(describe(f"qemu {folder.name}", folder, tmp))
        for b in boots:
            parts = ", ".join(f"{k} {v / 1e3:.1f}" for k, v in b["files"].items())
            print(
                f"{b['boot']:<28} {b['bytes'] / 1e3:7.1f} kB beyond the measurement "
                f"({parts}); before: {b['old_bytes'] / 1e6:.2f} MB"
            )
    fast_bytes = [b["bytes"] for b in fast]
    worst = max(boots, key=lambda b: b["bytes"])
    amortized = statistics.mean(fast_bytes) + asset_bytes / len(fast)
    print(
        f"fast board: {statistics.mean(fast_bytes) / 1e3:.1f} kB a boot (max "
        f"{max(fast_bytes) / 1e3:.1f}), + the shared plotly.js {asset_bytes / 1e6:.2f} MB once "
        f"per folder = {amortized / 1e3:.1f} kB a boot over {len(fast)} boots; worst boot: "
        f"{worst['boot']} {worst['bytes'] / 1e3:.1f} kB"
    )
    result(
        "disk_footprint",
        figures={
            "per_boot_bytes": worst["bytes"],
            "per_boot_boot": worst["boot"],
            "fast_per_boot_bytes_mean": statistics.mean(fast_bytes),
            "fast_per_boot_bytes_max": max(fast_bytes),
            "shared_asset_bytes": asset_bytes,
            "fast_amortized_per_boot_bytes": amortized,
            "boots": {b["boot"]: b["bytes"] for b in boots},
            "old_per_boot_bytes": {b["boot"]: b["old_bytes"] for b in boots},
        },
        per_boot_bytes=worst["bytes"],
        reference={
            "target_per_boot_bytes": TARGET_BYTES,
            "old_per_boot_bytes_fast_mean": statistics.mean(b["old_bytes"] for b in fast),
            "old_per_boot_bytes_issue": 2_000_000,
        },
        ratio=TARGET_BYTES / worst["bytes"],
        target_met=worst["bytes"] <= TARGET_BYTES,
    )


if __name__ == "__main__":
    main()
