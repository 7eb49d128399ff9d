"""What the rig opens of a labgrid place's resources (rig/instruments/place.py), and the
`[target]` table: no labgrid needed here (tests/test_labgrid_places.py runs the real
one, a place exporting a sigrok analyzer among them)."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest

from rig.errors import ConfigError, InstrumentError
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.place import PlaceInfo
from rig.model.run import Run
from tests.e2e import make_config


def _place(*resources: dict[str, Any]) -> PlaceInfo:
    identity = {"place": "b7", "acquired": "host/me", "acquired_by_rig": True,
                "labgrid": "26.0.1", "resources": list(resources),
                "power_resource": {"cls": "NetworkPowerPort", "name": "mains"}}  # fmt: skip
    return PlaceInfo(identity, "127.0.0.1:20408")


def _serial(name: str, protocol: str = "raw", **more: Any) -> dict[str, Any]:
    params = {"host": "127.0.0.1", "port": 4001, "speed": 921600, "protocol": protocol}
    return {"name": name, "cls": "NetworkSerialPort", "params": {**params, **more},
            "avail": True}  # fmt: skip


def test_console_urls_follow_the_resource_protocol() -> None:
    assert _place(_serial("con")).console_url(None) == ("socket://127.0.0.1:4001", 921600)
    url, _ = _place(_serial("con", "rfc2217")).console_url(None)
    assert url == "rfc2217://127.0.0.1:4001?ign_set_control"  # as labgrid's SerialDriver
    with pytest.raises(InstrumentError, match=r"console protocol 'telnet'"):
        _place(_serial("con", "telnet")).console_url(None)


def test_which_console_and_why_not() -> None:
    two = _place(_serial("a"), _serial("b"))
    with pytest.raises(InstrumentError, match=r"2 serial console .*'a', 'b'.*console_resource"):
        two.console_url(None)
    assert two.console_url("b")[0] == "socket://127.0.0.1:4001"
    with pytest.raises(InstrumentError, match=r"'b7' has no serial console .* named 'c'"):
        two.console_url("c")
    down = _serial("a")
    down["avail"] = False
    with pytest.raises(InstrumentError, match=r"'b7': its serial console .*'a' is not avail"):
        _place(down).console_url(None)
    proxied = _serial("a", extra={"proxy_required": True, "proxy": "gw.lab"})
    with pytest.raises(InstrumentError, match=r"SSH proxy \(gw.lab\)"):
        _place(proxied).console_url(None)


def test_the_sigrok_analyzer_a_place_exports() -> None:
    assert _place(_serial("a")).sigrok_device() is None
    demo = {"name": "la", "cls": "SigrokDevice", "params": {"driver": "demo"}, "avail": True}
    place = _place(demo)
    assert place.sigrok_device() == "demo"
    usb = {"name": "la", "cls": "NetworkSigrokUSBDevice", "avail": True,
           "params": {"host": socket.gethostname(), "busnum": 1, "devnum": 7,
                      "driver": "fx2lafw"}}  # fmt: skip
    assert _place(usb).sigrok_device() == "fx2lafw:conn=1.7"
    usb["params"]["host"] = "exporter-9"
    with pytest.raises(InstrumentError, match=r"sigrok analyzer is on host 'exporter-9'"):
        _place(usb).sigrok_device()
    # What run.json keeps of it (no console opened: none recorded).
    rec = place.record()
    assert (rec.name, rec.holder, rec.analyzer, rec.power, rec.console) == (
        "b7", "host/me", "demo", "NetworkPowerPort 'mains'", None,
    )  # fmt: skip


def test_run_json_round_trips_the_place() -> None:
    run = Run(run_id="r", board="b", started_utc=None, power_on_ns=1,
              place=_place(_serial("a")).record())  # fmt: skip
    back = Run.from_json(run.to_json())
    assert back.place is not None and back.place.name == "b7"
    assert "place" not in Run(run_id="r", board="b", started_utc=None, power_on_ns=1).to_json()


def test_a_place_replaces_power_console_and_the_default_analyzer(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, extra='\n[target]\ncoordinator = "127.0.0.1:1"\n')
    plain = load_config(cfg)
    assert plain.target is None and driver_specs(plain).power.name == "ch340"
    c = load_config(cfg, overrides=['target.place="b3"'])
    assert c.target is not None and c.target.place == "b3"
    d = driver_specs(c)
    assert (d.power.name, d.power.settings.place) == ("labgrid", "b3")
    assert d.power.settings.coordinator == "127.0.0.1:1"
    assert d.console.name == "labgrid"
    assert d.analyzer.name == "sim"  # the config names one: kept
    text = re.sub(r'^driver = "sim" .*\n', "", cfg.read_text(), flags=re.M)
    no_analyzer = tmp_path / "none.toml"
    no_analyzer.write_text(text)
    c = load_config(no_analyzer, overrides=['target.place="b3"'])
    assert driver_specs(c).analyzer.name == "labgrid"
    # Only [target]: no [power] or [console] table is needed.
    bare = tmp_path / "bare.toml"
    bare.write_text('[target]\nplace = "b1"\n[power]\noff_hold_s = 1\n')
    b = load_config(bare)
    d = driver_specs(b)
    assert (d.power.name, b.power.off_hold_s, d.console.name) == ("labgrid", 1.0, "labgrid")


def test_target_errors_name_the_key(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    for extra, key in [
        ('[target]\nplace = ""\n', "target.place"),
        ("[target]\nplace = 3\n", "target.place"),
        ('[target]\nplace = "b1"\ntimeout_s = 0\n', "target.timeout_s"),
        ('[target]\nplace = "b1"\nresource = "x"\n', "target.resource"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(cfg.read_text() + "\n" + extra)
        with pytest.raises(ConfigError, match=rf"{re.escape(str(bad))}: .*'{re.escape(key)}'"):
            load_config(bad)
