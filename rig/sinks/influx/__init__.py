"""InfluxDB sink: boot reports as line protocol over the v1 HTTP API, spooled on outage.

settings (the [influx] table), points + lineproto (report -> lines, pure), client (HTTP),
spool (durable outage queue under results/), deliver (write, else spool, else say why),
replay (drain the spool), batch (batches, split on rejection), sink (push, status),
server (a private influxd bound to 127.0.0.1), sample (realistic reports for tests/bench).
"""
