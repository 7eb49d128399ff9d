"""Grafana dashboards as code over the InfluxDB schema of docs/influxdb.md, built with
grafana-foundation-sdk (docs/dashboards.md)."""
