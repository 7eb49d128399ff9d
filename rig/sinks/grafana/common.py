"""What every panel shares: the provisioned datasource, the variables' filter, quoting."""

from __future__ import annotations

from typing import Any

from rig.sinks.influx import influxql

#: Must match config/grafana/provisioning/datasources/bootrig.yaml (a test checks it).
DATASOURCE_UID = "bootrig-influxdb"
DATASOURCE: dict[str, Any] = {"type": "influxdb", "uid": DATASOURCE_UID}

#: The dashboard variables, in the order they narrow each other.
VARIABLES = ("rig", "board", "variant")

#: Every panel query filters on the variables. Regex match rather than `=`, so a
#: multi-value selection `(a|b)` and "All" (`.*`, which also matches a missing tag such
#: as a boot without a variant) work alike.
SELECTION = " AND ".join(f'"{v}" =~ /^${v}$/' for v in VARIABLES)


ql_string = influxql.string  # an InfluxQL single-quoted string literal
ql_ident = influxql.ident  # an InfluxQL double-quoted identifier
