"""A realistic full BootReport (5 stages, N initcalls, advisories) for tests and the bench.

Built from the report model (rig/model/report.py), so its shape is the analysis's
own; `.to_json()` gives report.json. Deterministic for a given `index`.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from rig.model.report import (
    Advisory,
    AnalysisInfo,
    Boundary,
    ConsoleSummary,
    Event,
    Evidence,
    Initcall,
    Report,
    Stage,
    TimeBase,
)
from rig.outcomes import Outcome

EPOCH = datetime(2024, 5, 1, 6, 0, 0, tzinfo=UTC)
STAGES = (
    ("bootloader", 0.28, "gpio"),
    ("kernel", 0.11, "gpio"),
    ("rootfs_mount", 0.02, "gpio"),
    ("init", 0.06, "gpio+host"),
    ("application", 0.30, "host+gpio"),
)


def started_utc(index: int, spacing_s: float = 60.0) -> str:
    t = EPOCH + timedelta(seconds=index * spacing_s, microseconds=index % 997)
    return t.isoformat(timespec="microseconds").replace("+00:00", "Z")


def sample_report(
    index: int = 0,
    initcalls: int = 500,
    board: str = "ecovec",
    variant: str | None = "optimised",
    rig: str = "sim-rig",
    spacing_s: float = 60.0,
) -> Report:
    rnd = random.Random(index)
    stages: list[Stage] = []
    t = 0.0
    for name, base, source in STAGES:
        d = base * rnd.uniform(0.95, 1.05)
        stages.append(
            Stage(
                name=name,
                start_s=t,
                end_s=t + d,
                duration_s=d,
                source=source,
                uncertainty_s=1e-6 if source == "gpio" else 2.5e-4,
                start=Boundary("power", "gpio", 1e-6),
                end=Boundary(name, source, 1e-6),
            )
        )
        t += d
    calls: list[Initcall] = []
    tc = float(stages[1].start_s or 0.0)  # initcalls run in the kernel stage
    for i in range(initcalls):
        d = rnd.expovariate(1 / 150e-6)
        module = f"mod{i % 40}" if i % 5 == 0 else None
        name = f"init_fn_{i:03d}"
        calls.append(
            Initcall(
                name=name,
                function=name,
                module=module,
                start_s=tc,
                duration_s=d,
                return_code=0 if i % 50 else -19,
            )
        )
        tc += d + 2e-6
    run_id = started_utc(index, spacing_s)[:19].replace("-", "").replace(":", "")
    return Report(
        run_id=f"{run_id}Z-{index:06x}",
        rig=rig,
        board=board,
        variant=variant,
        started_utc=started_utc(index, spacing_s),
        outcome=Outcome.OK,
        power_to_ui_s=t,
        power_to_ui_uncertainty_s=1e-6,
        stages=stages,
        events=[Event("power", 0.0, "gpio", 1e-6)],
        time_base=TimeBase(
            "analyzer", "debounced rising edge of the power channel", samplerate_hz=1_000_000
        ),
        console=ConsoleSummary(lines=600, bytes=40_000, chunks=300, baud=115200),
        initcalls=calls,
        advisories=[
            Advisory(
                rule="uboot_bootdelay",
                title="U-Boot waits for a key press (bootdelay)",
                gain_s=1.0,
                evidence=[Evidence(text="Hit any key to stop autoboot")],
            ),
            Advisory(
                rule="calibrate_delay",
                title='Delay loop calibrated at boot: preset "lpj="',
                gain_s=0.25,
                evidence=[Evidence(text="Calibrating delay loop... 333.33 BogoMIPS")],
            ),
        ],
        artifacts={"run": "run.json", "report": "report.json"},
        analysis=AnalysisInfo(rig_version="0.1.0"),
    )


def stored_run_ids(client: Any, database: str) -> list[str]:
    """The run_id of every boot point stored, one entry per point (duplicates show)."""
    res = client.query('SELECT "run_id" FROM "boot"', database)
    series = res[0].get("series") or [] if res else []
    return [str(v[1]) for s in series for v in s["values"]]
