"""Sinks: where reports go (terminal, files, later InfluxDB)."""
