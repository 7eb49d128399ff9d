"""N simulated boards behind a real labgrid lab on 127.0.0.1, one place each (`b1`..`bN`):
for the place tests, the pabot suites and bench/lab_scale.py.

One exporter exports every board with a power resource (the board's REST PDU, switched
by labgrid's NetworkPowerDriver) and a NetworkSerialPort (a real ser2net in front of the
board's console pty). The rig starts each board itself from its config's `[sim]` table,
at the fixed PDU port and console path the exporter and ser2net were configured with
(as a lab configures them for boards on the bench), and switches and reads it only
through the place. Every process is stopped by its PID (tests/labgrid_lab.py,
tests/ser2net.py), even when a test fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e import make_config
from tests.labgrid_lab import LABGRID_PYTHON, Lab, lab
from tests.ser2net import free_port, ser2net


@dataclass(frozen=True)
class SimBoard:
    place: str
    pdu_port: int
    link: Path  # where the board publishes its console pty; ser2net serves it
    console_url: str  # what the rig opens: the NetworkSerialPort as a pyserial URL
    console_port: int
    protocol: str  # ser2net's: "raw" or "rfc2217"
    profile: str  # its config/boards profile
    coordinator: str

    def resources(self) -> dict[str, dict[str, Any]]:
        """Its exporter group: {ResourceClass: params}."""
        rest = f"http://127.0.0.1:{self.pdu_port}/relay/{{index}}/{{value}}"
        return {
            "NetworkPowerPort": {"model": "simplerest", "host": rest, "index": 1},
            "NetworkSerialPort": {"host": "127.0.0.1", "port": self.console_port,
                                  "speed": 115200, "protocol": self.protocol},
        }  # fmt: skip

    def config(self, tmp: Path, **kw: Any) -> Path:
        """Its rig config, the same for every place of a kind (the board's [sim] aside,
        which a real lab does not have): [target] says how to reach labgrid, `--place`
        (or `[target] place`) which board. `kw`: tests.e2e.make_config's."""
        target = (
            f'\n[target]\ncoordinator = "{self.coordinator}"\npython = "{LABGRID_PYTHON}"\n'
            "timeout_s = 20\n"
        )
        tmp.mkdir(parents=True, exist_ok=True)
        sim = {"pdu_port": self.pdu_port, "console_link": str(self.link), **kw.pop("sim", {})}
        kw.setdefault("board", self.profile)
        return make_config(tmp, sim=sim, extra=target + kw.pop("extra", ""), **kw)


@dataclass(frozen=True)
class BoardLab:
    lab: Lab
    boards: list[SimBoard]
    tmp: Path


Extra = Callable[[list[SimBoard]], dict[str, dict[str, Any]]]


@contextmanager
def boards(
    tmp: Path,
    profiles: Sequence[str],
    protocols: Sequence[str] | None = None,
    extra: Extra | None = None,
) -> Iterator[BoardLab]:
    """Boards `b1`..`bN` booting `profiles` (config/boards names), their consoles served
    by ser2net as `protocols` ("raw" or "rfc2217"; default raw). `extra(boards)`: more
    places, {name: {ResourceClass: params}}, exported and named as given."""
    protocols = list(protocols or ["raw"] * len(profiles))
    with ExitStack() as stack:
        lg = stack.enter_context(lab(tmp / "lab"))
        made: list[SimBoard] = []
        for i, (profile, protocol) in enumerate(zip(profiles, protocols, strict=True), 1):
            d = tmp / f"b{i}"
            d.mkdir()
            link = d / "console"
            port = stack.enter_context(ser2net(str(link), d))[protocol]
            url = f"socket://127.0.0.1:{port}"
            if protocol == "rfc2217":
                url = f"rfc2217://127.0.0.1:{port}?ign_set_control"
            made.append(
                SimBoard(f"b{i}", free_port(), link, url, port, protocol, profile, lg.address)
            )
        groups = {f"board{i}": b.resources() for i, b in enumerate(made, 1)}
        more = extra(made) if extra else {}
        lg.exporter("lab", {**groups, **more})
        for i, b in enumerate(made, 1):
            lg.place(b.place, f"lab/board{i}/*")
        for name in more:
            lg.place(name, f"lab/{name}/*")
        yield BoardLab(lg, made, tmp)
