"""Landmark offsets: how far each kernel, U-Boot or systemd message stands from the hook
it can replace, measured on QEMU boots where both exist (the hooked targets,
config/qemu-arm64.toml and config/qemu-arm64-6.12.toml; systemd's `Startup finished` on
the systemd variant, config/qemu-arm64-systemd.toml). One calibration per kernel version
and architecture, as the boots' consoles name them (rig/analysis/kernelid.py): the boots
given must all be of one. Prints the offsets; --write stores the calibration the analysis
uses (rig/analysis/landmarks-linux-<version>-<arch>.json; a folder: that name in it) with
its provenance; --merge puts only the landmarks measured now into that kernel's file,
each with its own target, and keeps the others; --check holds the stored calibration of
the boots' kernel, not the one measured now, to their traced edges.

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

The result line: per landmark its offset, uncertainty and the largest error against
QEMU's traced edge; "target_met" when every traced check lies inside the stated
uncertainty.

    python bench/landmark_offsets.py                       # tests/data/real hooked boots
    python bench/landmark_offsets.py --record 15 --out DIR # record more first (QEMU)
    python bench/landmark_offsets.py DIR... --write rig/analysis
    python bench/landmark_offsets.py DIR --config config/qemu-arm64-6.12.toml --write rig/analysis
    python bench/landmark_offsets.py DIR --check           # the stored calibration on DIR
    python bench/landmark_offsets.py results/systemd-calibration \
        --config config/qemu-arm64-systemd.toml --landmarks systemd_startup_finished \
        --merge rig/analysis/landmarks-linux-6.1-arm64.json
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

from bench.harness.result import result  # noqa: E402
from rig.analysis.events import first_tags  # noqa: E402
from rig.analysis.kernelid import KernelId, identify  # noqa: E402
from rig.analysis.landmark_calibration import (  # noqa: E402
    CALIBRATION_SCHEMA,
    FOLDER,
    calibration_name,
    load_calibration,
)
from rig.analysis.landmarks import LANDMARKS, Landmark, find_landmarks  # noqa: E402
from rig.analysis.lines import Line, split_lines  # noqa: E402
from rig.artifacts import rundir  # noqa: E402
from rig.instruments.drivers import driver_specs, load_config  # noqa: E402

DEFAULT_BOOTS = REPO / "tests" / "data" / "real"
DEFAULT_CONFIG = REPO / "config" / "qemu-arm64.toml"
MIN_BOOTS = 3


def selected(keys: str | None) -> tuple[Landmark, ...]:
    """The landmarks named (comma-separated), or all."""
    if not keys:
        return LANDMARKS
    names = [k.strip() for k in keys.split(",") if k.strip()]
    unknown = set(names) - {lm.key for lm in LANDMARKS}
    if unknown:
        raise SystemExit(f"unknown landmarks: {', '.join(sorted(unknown))}")
    return tuple(lm for lm in LANDMARKS if lm.key in names)


def hooked_boots(folders: list[Path], landmarks: tuple[Landmark, ...] = LANDMARKS) -> list[Path]:
    """Boot folders (given, or found one level down) whose console has the tag of every
    marker the landmarks stand in for: the boots of a target whose hooks print them."""
    markers = {lm.marker for lm in landmarks}
    out: list[Path] = []
    for f in folders:
        cands = [f] if (f / "console.jsonl").is_file() else sorted(f.glob("*/console.jsonl"))
        for c in cands:
            boot = c if c.is_dir() else c.parent
            lines = split_lines(rundir.read_console(boot))
            if markers <= set(first_tags(lines)):
                out.append(boot)
    return out


def kernel_of(boots: list[Path]) -> KernelId:
    """The one kernel (version, architecture) the boots ran, as their consoles name it."""
    seen: dict[str | None, list[Path]] = {}
    ids: dict[str | None, KernelId] = {}
    for b in boots:
        k = identify(split_lines(rundir.read_console(b)))
        seen.setdefault(k.key, []).append(b)
        ids.setdefault(k.key, KernelId(k.version, k.arch))
    if len(seen) != 1 or None in seen:
        named = "; ".join(
            f"{k or 'no kernel named'}: {', '.join(b.name for b in v[:3])}" for k, v in seen.items()
        )
        raise SystemExit(f"the boots must be of one named kernel (one calibration each): {named}")
    return next(iter(ids.values()))


def between(tag: Line, line: Line, lines: list[Line]) -> int:
    """Console bytes between the hook and the message, signed like the offset."""
    if line.offset > tag.offset:
        nxt = lines[tag.index + 1].offset if tag.index + 1 < len(lines) else tag.offset
        return line.offset - nxt
    return -(tag.offset - line.offset)


def measure(boot: Path, landmarks: tuple[Landmark, ...] = LANDMARKS) -> dict[str, dict[str, Any]]:
    lines = split_lines(rundir.read_console(boot))
    tags = first_tags(lines)
    out: dict[str, dict[str, Any]] = {}
    for key, line in find_landmarks(lines).items():
        lm = next(x for x in LANDMARKS if x.key == key)
        tag = tags.get(lm.marker)
        if tag is None or lm not in landmarks:
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


def traced(
    boot: Path, landmarks: tuple[Landmark, ...] = LANDMARKS
) -> dict[str, tuple[float, float]]:
    """Landmark line's time in the report minus the traced edge, and the uncertainty the
    report states for that line's own time (captured boots only)."""
    if not (boot / "capture.sr").is_file() or not (boot / "reference.json").is_file():
        return {}
    from rig.measure.pipeline import analyze_folder

    report = analyze_folder(boot, write=False).to_json()
    edges = json.loads((boot / "reference.json").read_text())["edges_s"]
    lines = split_lines(rundir.read_console(boot))
    times = {c["line"]: (c["t_s"], c["uncertainty_s"]) for c in report["console_times"]}
    out: dict[str, tuple[float, float]] = {}
    for key, line in find_landmarks(lines).items():
        lm = next(x for x in LANDMARKS if x.key == key)
        if lm in landmarks and lm.marker in edges and line.index in times:
            t, u = times[line.index]
            out[key] = (t - edges[lm.marker], u)
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


def record(out: Path, boots: int, config: Path, prefix: str) -> None:
    cmd = [sys.executable, "-m", "rig", "qemu", "record", "--config", str(config)]
    cmd += ["--out", str(out), "--boots", str(boots), "--name", prefix]
    subprocess.run(cmd, check=True, cwd=REPO)


def rel(path: Path) -> str:
    p = path.resolve()
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)


def images_hash(build: Path) -> str | None:
    """The target's build hash (recorded boots scrub the images path)."""
    p = subprocess.run(["bash", str(build), "--dir"], capture_output=True, text=True)
    return Path(p.stdout.strip()).name if p.returncode == 0 else None


def target_info(boots: list[Path], config: Path = DEFAULT_CONFIG) -> dict[str, Any]:
    """What the boots ran on: the config, the bootloader, kernel and init they printed."""
    cfg = load_config(config)
    qemu = driver_specs(cfg).qemu
    assert qemu is not None, f"{config}: not a QEMU target"
    build = qemu.build_script
    log = (boots[0] / "console.log").read_text(errors="replace").splitlines()
    uboot = next((ln.strip() for ln in log if ln.startswith("U-Boot 20")), "")
    kernel = next((ln.split("] ", 1)[-1] for ln in log if "Linux version" in ln), "")
    info = {
        "name": f"{cfg.board} ({rel(config)})",
        "bootloader": uboot,
        "kernel": kernel[:120],
        "console": "QEMU PL011 on a pty: unpaced",
        "images": images_hash(build),
        "recorded_with": f"rig qemu record --config {rel(config)} --out DIR --boots N "
        f"({rel(build)})",
    }
    init = next((ln.split("]: ", 1)[-1] for ln in log if "running in system mode" in ln), "")
    if init:
        info["init"] = init.split(" (")[0]  # e.g. systemd 252.39-1~deb12u2 running in ...
    return info


def where(boot: Path) -> str:
    return rel(boot.parent)


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """`old` (the calibration file) with `new`'s landmarks put in or replaced, each with
    its own target, date and command; every other landmark keeps its figures and the
    file's own provenance. `boots` (name -> folder) then lists every boot a landmark
    still cites."""
    if old.get("schema") != CALIBRATION_SCHEMA:
        raise SystemExit(f"--merge: schema {old.get('schema')!r}, not {CALIBRATION_SCHEMA}")
    if old.get("kernel") != new["kernel"]:
        raise SystemExit(f"--merge: the file is {old.get('kernel')}'s, the boots {new['kernel']}'s")
    landmarks = dict(old["landmarks"])
    for key, entry in new["landmarks"].items():
        landmarks[key] = {
            **entry,
            "target": new["target"],
            "measured_utc": new["measured_utc"],
            "command": new["command"],
        }
    folders = dict(old["boots"])
    for name, folder in new["boots"].items():
        if folders.get(name, folder) != folder and any(
            name in c["boots"] for k, c in landmarks.items() if k not in new["landmarks"]
        ):
            raise SystemExit(f"--merge: boot {name} is {folders[name]} already, not {folder}")
        folders[name] = folder
    cited = {b for c in landmarks.values() for b in c["boots"]}
    return {
        **old,
        "boots": {b: f for b, f in folders.items() if b in cited},
        "landmarks": landmarks,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", type=Path, default=[DEFAULT_BOOTS])
    ap.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="the target recorded")
    ap.add_argument("--landmarks", help="comma-separated keys to measure (default: all)")
    ap.add_argument("--record", type=int, default=0, help="record N hooked boots first")
    ap.add_argument("--out", type=Path, help="where --record puts them (then analyzed too)")
    ap.add_argument("--prefix", default="calib", help="--record's boot folder prefix")
    out_opts = ap.add_mutually_exclusive_group()
    out_opts.add_argument(
        "--write",
        type=Path,
        help="write the calibration JSON here (only what was measured); a folder: "
        "landmarks-linux-<version>-<arch>.json in it",
    )
    out_opts.add_argument(
        "--merge", type=Path, help="put the landmarks measured into this calibration JSON"
    )
    out_opts.add_argument(
        "--check", action="store_true", help="hold the stored calibration to the boots"
    )
    args = ap.parse_args()
    landmarks = selected(args.landmarks)
    folders = list(args.folders)
    if args.record:
        if args.out is None:
            ap.error("--record needs --out")
        record(args.out, args.record, args.config, args.prefix)
        folders.append(args.out)
    boots = hooked_boots(folders, landmarks)
    per_boot = {b.name: m for b in boots if (m := measure(b, landmarks))}
    boots = [b for b in boots if b.name in per_boot]
    if not boots:
        raise SystemExit("no boot has both a selected landmark and its hook's tag")
    kernel = kernel_of(boots)
    check = {b.name: traced(b, landmarks) for b in boots}
    cal = summarise(per_boot)
    for key, c in cal.items():
        print(
            f"{key:24} {c['marker']:14} n={c['n']:2}  offset {c['offset_s'] * 1e3:+8.3f} ms"
            f"  ± {c['uncertainty_s'] * 1e3:6.3f} ms  (range {c['min_s'] * 1e3:+.3f} .. "
            f"{c['max_s'] * 1e3:+.3f}, sd {c['sd_s'] * 1e3:.3f}; {c['bytes_between']:+d} bytes)"
        )
        for b, t in sorted(check.items()):
            if key in t:
                err, u = t[key]
                print(
                    f"    {b}: report time - traced edge {err * 1e3:+.3f} ms (line ± {u * 1e3:.3f})"
                )
    name = calibration_name(str(kernel.version), str(kernel.arch))
    if args.write or args.merge:
        data = {
            "schema": CALIBRATION_SCHEMA,
            "kernel": {"version": kernel.version, "arch": kernel.arch},
            "target": target_info(boots, args.config),
            "method": " ".join(__doc__.split("\n\n")[1].split()),
            "measured_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": "python bench/landmark_offsets.py " + " ".join(sys.argv[1:]),
            "boots": {b.name: where(b) for b in boots},
            "landmarks": cal,
        }
        path = args.write or args.merge
        if path.is_dir():
            path = path / name
        if path.name != name:
            raise SystemExit(f"{path}: the boots are {kernel.key}'s, whose file is {name}")
        if args.merge:
            data = merged(json.loads(path.read_text(encoding="utf-8")), data)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    held = cal
    if args.check:
        if not (FOLDER / name).is_file():
            raise SystemExit(f"--check: no stored calibration for {kernel.key} ({FOLDER / name})")
        stored = json.loads((FOLDER / name).read_text(encoding="utf-8"))
        held = {k: c for k, c in stored["landmarks"].items() if k in cal}
        load_calibration(FOLDER / name)  # the analysis would read it: its name must fit
    result("landmark_offsets", calibration=kernel.key, stored=args.check, **verdict(held, check))


def verdict(
    cal: dict[str, Any], check: dict[str, dict[str, tuple[float, float]]]
) -> dict[str, Any]:
    """The result: on the boots QEMU traced, the landmark's time in the report minus
    its calibrated offset must land on the traced edge within what the report states for
    it: the calibrated uncertainty plus the line's own (its host or printk placement),
    as rig.analysis.landmarks adds them."""
    figures: dict[str, Any] = {}
    worst = 0.0
    exceeded = 0
    for key, c in cal.items():
        errs = [
            (t[key][0] - c["offset_s"], c["uncertainty_s"] + t[key][1])
            for t in check.values()
            if key in t
        ]
        exceeded += sum(abs(e) > u for e, u in errs)
        if errs:
            worst = max(worst, max(abs(e) / u for e, u in errs if u > 0))
        figures[key] = {
            "n": c["n"],
            "offset_ms": round(c["offset_s"] * 1e3, 3),
            "uncertainty_ms": round(c["uncertainty_s"] * 1e3, 3),
            "traced_checks": len(errs),
            "max_error_ms": round(max((abs(e) for e, _ in errs), default=0.0) * 1e3, 3),
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
