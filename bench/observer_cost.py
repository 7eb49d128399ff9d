"""The observer's cost: `rig cost` against the simulator's truth, then once on QEMU.

Murray's uncertainty principle: console output and initcall_debug cost boot time.
`rig cost` measures that cost per stage with interleaved on/off boots. The simulated
board knows the true cost: its `[instrumentation]` options add or remove exactly the
console time of the lines concerned, and truth.json gives each stage's planned duration
with them (`instrumentation.planned_s`); the true cost is planned on - planned off.

Part 1, the simulator (fast board), two experiments of `--pairs` pairs each:
- initcall_debug: on = `sim.initcall_debug=true`, off = `sim.initcall_debug=false`
  (33.16 ms in the kernel stage, 0 elsewhere);
- console: on = verbose (`sim.quiet=false`), off = `sim.quiet=true` (kernel 59.64 ms,
  rootfs_mount 5.99 ms, init 4.95 ms, 0 in bootloader and application).
Target: every true cost (5 stages + power_to_ui, both experiments) inside its stated
interval (95 % for all six of an experiment together, Bonferroni).

Part 2, the QEMU target (real U-Boot + Linux 6.1 with the hooks), only when its images
are built: on = `initcall_debug loglevel=8`, off = `quiet` on the kernel command line,
`--qemu-pairs` pairs. No truth there: the measured cost is reported, not gated.

The ratio: intervals covering their truth / intervals.

    python bench/observer_cost.py [--pairs 10] [--qemu-pairs 6] [--no-qemu]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import result, rig_json  # noqa: E402
from tests.e2e import make_config  # noqa: E402

QEMU_CONFIG = REPO / "config" / "qemu-arm64.toml"
EXPERIMENTS = {
    "initcall_debug": ("on:sim.initcall_debug=true", "off:sim.initcall_debug=false"),
    "console": ("on:sim.quiet=false", "off:sim.quiet=true"),
}
QEMU_VARIANTS = ('on:qemu.kernel_args="initcall_debug loglevel=8"', 'off:qemu.kernel_args="quiet"')


def rig_cost(config: Path, variants: tuple[str, str], pairs: int, *extra: str) -> dict[str, Any]:
    args = ["--variant", variants[0], "--variant", variants[1], "--pairs", str(pairs), *extra]
    return rig_json("cost", "--config", str(config), "--json", *args, timeout=3600)


def true_costs(folder: Path) -> dict[str, float]:
    planned = {}
    for v in ("on", "off"):
        truth = json.loads((folder / f"{v}-0001" / "truth.json").read_text())
        planned[v] = truth["instrumentation"]["planned_s"]
    cost = {k: planned["on"][k] - planned["off"][k] for k in planned["on"]}
    cost["power_to_ui"] = sum(cost.values())
    return cost


def simulator(pairs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bootrig-cost-") as tmp:
        config = make_config(Path(tmp))
        for i, (name, variants) in enumerate(EXPERIMENTS.items()):
            # Each experiment its own seeds: their boots' variance independent.
            doc = rig_cost(config, variants, pairs, "--set", f"sim.seed={1 + 100 * i}")
            truth = true_costs(Path(doc["folder"]))
            rows = []
            for s in doc["stages"]:
                t = truth[s["name"]]
                inside = s["ci_low_s"] is not None and s["ci_low_s"] <= t <= s["ci_high_s"]
                rows.append(
                    {
                        "stage": s["name"],
                        "true_cost_s": round(t, 9),
                        "cost_s": s["cost_s"],
                        "ci_low_s": s["ci_low_s"],
                        "ci_high_s": s["ci_high_s"],
                        "confidence": s["confidence"],
                        "p_value": s["p_value"],
                        "verdict": s["verdict"],
                        "inside": inside,
                    }
                )
            out[name] = {
                "variants": list(variants),
                "pairs": pairs,
                "wall_s": doc["wall_s"],
                "stages": rows,
            }
    return out


def qemu_built() -> bool:
    p = subprocess.run(
        ["bash", str(REPO / "firmware-hooks" / "qemu-arm64" / "build.sh"), "--dir"],
        capture_output=True,
        text=True,
        check=False,
    )
    return p.returncode == 0 and Path(p.stdout.strip()).joinpath("Image").is_file()


def qemu(pairs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bootrig-cost-qemu-") as tmp:
        doc = rig_cost(
            QEMU_CONFIG, QEMU_VARIANTS, pairs, "--set", f'rig.results_dir="{tmp}"', "--warmup", "1"
        )
    return {
        "variants": list(QEMU_VARIANTS),
        "pairs": pairs,
        "wall_s": doc["wall_s"],
        "bench": doc["bench"],
        "stages": [
            {k: s[k] for k in ("name", "cost_s", "ci_low_s", "ci_high_s", "p_value", "verdict")}
            for s in doc["stages"]
        ],
    }


def ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1e3:+8.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--qemu-pairs", type=int, default=6)
    ap.add_argument("--no-qemu", action="store_true")
    args = ap.parse_args()

    sim = simulator(args.pairs)
    for name, exp in sim.items():
        print(f"{name}: {exp['variants'][0]} vs {exp['variants'][1]}, {args.pairs} pairs")
        print("  stage          true ms   cost ms    CI low   CI high  verdict   inside")
        for r in exp["stages"]:
            print(
                f"  {r['stage']:<12} {ms(r['true_cost_s'])}  {ms(r['cost_s'])}  "
                f"{ms(r['ci_low_s'])}  {ms(r['ci_high_s'])}  {r['verdict']:<8}  {r['inside']}"
            )
    rows = [r for exp in sim.values() for r in exp["stages"]]
    covered = sum(r["inside"] for r in rows)

    q: dict[str, Any] | None = None
    if args.no_qemu:
        q = {"skipped": "--no-qemu"}
    elif not qemu_built():
        q = {"skipped": "QEMU images not built (rig qemu build)"}
    else:
        q = qemu(args.qemu_pairs)
        print(f"QEMU: {q['variants'][0]} vs {q['variants'][1]}, {args.qemu_pairs} pairs")
        for s in q["stages"]:
            print(
                f"  {s['name']:<12} cost {ms(s['cost_s'])} ms  CI {ms(s['ci_low_s'])} .. "
                f"{ms(s['ci_high_s'])}  p {s['p_value']:.3g}  {s['verdict']}"
            )
    if "skipped" in q:
        print(f"QEMU: skipped: {q['skipped']}")

    result(
        "observer_cost",
        figures={"simulator": sim, "qemu": q},
        reference={
            "truth": "truth.json instrumentation.planned_s, on - off",
            "target": "every true cost inside its stated interval",
            "intervals": len(rows),
        },
        ratio=covered / len(rows),
        target_met=covered == len(rows),
    )


if __name__ == "__main__":
    main()
