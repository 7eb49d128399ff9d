"""Grafana dashboards as code, over the InfluxDB schema of docs/influxdb.md, built with
Grafana's own Foundation SDK (grafana-foundation-sdk).

common (datasource, selection filter, InfluxQL quoting), influx (the InfluxQL query and
annotation models the SDK lacks), panels_boot and panels_soak (one function per panel;
the budget lines come from rig.config.budgets, per board and variant), dashboards
(variables, layout), generate (JSON files under config/grafana/dashboards) and query
(`rig grafana query`: every query of a dashboard run against InfluxDB as Grafana sends
it).
"""
