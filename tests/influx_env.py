"""A private influxd for a test module (started once, always stopped) and one database
per test, so the tests stay independent on the shared server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rig.config.influx import InfluxSettings
from rig.sinks.influx.server import PrivateServer, private_server


@pytest.fixture(scope="module", name="server")
def influx_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    with private_server(tmp_path_factory.mktemp("influxd")) as srv:
        yield srv


def settings_for(server: PrivateServer, request: pytest.FixtureRequest) -> InfluxSettings:
    return InfluxSettings(url=server.url, database=f"t_{request.node.name}"[:60])
