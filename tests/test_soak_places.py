"""`rig soak --places`: one soak per labgrid place at once, into one InfluxDB, against a
real labgrid lab (coordinator, exporter, ser2net) of three simulated boards of two
kinds and a private influxd, all on 127.0.0.1 and stopped by PID."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rig.config.influx import InfluxSettings
from rig.sinks.influx.client import Client
from rig.sinks.influx.server import PrivateServer, private_server
from rig.soak.places import PlaceSoak
from tests.e2e import REPO
from tests.labgrid_boards import BoardLab, boards
from tests.labgrid_lab import require_labgrid

pytestmark = pytest.mark.slow
PROFILES = ["fast.toml", "fast.toml", "ecovec-optimised.toml"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoardLab]:
    require_labgrid()
    with boards(tmp_path_factory.mktemp("soak-places"), PROFILES) as bench:
        yield bench


@pytest.fixture(scope="module")
def influxd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    with private_server(tmp_path_factory.mktemp("influxd")) as srv:
        yield srv


def _configs(lab: BoardLab, tmp: Path, influxd: PrivateServer) -> list[Path]:
    sink = f'\n[influx]\nurl = "{influxd.url}"\ndatabase = "lab"\ntimeout_s = 5\n'
    return [
        b.config(tmp / b.place, extra=sink, off_hold_s=0.1, name=f"{b.place}.toml")
        for b in lab.boards
    ]


def _soak(configs: list[Path], *more: str) -> subprocess.Popen[str]:
    own = [f"--place-config=b{i}={c}" for i, c in enumerate(configs, 1) if i > 1]
    argv = [sys.executable, "-m", "rig", "soak", "--config", str(configs[0]),
            "--places", "b1,b2,b3", "--json", *own, *more]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO)  # fmt: skip


def test_one_soak_per_place_at_once_into_one_influxdb(
    lab: BoardLab, influxd: PrivateServer, tmp_path: Path
) -> None:
    configs = _configs(lab, tmp_path, influxd)
    proc = _soak(configs, "--cycles", "2", "--id", "night")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out[-3000:] + err[-3000:]
    doc = json.loads(out)
    assert doc["exit_code"] == 0 and doc["reason"] == "completed"
    boards_of = {"b1": "fastboard", "b2": "fastboard", "b3": "ecovec"}
    for p in doc["places"]:
        soak = p["soak"]
        assert p["exit_code"] == 0 and p["soak_id"] == f"night-{p['place']}", p
        assert soak["board"] == boards_of[p["place"]] and soak["cycles"]["run"] == 2
        assert soak["outcomes"] == {"ok": 2}
        folder = Path(soak["folder"])
        head = json.loads((folder / "journal.jsonl").read_text().splitlines()[0])
        assert head["place"] == p["place"]  # kept for --resume
        for run in folder.glob("*/run.json"):
            assert json.loads(run.read_text())["place"]["name"] == p["place"]
        assert lab.lab.acquired(p["place"]) is None  # released
    with Client(InfluxSettings(url=influxd.url, database="lab")) as c:
        rows = c.query('SELECT count("power_to_ui_s") FROM "boot" GROUP BY "place", "board"', "lab")
    series = [sr for r in rows for sr in r.get("series", [])]
    counts = {(s["tags"]["place"], s["tags"]["board"]): s["values"][0][1] for s in series}
    assert counts == {(p, b): 2 for p, b in boards_of.items()}, rows

    # A place's soak resumes on its place; another place would be another board.
    folder = Path(doc["places"][0]["soak"]["folder"])
    argv = [sys.executable, "-m", "rig", "soak", "--resume", str(folder), "--place", "b2",
            "--json"]  # fmt: skip
    r = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    msg = json.loads(r.stdout)["error"]
    assert "ran on labgrid place 'b1', not 'b2'" in msg and "Traceback" not in r.stderr


def test_sigterm_stops_every_place_and_releases_them(
    lab: BoardLab, influxd: PrivateServer, tmp_path: Path
) -> None:
    configs = _configs(lab, tmp_path, influxd)
    proc = _soak(configs, "--duration", "5m", "--id", "stopped")
    try:
        # Once every place has journaled a cycle, stop the whole soak.
        journals = [tmp_path / b.place / "results" / f"stopped-{b.place}" / "journal.jsonl"
                    for b in lab.boards]  # fmt: skip
        deadline = time.monotonic() + 120
        while not all(j.exists() and '"cycle"' in j.read_text() for j in journals):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the soaks did not start"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, out[-3000:] + err[-3000:]
    doc = json.loads(out)
    assert doc["reason"] == "completed" or doc["exit_code"] == 143
    for p in doc["places"]:
        assert p["exit_code"] == 143, p  # each stopped cleanly: journal closed, resumable
        assert p["soak"]["status"] in ("interrupted", "stopped"), p["soak"]["status"]
        assert lab.lab.acquired(p["place"]) is None


def test_bad_places_are_refused_before_any_board_is_touched(tmp_path: Path) -> None:
    cfg = REPO / "config" / "rig.toml"
    for args, says in (
        (["--places", "a,,b"], "expected place names separated by commas"),
        (["--places", "a,a"], "a place is named twice"),
        (["--places", "a", "--place-config", "b=x.toml"], "'b' is not one of --places"),
        (["--places", "a", "--place-config", "a"], "expected NAME=CONFIG"),
        (["--place-config", "a=x.toml"], "--place-config needs --places"),
        (["--places", "a", "--place", "a"], "without --place"),
    ):
        argv = [sys.executable, "-m", "rig", "soak", "--config", str(cfg), *args, "--json"]
        r = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=60)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert says in json.loads(r.stdout)["error"], (args, r.stdout)


def test_progress_counts_journaled_cycles_incrementally(tmp_path: Path) -> None:
    """The progress display's count reads only the journal's new whole lines: a line
    still being written counts once it is complete, and nothing counts twice."""
    journal = tmp_path / "journal.jsonl"
    p = PlaceSoak("b1", tmp_path, "night-b1", None, None, journal)  # type: ignore[arg-type]
    assert p.cycles_done() == 0  # not there yet
    journal.write_text('{"type":"header"}\n{"type":"cycle","n":1}\n{"type":"cyc')
    assert p.cycles_done() == 1
    with journal.open("a") as f:
        f.write('le","n":2}\n{"type":"end"}\n')
    assert p.cycles_done() == 2
    assert p.cycles_done() == 2
