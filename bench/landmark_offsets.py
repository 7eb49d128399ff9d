"""Landmark offsets: how far each kernel or U-Boot message stands from the hook it can
replace, measured on QEMU boots where both exist (the hooked target,
config/qemu-arm64.toml). Prints the offsets; --write stores the calibration the analysis
uses (rig/analysis/landmarks.json) with its provenance.

For each boot with the hook's console tag, the offset is read on one clock:
- a printk-stamped message: its stamp minus the tag's (the hook stamps its tag right
  after raising the GPIO, so the tag's stamp is the edge to a few microseconds);
- a U-Boot message (no stamp): its host arrival minus the tag's. QEMU's console is
  unpaced, so both arrive as soon as U-Boot prints them.
It also counts the console bytes between hook and message (the tag line excluded: a
board without the hook does not print it), which a paced console adds at its baud rate.
Boots with QEMU's trace are checked too: the landmark's time in the report (through the
clock fit) minus the traced edge, printed beside the offset.

Centre = the middle of the observed range; uncertainty = half that range plus one
standard deviation (with 15-20 boots about 3 sigma for a normal spread).

The last line printed is one JSON object: per landmark its offset, uncertainty and the
largest error against QEMU's traced edge; "target_met" when every traced check lies
inside the stated uncertainty.

    python bench/landmark_offsets.py                       # tests/data/real hooked boots
    python bench/landmark_offsets.py --record 15 --out DIR # record more first (QEMU)
    python bench/landmark_offsets.py DIR... --write rig/analysis/landmarks.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rig.analysis.events import first_tags  # noqa: E402
from rig.analysis.landmarks import CALIBRATION_SCHEMA, LANDMARKS, find_landmarks  # noqa: E402
from rig.analysis.lines import Line, split_lines  # noqa: E402
from rig.artifacts import rundir  # noqa: E402

DEFAULT_BOOTS = REPO / "tests" / "data" / "real"
MIN_BOOTS = 3


def hooked_boots(folders: list[Path]) -> list[Path]:
    """Boot folders (given, or found one level down) whose console has kernel tags."""
    out: list[Path] = []
    for f in folders:
        cands = [f] if (f / "console.jsonl").is_file() else sorted(f.glob("*/console.jsonl"))
        for c in cands:
            boot = c if c.is_dir() else c.parent
            lines = split_lines(rundir.read_console(boot))
            if {"do_mount_root", "kernel_init"} <= set(first_tags(lines)):
                out.append(boot)
    return out


def between(tag: Line, line: Line, lines: list[Line]) -> int:
    """Console bytes between the hook and the message, signed like the offset."""
    if line.offset > tag.offset:
        nxt = lines[tag.index + 1].offset if tag.index + 1 < len(lines) else tag.offset
        return line.offset - nxt
    return -(tag.offset - line.offset)


def measure(boot: Path) -> dict[str, dict[str, Any]]:
    lines = split_lines(rundir.read_console(boot))
    tags = first_tags(lines)
    out: dict[str, dict[str, Any]] = {}
    for key, line in find_landmarks(lines).items():
        lm = next(x for x in LANDMARKS if x.key == key)
        tag = tags.get(lm.marker)
        if tag is None:
            continue
        if line.printk_ts is not None and tag.printk_ts is not None:
            offset, clock = line.printk_ts - tag.printk_ts, "printk"
        else:
            offset, clock = (line.t_ns - tag.t_ns) / 1e9, "host"
        out[key] = {
            "offset_s": round(offset, 6 if clock == "printk" else 9),
            "clock": clock,
            "bytes": between(tag, line, lines),
        }
    return out


def traced(boot: Path) -> dict[str, float]:
    """Landmark time in the report minus the traced edge (captured boots only)."""
    if not (boot / "capture.sr").is_file() or not (boot / "reference.json").is_file():
        return {}
    from rig.pipeline import analyze_folder

    report = analyze_folder(boot, write=False)
    edges = json.loads((boot / "reference.json").read_text())["edges_s"]
    lines = split_lines(rundir.read_console(boot))
    times = {c["line"]: c["t_s"] for c in report["console_times"]}
    out: dict[str, float] = {}
    for key, line in find_landmarks(lines).items():
        lm = next(x for x in LANDMARKS if x.key == key)
        if lm.marker in edges and line.index in times:
            out[key] = times[line.index] - edges[lm.marker]
    return out


def summarise(per_boot: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lm in LANDMARKS:
        rows = {b: m[lm.key] for b, m in per_boot.items() if lm.key in m}
        if len(rows) < MIN_BOOTS:
            continue
        xs = [r["offset_s"] for r in rows.values()]
        lo, hi, sd = min(xs), max(xs), statistics.stdev(xs)
        out[lm.key] = {
            "marker": lm.marker,
            "message": f"{lm.message}, {lm.when}",
            "clock": next(iter(rows.values()))["clock"],
            "n": len(xs),
            "offset_s": (lo + hi) / 2,
            "uncertainty_s": (hi - lo) / 2 + sd,
            "min_s": lo,
            "max_s": hi,
            "sd_s": sd,
            "bytes_between": int(statistics.median(r["bytes"] for r in rows.values())),
            "boots": {b: r["offset_s"] for b, r in sorted(rows.items())},
        }
    return out


def record(out: Path, boots: int) -> None:
    cmd = [sys.executable, "-m", "rig", "qemu", "record", "--out", str(out)]
    cmd += ["--boots", str(boots), "--name", "calib"]
    subprocess.run(cmd, check=True, cwd=REPO)


def images_hash() -> str | None:
    """The hooked target's build hash (recorded boots scrub the images path)."""
    build = REPO / "firmware-hooks" / "qemu-arm64" / "build.sh"
    p = subprocess.run(["bash", str(build), "--dir"], capture_output=True, text=True)
    return Path(p.stdout.strip()).name if p.returncode == 0 else None


def target_info(boots: list[Path]) -> dict[str, Any]:
    boot = boots[0]
    log = (boot / "console.log").read_text(errors="replace")
    uboot = next((ln.strip() for ln in log.splitlines() if ln.startswith("U-Boot 20")), "")
    kernel = next((ln.split("] ", 1)[-1] for ln in log.splitlines() if "Linux version" in ln), "")
    return {
        "name": "qemu-arm64 (config/qemu-arm64.toml)",
        "bootloader": uboot,
        "kernel": kernel[:120],
        "console": "QEMU PL011 on a pty: unpaced",
        "images": images_hash(),
        "recorded_with": "rig qemu record --out DIR --boots N (firmware-hooks/qemu-arm64/build.sh)",
    }


def where(boot: Path) -> str:
    p = boot.parent.resolve()
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", type=Path, default=[DEFAULT_BOOTS])
    ap.add_argument("--record", type=int, default=0, help="record N hooked boots first")
    ap.add_argument("--out", type=Path, help="where --record puts them (then analysed too)")
    ap.add_argument("--write", type=Path, help="write the calibration JSON here")
    args = ap.parse_args()
    folders = list(args.folders)
    if args.record:
        if args.out is None:
            ap.error("--record needs --out")
        record(args.out, args.record)
        folders.append(args.out)
    boots = hooked_boots(folders)
    per_boot = {b.name: measure(b) for b in boots}
    check = {b.name: traced(b) for b in boots}
    cal = summarise(per_boot)
    for key, c in cal.items():
        print(
            f"{key:24} {c['marker']:14} n={c['n']:2}  offset {c['offset_s'] * 1e3:+8.3f} ms"
            f"  ± {c['uncertainty_s'] * 1e3:6.3f} ms  (range {c['min_s'] * 1e3:+.3f} .. "
            f"{c['max_s'] * 1e3:+.3f}, sd {c['sd_s'] * 1e3:.3f}; {c['bytes_between']:+d} bytes)"
        )
        for b, t in sorted(check.items()):
            if key in t:
                print(f"    {b}: report time - traced edge {t[key] * 1e3:+.3f} ms")
    if args.write:
        data = {
            "schema": CALIBRATION_SCHEMA,
            "target": target_info(boots),
            "method": " ".join(__doc__.split("\n\n")[1].split()),
            "measured_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": "python bench/landmark_offsets.py " + " ".join(sys.argv[1:]),
            "boots": {b.name: where(b) for b in boots},
            "landmarks": cal,
        }
        args.write.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")
    print(json.dumps(verdict(cal, check)))


def verdict(cal: dict[str, Any], check: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The last line: on the boots QEMU traced, the landmark's time in the report minus
    its calibrated offset must land on the traced edge within the calibrated uncertainty."""
    figures: dict[str, Any] = {}
    worst = 0.0
    exceeded = 0
    for key, c in cal.items():
        errs = [t[key] - c["offset_s"] for t in check.values() if key in t]
        exceeded += sum(abs(e) > c["uncertainty_s"] for e in errs)
        if errs and c["uncertainty_s"] > 0:
            worst = max(worst, max(abs(e) for e in errs) / c["uncertainty_s"])
        figures[key] = {
            "n": c["n"],
            "offset_ms": round(c["offset_s"] * 1e3, 3),
            "uncertainty_ms": round(c["uncertainty_s"] * 1e3, 3),
            "traced_checks": len(errs),
            "max_error_ms": round(max((abs(e) for e in errs), default=0.0) * 1e3, 3),
        }
    checks = sum(f["traced_checks"] for f in figures.values())
    return {
        "landmarks": figures,
        "traced_checks": checks,
        "exceeded": exceeded,
        "reference": "QEMU pl061_set_output trace of the hooks' GPIO edges (captured boots)",
        "ratio": round(worst, 3),  # largest |error| / stated uncertainty
        "target_met": bool(cal) and checks > 0 and exceeded == 0,
    }


if __name__ == "__main__":
    main()
