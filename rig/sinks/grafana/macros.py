"""Grafana's query-time expansion of an InfluxQL panel query, done as Grafana does it, so
the queries can be run without Grafana (tests, `rig grafana query`).

Supported, with the InfluxDB (InfluxQL) datasource's rules:

- `$timeFilter`: `time >= <from> and time <= <to>`, each `<n>ms` for an absolute time,
  `now()` for `now`, `now() - <n><unit>` for `now-<n><unit>` (units s, m, h, d);
- `$__interval` / `$interval` (e.g. `30s`), `$__interval_ms`: the range divided by the
  panel's max data points, rounded to Grafana's steps, not below the min interval;
- `$__from`, `$__to` (epoch ms), `$__range` (e.g. `1h`), `$__range_s`, `$__range_ms`;
- template variables as `$name`, `${name}`, `[[name]]` and `${name:format}` with the
  formats `regex`, `pipe`, `csv`, `raw`, `singlequote`, `doublequote`. Without a format,
  the InfluxDB rule: a multi-value or include-all variable is regex-escaped and several
  values become `(a|b)`; a single-value variable is escaped only when the query holds a
  regex (`=~ /.../` or `!~ /.../`); a number is never escaped. "All" becomes the custom
  all value unformatted (`.*`), or every option when there is none.

Unknown variables are an error here (Grafana would leave them in the query).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rig.errors import InputError

_REF = re.compile(r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^}]+))?(?::([^}]+))?\}")
_REGEX_IN_QUERY = re.compile(
    r"\s*[=!]~\s*/(?![*+?])(?:[^\r\n\[/\\]|\\.|\[(?:[^\r\n\]\\]|\\.)*\])+/"
)
_RELATIVE = re.compile(r"^now-(\d+)([smhd])$")
_UNITS_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}

# Grafana's rangeutil.roundInterval: (upper bound exclusive, interval), in ms.
_STEPS = (
    (15, 10), (35, 20), (75, 50), (150, 100), (350, 200), (750, 500), (1_500, 1_000),
    (3_500, 2_000), (7_500, 5_000), (12_500, 10_000), (17_500, 15_000), (25_000, 20_000),
    (45_000, 30_000), (90_000, 60_000), (210_000, 120_000), (450_000, 300_000),
    (750_000, 600_000), (1_050_000, 900_000), (1_500_000, 1_200_000),
    (2_700_000, 1_800_000), (5_400_000, 3_600_000), (9_000_000, 7_200_000),
    (16_200_000, 10_800_000), (32_400_000, 21_600_000), (86_400_000, 43_200_000),
    (604_800_000, 86_400_000), (1_814_400_000, 604_800_000),
    (3_628_800_000, 2_592_000_000),
)  # fmt: skip


class ExpandError(InputError):
    """A query refers to something the expander does not know."""


@dataclass(frozen=True)
class Variable:
    """A dashboard variable's current selection."""

    values: Sequence[str] = ()
    multi: bool = True
    include_all: bool = True
    all_value: str | None = None  # the variable's custom all value (ours: ".*")
    is_all: bool = False
    options: Sequence[str] = ()  # every value, used for "All" without a custom value


@dataclass(frozen=True)
class TimeRange:
    """Absolute epoch ms, or Grafana's raw `now` / `now-7d` forms (then `now_ms` is used
    for the interval)."""

    start: int | str
    end: int | str
    now_ms: int = 0

    def ms(self, t: int | str) -> int:
        if isinstance(t, int):
            return t
        if t == "now":
            return self.now_ms
        m = _RELATIVE.match(t)
        if not m:
            raise ExpandError(f"time {t!r}: expected epoch ms, 'now' or 'now-<n><s|m|h|d>'")
        return self.now_ms - int(m.group(1)) * _UNITS_MS[m.group(2)]

    @property
    def span_ms(self) -> int:
        return self.ms(self.end) - self.ms(self.start)


def round_interval(ms: float) -> int:
    return next((step for bound, step in _STEPS if ms < bound), 31_536_000_000)


def hms(ms: int) -> str:
    """Grafana's secondsToHms: the largest whole unit."""
    s = ms / 1000
    for size, unit in ((31_536_000, "y"), (86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")):
        if s >= size:
            return f"{int(s // size)}{unit}"
    return f"{int(ms)}ms" if ms >= 1 else "less than a millisecond"


def interval_ms(span_ms: int, max_data_points: int, min_interval_ms: int = 1) -> int:
    """Grafana's calculateInterval: range / points, rounded, at least the min interval."""
    return max(round_interval(span_ms / max(1, max_data_points)), min_interval_ms)


def influx_time(t: int | str) -> str:
    if isinstance(t, int):
        return f"{t}ms"
    if t == "now":
        return "now()"
    m = _RELATIVE.match(t)
    if m:
        return f"now() - {m.group(1)}{m.group(2)}"
    raise ExpandError(f"time {t!r}: expected epoch ms, 'now' or 'now-<n><s|m|h|d>'")


def escape_regex(value: str) -> str:
    """@grafana/data escapeRegex (the slash too: the regex is delimited by slashes)."""
    return re.sub(r"[\\^$*+?.()|\[\]{}/]", lambda m: "\\" + m.group(0), value)


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _formatted(var: Variable, fmt: str | None, query: str) -> str:
    if var.is_all and var.all_value is not None:
        return var.all_value  # Grafana does not format a custom all value
    values = list(var.options if var.is_all else var.values)
    if fmt is None:
        if len(values) == 1 and _is_number(values[0]):
            return values[0]
        if not (var.multi or var.include_all) and not _REGEX_IN_QUERY.search(query):
            return ",".join(values)
        fmt = "regex"
    if fmt == "regex":
        escaped = [escape_regex(v) for v in values]
        return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"
    simple = {
        "pipe": lambda: "|".join(values),
        "csv": lambda: ",".join(values),
        "raw": lambda: ",".join(values),
        "singlequote": lambda: ",".join("'" + v.replace("'", "\\'") + "'" for v in values),
        "doublequote": lambda: ",".join('"' + v.replace('"', '\\"') + '"' for v in values),
    }
    if fmt not in simple:
        raise ExpandError(f"variable format {fmt!r} is not supported")
    return simple[fmt]()


def expand(
    query: str,
    variables: Mapping[str, Variable],
    rng: TimeRange,
    interval: int,
    fmt: str | None = None,
) -> str:
    """The query as Grafana sends it to InfluxDB; `interval` in ms (see `interval_ms`),
    `fmt` forces a format on every variable (Grafana uses "regex" for variable queries)."""
    start, end = rng.ms(rng.start), rng.ms(rng.end)
    builtins = {
        "timeFilter": f"time >= {influx_time(rng.start)} and time <= {influx_time(rng.end)}",
        "__interval": hms(interval),
        "interval": hms(interval),
        "__interval_ms": str(interval),
        "__from": str(start),
        "__to": str(end),
        "__range": hms(end - start),
        "__range_s": str((end - start) // 1000),
        "__range_ms": str(end - start),
    }

    def replace(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or m.group(4)
        own_fmt = m.group(3) or m.group(6)
        if name in builtins:
            return builtins[name]
        if name not in variables:
            raise ExpandError(f"query refers to an unknown variable ${name}: {query}")
        return _formatted(variables[name], own_fmt or fmt, query)

    return _REF.sub(replace, query)
