"""Sinks: where reports go (terminal, files, HTML, InfluxDB, Grafana)."""
