"""The chaos bench, small: 20 cycles with every fault kind struck once (SIGTERM and
SIGKILL of the rig, a full disk, InfluxDB down, the relay's port gone, a slow analyzer
start). Its figures are recounted here from what it left on disk and in the database,
so the bench cannot claim what did not happen; and the rig must meet the targets."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from bench import chaos
from bench.harness.chaos_env import TOKEN_VAR, SmallDisk
from rig.config.influx import InfluxSettings
from rig.sinks.influx.client import Client
from rig.sinks.influx.server import PrivateServer, free_port
from tests.require import require
from tests.sample_report import stored_run_ids

pytestmark = pytest.mark.slow


def _can_mount(tmp: Path) -> bool:
    disk = SmallDisk(tmp / "probe", 1)
    try:
        disk.mount()
    except (OSError, subprocess.CalledProcessError):
        return False
    disk.unmount()
    return True


def _journal(soak: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (soak / "journal.jsonl").read_text().splitlines()]


def _ours_running() -> list[str]:
    out = []
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"{TOKEN_VAR}=".encode() in env.read_bytes():
                out.append(env.parent.name)
        except OSError:
            continue
    return out


def test_the_chaos_bench_tells_what_is_on_disk_and_in_the_database(tmp_path: Path) -> None:
    if not _can_mount(tmp_path):
        require("root", "the bench mounts a tmpfs for its full disk: root only")
    f = chaos.run(tmp_path, cycles=20, seed=7, say=lambda _s: None)
    soak = tmp_path / "results" / "chaos"
    lines = _journal(soak)
    cycles = [r for r in lines if r["type"] == "cycle"]
    interrupted = [r for r in lines if r["type"] == "interrupted"]
    folders = {p.name for p in soak.iterdir() if p.is_dir() and not p.name.startswith(".")}
    ids = [str(r["run_id"]) for r in cycles + interrupted]

    # Every fault kind struck, each as often as the evidence says.
    assert set(f["faults"]) == set(chaos.KINDS) and all(n >= 1 for n in f["faults"].values())
    assert f["faults"] == dict(Counter(e["kind"] for e in f["evidence"]))
    resumes = sum(r["type"] == "resume" for r in lines)
    assert resumes == len(f["sessions"]) - 1 >= 2  # after the SIGTERM and the SIGKILL
    assert {143, -9} <= {s["exit_code"] for s in f["sessions"]}

    # Runs: every cycle folder and every journaled cycle, once.
    assert f["runs"] == len(folders | set(ids)) >= 20
    assert f["classified_correctly"] + len(f["misclassified"]) <= f["runs"]

    # Lost: recounted from the folders, the journal and the database.
    no_line = folders - set(ids)
    doubled = [i for i, n in Counter(ids).items() if n > 1]
    reports = {n: json.loads((soak / n / "report.json").read_text()) for n in folders
               if (soak / n / "report.json").is_file()}  # fmt: skip
    no_report = [n for n in folders if (soak / n / "run.json").is_file() and n not in reports
                 and n not in {str(r["run_id"]) for r in interrupted}]  # fmt: skip
    with (
        PrivateServer(tmp_path / "influxd", free_port(), free_port()) as srv,
        Client(InfluxSettings(url=srv.url, database=chaos.DATABASE)) as c,
    ):
        stored = set(stored_run_ids(c, chaos.DATABASE))
    missing = set(reports) - stored
    assert f["lost"] == len(no_line) + len(doubled) + len(no_report) + len(missing)

    # What the journal says is what the report says.
    by_id = {str(r["run_id"]): r["outcome"] for r in cycles}
    differ = [n for n, rep in reports.items() if n in by_id and rep["outcome"] != by_id[n]]
    assert all(any(n in m for m in f["misclassified"]) for n in differ)

    # Bytes left: raw captures, temporary files, the spool.
    raw = [p for p in soak.parent.rglob("*") if p.is_file() and p.name != ".lock"
           and (p.name == "capture.bin" or p.suffix in (".part", ".tmp")
                or ".influx-spool" in p.parts)]  # fmt: skip
    assert f["bytes_left"] == sum(p.stat().st_size for p in raw)

    # Orphans: none of the rig's processes is left (the bench ends any it counted).
    assert f["orphans"] == len(f["orphan_commands"])
    assert _ours_running() == []

    # The targets: the rig survives all of it with every cycle accounted for.
    assert f["misclassified"] == [] and f["lost"] == 0, (f["misclassified"], f["lost_detail"])
    assert f["orphans"] == 0 and f["bytes_left"] == 0
    assert chaos.verdict(f)["target_met"]
