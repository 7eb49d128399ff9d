"""InfluxDB sink: boot reports as line protocol over the v1 HTTP API, spooled on outage
(docs/influxdb.md)."""
