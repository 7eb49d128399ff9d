"""`[analyzer] arm_before_off`: the analyzer is armed before the power-off, so the capture
shows the rail fall and the off-time is measured from it (docs/cold-boot.md).

End to end on the simulated board (relay, sim analyzer): the time base still starts at
this boot's power edge (not at the previous boot's lines falling with the rail), the
console tapped from the capture holds this boot's bytes only, the off-time matches the
simulator's truth to the stated uncertainty, the engines agree (sigrok-cli with the
bootmarkers decoder against the fast scan), and the cost is the hold in samples."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from rig.artifacts.fastscan import scan_capture
from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from tests.conftest import REPO
from tests.e2e import boundary_errors, truth_boot

CONFIG = REPO / "config" / "rig.toml"
FAST = REPO / "config" / "boards" / "fast.toml"
HOLD_S = 0.2


def _cycles(tmp: Path, n: int, early: bool) -> list[Path]:
    overrides = [
        f'rig.results_dir="{tmp}"',
        f"power.off_hold_s={HOLD_S}",
        f"analyzer.arm_before_off={str(early).lower()}",
    ]
    cfg = load_config(CONFIG, board=FAST, overrides=overrides)
    assert cfg.analyzer.arm_before_off is early
    # Early arming keeps the board on after each run, so the next capture sees it fall.
    assert cfg.power.power_off_after is not early
    with Instruments(cfg) as bench:
        return [run_cycle(cfg, bench).folder for _ in range(n)]


@pytest.fixture(scope="module")
def early(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _cycles(tmp_path_factory.mktemp("early"), 3, True)


@pytest.mark.slow
def test_the_capture_shows_the_fall_and_gives_the_off_time(early: list[Path]) -> None:
    for k, folder in enumerate(early):
        run = json.loads((folder / "run.json").read_text())
        assert run["analyzer_armed_ns"] < run["power_off_ns"]  # armed while the board ran
        report = analyze_folder(folder, write=False)
        cb = report.cold_boot
        assert report.outcome == "ok" and cb is not None, report.analysis.notes
        rate = report.time_base.samplerate_hz
        if k == 0:
            # The board had never been up: the capture shows no fall, and the power
            # commands' interval is the off-time's upper bound.
            assert (cb.off_time_source, cb.off_time_bound) == ("relay", "upper")
            continue
        boot = truth_boot(folder)
        truth = boot["off_before_s"]
        assert (cb.off_time_source, cb.off_time_bound) == ("capture", None)
        assert cb.off_time_s is not None and cb.off_time_uncertainty_s == 2 / rate
        # The analyzer samples once per period: the truth lies within the two samples
        # either side, plus the rounding of the report's microseconds.
        assert abs(cb.off_time_s - truth) <= cb.off_time_uncertainty_s + 1e-6, (cb, truth)
        # Against the commands: the rail fell after the off command was sent and rose
        # after the on frame reached the relay plus its contact bounce. How late each
        # frame reached the simulated relay is host scheduling (tens of ms on a loaded
        # host), so the bounds take the frames' arrival from the simulator, not a fixed
        # transit; two samples either side are the capture's resolution.
        drop_ns = boot["power_edge_ns"] - round(truth * 1e9)
        assert run["power_off_ns"] <= drop_ns and run["power_on_ns"] <= boot["relay_on_ns"]
        bounce = -min(boot["bounce_s"], default=0.0)
        upper = (boot["relay_on_ns"] - run["power_off_ns"]) / 1e9 + bounce
        off_late = (drop_ns - run["power_off_ns"]) / 1e9  # the off frame's delay
        assert HOLD_S - off_late - 2 / rate <= cb.off_time_s <= upper + 2 / rate


@pytest.mark.slow
def test_the_time_base_and_the_tapped_console_are_this_boots(early: list[Path]) -> None:
    for folder in early[1:]:
        scan = scan_capture(folder / "capture.sr", 1000.0, baud=115200)
        m = scan.markers
        assert len(m.power_up) == 1 and len(m.power_down) == 1 and m.power_down[0] < m.power_up[0]
        # The previous boot's markers fall with its rail: edges, but no warning.
        assert all(edges[0] == m.power_down[0] for edges in m.edges.values()), m.edges
        assert m.warnings == ()
        report = analyze_folder(folder, write=False).to_json()
        boot = truth_boot(folder)
        rate = report["time_base"]["samplerate_hz"]
        assert report["time_base"]["power_edge_sample"] == boot["power_edge_sample"]
        for b in boundary_errors(report, boot):
            if b["source"] == "gpio":
                assert abs(b["error_s"]) <= 1 / rate + 1e-12, b
        assert abs(report["power_to_ui_s"] - boot["markers"]["ui_ready"]) <= 1 / rate + 1e-12
        # The UART line idled high through the previous boot and fell with the rail: no
        # byte of that is this boot's, so the tap equals the console and every line is
        # timed from it.
        tap = report["console"]["uart_tap"]
        console = b"".join(
            base64.b64decode(json.loads(ln)["data_b64"])
            for ln in (folder / "console.jsonl").read_text().splitlines()
        )
        assert tap["frame_errors"] == 0 and console
        assert tap["bytes"] == report["console"]["bytes"] == len(console)
        assert tap["lines_timed"] == report["console"]["lines"]


@pytest.mark.slow
def test_engines_agree_on_an_early_capture(early: list[Path], tmp_path: Path) -> None:
    folder = shutil.copytree(early[1], tmp_path / "copy")
    fast = analyze_folder(folder, write=False, engine="fast").to_json()
    ref = analyze_folder(folder, write=False, engine="sigrok").to_json()
    for key in ("stages", "cold_boot", "power_to_ui_s", "time_base"):
        assert fast[key] == ref[key], key
    for key in ("power_ups", "bounces_rejected", "samples"):
        assert fast["capture"][key] == ref["capture"][key], key
    assert fast["console"]["uart_tap"] == ref["console"]["uart_tap"]


@pytest.mark.slow
def test_the_cost_is_the_hold_in_samples(early: list[Path], tmp_path: Path) -> None:
    late = _cycles(tmp_path, 2, False)
    for early_f, late_f in zip(early[1:], late, strict=False):
        e = analyze_folder(early_f, write=False).to_json()
        lt = analyze_folder(late_f, write=False).to_json()
        rate = e["time_base"]["samplerate_hz"]
        # Early: the power edge comes after the whole hold; late: right after arming.
        assert e["time_base"]["power_edge_sample"] >= HOLD_S * rate
        assert lt["time_base"]["power_edge_sample"] < HOLD_S * rate / 2
        # What arming early costs is the samples before the power edge: at least the
        # rail's true off-time (the simulator's), to the sample. Not the difference to the
        # late capture's lead: that is arm-to-on latency, which a loaded host stretches
        # by tens of ms (CI at 1730007 saw 179,059 samples against a 180,000 bound).
        off = truth_boot(early_f)["off_before_s"]
        assert e["time_base"]["power_edge_sample"] >= off * rate - 1, (off, e["time_base"])
    cb = analyze_folder(late[1], write=False).cold_boot
    assert cb is not None and (cb.off_time_source, cb.off_time_bound) == ("relay", "upper")
    # Late arming with power_off_after (the default): the board went off at the end of
    # the previous cycle, so the bound runs from there, not from this cycle's own off
    # command (which switched nothing), and it holds the true off-time (less the bounce).
    run = json.loads((late[1] / "run.json").read_text())
    boot = truth_boot(late[1])
    assert run["rail_off_since_ns"] < run["power_off_ns"]
    own = (run["power_on_ns"] - run["power_off_ns"]) / 1e9
    assert boot["off_before_s"] > own + 0.001  # this cycle's interval would be too short
    bounce = -min(boot["bounce_s"], default=0.0)
    assert cb.off_time_s is not None
    assert cb.off_time_s + bounce + 0.001 >= boot["off_before_s"]  # an upper bound
    # and a close one: the stamps precede the commands, which the simulated relay acts
    # on when the host lets it (on a loaded host, tens of ms later)
    assert boot["off_before_s"] >= cb.off_time_s - 0.05
    assert "rail_off_since_ns" not in json.loads((late[0] / "run.json").read_text())


def test_arm_before_off_is_refused_where_it_cannot_show_the_fall(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"analyzer\.arm_before_off.*'none'"):
        load_config(CONFIG, overrides=['analyzer.driver="none"', "analyzer.arm_before_off=true"])
    with pytest.raises(ConfigError, match=r"analyzer\.arm_before_off.*expected true or false"):
        load_config(CONFIG, overrides=['analyzer.arm_before_off="yes"'])
    demo = REPO / "config" / "examples" / "sigrok-demo.toml"
    sets = ['analyzer.trigger="D0=r"', "analyzer.arm_before_off=true"]
    with pytest.raises(ConfigError, match=r"analyzer\.arm_before_off.*trigger.*D0=r"):
        load_config(demo, overrides=sets)
    assert load_config(demo, overrides=sets[1:]).analyzer.arm_before_off is True
    with pytest.raises(ConfigError, match=r"arm_before_off.*power\.power_off_after = false"):
        load_config(
            CONFIG, overrides=["analyzer.arm_before_off=true", "power.power_off_after=true"]
        )
