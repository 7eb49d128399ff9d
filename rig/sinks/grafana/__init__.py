"""Grafana dashboards as code, over the InfluxDB schema of docs/influxdb.md.

common (datasource, selection filter, InfluxQL quoting), budgets (config/budgets.toml),
panels_boot and panels_soak (one function per panel), dashboards (variables, layout),
generate (JSON files under config/grafana/dashboards), macros (Grafana's query-time
expansion of $timeFilter, $__interval and variables) and run (execute every panel query
against InfluxDB, as Grafana would).
"""
