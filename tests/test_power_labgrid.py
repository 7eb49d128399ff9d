"""The `labgrid` power driver against a real labgrid (coordinator, exporter, client from
PyPI) on 127.0.0.1: the exported power resource is a network PDU's REST interface, the
simulated board's (simboard/pdu_http.py), switched by labgrid's own NetworkPowerDriver."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rig.config.target import TargetConfig
from rig.errors import ConfigError, InstrumentError
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.power_labgrid import LabgridPower
from simboard.pdu_http import PduServer
from tests.e2e import make_config, truth_boot
from tests.labgrid_lab import LABGRID_PYTHON, Lab, lab, require_labgrid
from tests.ser2net import free_port

SIM_PDU = free_port()  # the port `rig run`'s simulated board serves its PDU on


def _port(model: str, url: str, index: int, cls: str = "NetworkPowerPort") -> dict[str, object]:
    return {"cls": cls, "model": model, "host": url, "index": index}


@pytest.fixture(scope="module")
def pdu() -> Iterator[tuple[PduServer, list[tuple[int, int]]]]:
    """A PDU of our own for the driver-level tests; `frames` lists (outlet, state)."""
    frames: list[tuple[int, int]] = []
    server = PduServer(4, lambda ch, state, _t: frames.append((ch, state)))
    try:
        yield server, frames
    finally:
        server.close()


@pytest.fixture(scope="module")
def the_lab(
    tmp_path_factory: pytest.TempPathFactory, pdu: tuple[PduServer, list[tuple[int, int]]]
) -> Iterator[Lab]:
    server = pdu[0]
    with lab(tmp_path_factory.mktemp("lab")) as lg:
        sim_url = f"http://127.0.0.1:{SIM_PDU}/relay/{{index}}/{{value}}"
        lg.exporter("exp1", {
            "board1": {"NetworkPowerPort": _port("simplerest", sim_url, 1)},
            "desk": {"NetworkPowerPort": _port("rest", server.url + "/relay/{index}/value", 3)},
            "twin": {
                "mains": _port("simplerest", server.url + "/relay/{index}/{value}", 1),
                "aux": _port("simplerest", server.url + "/relay/{index}/{value}", 2),
            },
        })  # fmt: skip
        lg.place("b1", "exp1/board1/*")
        lg.place("desk", "exp1/desk/*")
        lg.place("twin", "exp1/twin/*")
        yield lg


def _power(lg: Lab, place: str, **kw: object) -> LabgridPower:
    return LabgridPower(TargetConfig(place, lg.address, str(LABGRID_PYTHON), **kw))  # type: ignore[arg-type]


def test_switches_through_labgrids_rest_driver_and_releases(
    the_lab: Lab, pdu: tuple[PduServer, list[tuple[int, int]]]
) -> None:
    server, frames = pdu
    frames.clear()
    power = _power(the_lab, "desk")
    try:
        assert the_lab.acquired("desk") is not None
        before = time.monotonic_ns()
        t_on = power.on()
        assert server.state[3] is True
        t_off = power.off()
        assert server.state[3] is False
        assert before <= t_on <= t_off <= time.monotonic_ns()
        d = power.describe()
    finally:
        power.close()
    assert frames == [(3, 1), (3, 0)]
    assert the_lab.acquired("desk") is None  # the rig acquired it, the rig released it
    assert d["place"] == "desk" and d["acquired_by_rig"] is True
    assert d["power_resource"] == {"cls": "NetworkPowerPort", "name": "NetworkPowerPort"}
    assert d["resources"][0]["params"]["model"] == "rest"
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?.*", d["labgrid"])


def test_a_place_with_two_power_resources_needs_a_name(
    the_lab: Lab, pdu: tuple[PduServer, list[tuple[int, int]]]
) -> None:
    server, frames = pdu
    with pytest.raises(
        InstrumentError, match=r"2 power resources \('aux', 'mains'\)|'mains', 'aux'"
    ):
        _power(the_lab, "twin")
    assert the_lab.acquired("twin") is None  # a failed start leaves nothing acquired
    frames.clear()
    power = _power(the_lab, "twin", power_resource="aux")
    try:
        power.on()
        assert (server.state[2], server.state[1]) == (True, False)
        power.off()
    finally:
        power.close()
    assert frames == [(2, 1), (2, 0)]
    with pytest.raises(InstrumentError, match=r"no power resource named 'spare'"):
        _power(the_lab, "twin", power_resource="spare")


def test_a_place_held_by_someone_else_is_refused_and_left_alone(the_lab: Lab) -> None:
    the_lab.client("-p", "desk", "acquire", user="alice")
    try:
        with pytest.raises(InstrumentError, match=r"labgrid place .desk.*acquired by alice"):
            _power(the_lab, "desk")
        assert str(the_lab.acquired("desk")).endswith("/alice")
    finally:
        the_lab.client("-p", "desk", "release", user="alice")


def test_a_place_the_operator_acquired_is_used_and_left_acquired(the_lab: Lab) -> None:
    the_lab.client("-p", "desk", "acquire")
    try:
        power = _power(the_lab, "desk")
        try:
            power.on()
            assert power.describe()["acquired_by_rig"] is False
        finally:
            power.off()
            power.close()
        assert the_lab.acquired("desk") is not None
    finally:
        the_lab.client("-p", "desk", "release")


def test_unknown_place_and_unreachable_coordinator_are_named(the_lab: Lab) -> None:
    with pytest.raises(InstrumentError, match=r"labgrid place 'nowhere'.*nowhere matches nothing"):
        _power(the_lab, "nowhere")
    dead = f"127.0.0.1:{free_port()}"
    t = time.monotonic()
    with pytest.raises(InstrumentError, match=rf"coordinator {dead}"):
        LabgridPower(TargetConfig("desk", dead, str(LABGRID_PYTHON), timeout_s=3))
    assert time.monotonic() - t < 15
    with pytest.raises(InstrumentError, match=r"cannot run /nonexistent/python"):
        LabgridPower(TargetConfig("desk", dead, "/nonexistent/python"))


def test_a_killed_rig_still_releases_its_place(the_lab: Lab, tmp_path: Path) -> None:
    """SIGKILL leaves the rig no chance; the kernel tells the bridge (PR_SET_PDEATHSIG)."""
    script = (
        "import sys, time\n"
        "from rig.config.target import TargetConfig\n"
        "from rig.instruments.power_labgrid import LabgridPower\n"
        f"p = LabgridPower(TargetConfig('desk', {the_lab.address!r}, {str(LABGRID_PYTHON)!r}))\n"
        "p.on(); print('ready', p._proc.pid, flush=True); time.sleep(60)\n"
    )
    rig = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert rig.stdout is not None
        ready = rig.stdout.readline().split()
        assert ready[:1] == ["ready"], ready
        bridge = int(ready[1])
        assert the_lab.acquired("desk") is not None
    finally:
        rig.send_signal(signal.SIGKILL)
        rig.wait()
    deadline = time.monotonic() + 20
    while the_lab.acquired("desk") is not None:
        assert time.monotonic() < deadline, "the place stayed acquired after the rig died"
        time.sleep(0.2)
    while os.path.exists(f"/proc/{bridge}"):
        assert time.monotonic() < deadline, "the labgrid bridge outlived the rig"
        time.sleep(0.1)


def test_each_environment_holds_one_serial_package() -> None:
    """pyserial and pyserial-labgrid install the same `serial` module: bootrig's
    environment keeps upstream pyserial, labgrid's its fork, neither both."""
    require_labgrid()
    probe = (
        "import importlib.metadata as m, json\n"
        "def has(d):\n    try:\n        m.version(d); return True\n"
        "    except m.PackageNotFoundError:\n        return False\n"
        "print(json.dumps([has('pyserial'), has('pyserial-labgrid')]))\n"
    )
    ours = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    theirs = subprocess.run([str(LABGRID_PYTHON), "-c", probe], capture_output=True, text=True)
    assert json.loads(ours.stdout) == [True, False], ours.stderr
    assert json.loads(theirs.stdout) == [False, True], theirs.stderr


def _set_power(cfg: Path, body: str) -> Path:
    """Replace the [power] table of a make_config() file."""
    text = re.sub(r"\[power\]\n.*?\n\n", f"[power]\n{body}\n", cfg.read_text(), flags=re.S)
    cfg.write_text(text)
    return cfg


def test_config_errors_name_the_key(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    for body, key in [
        ('driver = "labgrid"\n', r"power\.place"),
        ('driver = "labgrid"\nplace = "b1"\nchannel = 1\n', r"power\.channel"),
        ('driver = "labgrid"\nplace = "b1"\ntimeout_s = 0\n', r"power\.timeout_s"),
        ('driver = "labgrid"\nplace = 3\n', r"power\.place"),
    ]:
        with pytest.raises(ConfigError, match=rf"{re.escape(str(cfg))}: .*key '{key}'"):
            load_config(_set_power(cfg, body))
    # A relative python is the config's neighbour, its venv symlink kept (not resolved).
    c = load_config(_set_power(cfg, 'driver = "labgrid"\nplace = "b1"\npython = "lg/bin/python"\n'))
    assert driver_specs(c).power.settings.python == str(tmp_path / "lg" / "bin" / "python")
    with pytest.raises(ConfigError, match=r"key 'sim\.pdu_port': expected a TCP port"):
        load_config(make_config(tmp_path, sim={"pdu_port": 70000}))


def test_a_measured_boot_powered_through_a_labgrid_place(the_lab: Lab, tmp_path: Path) -> None:
    """`rig run` with the simulated board, its power switched only through labgrid: the
    power edge on the capture comes from labgrid's driver hitting the board's PDU."""
    cfg = _set_power(
        make_config(tmp_path, sim={"pdu_port": SIM_PDU}),
        f'driver = "labgrid"\nplace = "b1"\ncoordinator = "{the_lab.address}"\n'
        f'python = "{LABGRID_PYTHON}"\noff_hold_s = 0.1\n',
    )
    p = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    out = json.loads(p.stdout)
    report, folder = out["report"], Path(out["folder"])
    assert report["outcome"] == "ok", report
    run = json.loads((folder / "run.json").read_text())
    dev = run["instruments"]["power_device"]
    assert (dev["place"], dev["acquired_by_rig"]) == ("b1", True)
    tb = report["time_base"]
    assert tb["reference"] == "analyzer" and tb["power_edge_sample"] is not None
    truth = truth_boot(folder)["markers"]["ui_ready"]
    assert abs(report["power_to_ui_s"] - truth) <= 1 / tb["samplerate_hz"] + 1e-12
    assert the_lab.acquired("b1") is None
