"""Typed access to a parsed TOML table that names file and key in every error."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from rig.errors import ConfigError
from rig.untrusted import parse_toml, read_toml

#: The longest duration a config may ask for (`Table.seconds`).
MAX_SECONDS = 7 * 86400.0


def _within(v: float, lo: float | None, hi: float | None) -> bool:
    return (lo is None or v >= lo) and (hi is None or v <= hi)


def _num(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:g}"


def _range(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f" from {_num(lo)} to {_num(hi)}"
    if lo is not None:
        return f" >= {_num(lo)}"
    return f" <= {_num(hi)}" if hi is not None else ""


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return f"{type(value).__name__} {value!r}"


def load_toml(path: Path) -> dict[str, Any]:
    """The file's TOML, strict and bounded (rig.untrusted: size, depth, key length)."""
    try:
        with path.open("rb") as f:
            return read_toml(f, str(path))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config: {e.strerror or e}") from None


class Table:
    """One TOML table; reading a key checks its type, `done()` rejects unknown keys."""

    def __init__(self, path: Path, data: dict[str, Any], where: str = "") -> None:
        self.path = path
        self.data = data
        self.where = where
        self._seen: set[str] = set()

    def key(self, key: str) -> str:
        return ".".join(k for k in (self.where, key) if k)

    def fail(self, key: str, why: str) -> NoReturn:
        raise ConfigError(f"{self.path}: key '{self.key(key)}': {why}")

    def error(self, key: str, expected: str, found: object) -> NoReturn:
        self.fail(key, f"expected {expected}, found {_kind(found)}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = ...) -> Any:
        self._seen.add(key)
        if key not in self.data:
            if default is ...:
                raise ConfigError(f"{self.path}: missing key '{self.key(key)}'")
            return default
        return self.data[key]

    def str(self, key: str, default: Any = ..., choices: tuple[str, ...] = ()) -> Any:
        v = self.raw(key, default)
        if v is default and default is not ...:
            return v
        if not isinstance(v, str) or (choices and v not in choices):
            self.error(key, " or ".join(repr(c) for c in choices) if choices else "a string", v)
        return v

    def int(
        self, key: str, default: Any = ..., min: int | None = None, max: int | None = None
    ) -> Any:
        v = self.raw(key, default)
        if v is default and default is not ...:
            return v
        if isinstance(v, bool) or not isinstance(v, int) or not _within(v, min, max):
            self.error(key, "an integer" + _range(min, max), v)
        return v

    def float(
        self, key: str, default: Any = ..., min: float | None = None, max: float | None = None
    ) -> Any:
        """A finite number: TOML's nan and inf are never a setting (a NaN off-hold would
        run, and be written into run.json as NaN)."""
        v = self.raw(key, default)
        if v is default and default is not ...:
            return v
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            self.error(key, "a finite number" + _range(min, max), v)
        if not _within(v, min, max):
            self.error(key, "a number" + _range(min, max), v)
        return float(v)

    def seconds(self, key: str, default: Any = ..., min: float = 0.0) -> Any:
        """A duration in seconds, at most MAX_SECONDS (a week: no cycle waits longer,
        and the OS's timers overflow long before 1e300)."""
        return self.float(key, default, min=min, max=MAX_SECONDS)

    def bool(self, key: str, default: Any = ...) -> Any:
        v = self.raw(key, default)
        if not isinstance(v, bool):
            self.error(key, "true or false", v)
        return v

    def table(self, key: str, required: bool = False) -> Table:
        v = self.raw(key, ... if required else {})
        if not isinstance(v, dict):
            self.error(key, "a table", v)
        return Table(self.path, v, self.key(key))

    def tables(self, key: str) -> list[Table]:
        v = self.raw(key, [])
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            self.error(key, "an array of tables", v)
        return [Table(self.path, x, f"{self.key(key)}[{i}]") for i, x in enumerate(v)]

    def done(self) -> None:
        unknown = sorted(set(self.data) - self._seen)
        if unknown:
            raise ConfigError(
                f"{self.path}: unknown key '{self.key(unknown[0])}' "
                f"(known here: {', '.join(sorted(self._seen)) or 'none'})"
            )


def apply_overrides(data: dict[str, Any], overrides: Sequence[str], where: Path) -> None:
    """`KEY=VALUE` from the command line (`--set qemu.kernel_args="quiet"`): the dotted
    key's table is created if missing, VALUE is a TOML value. The result is validated
    like the file itself, and run.json's config snapshot shows what really ran."""
    for item in overrides:
        key, sep, text = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(parts):
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. timeouts.boot_s=10")
        try:
            value = parse_toml(f"v = {text}")["v"]
        except ValueError as e:  # TOMLDecodeError, or too deep (rig.untrusted)
            shown = repr(text) if len(text) <= 80 else f"{text[:80]!r}..."
            raise ConfigError(
                f"--set {key}: {shown} is not a TOML value ({e}); quote strings: {key}='\"...\"'"
            ) from None
        table = data
        for i, part in enumerate(parts[:-1]):
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise ConfigError(
                    f"{where}: --set {key}: '{'.'.join(parts[: i + 1])}' is not a table"
                )
        table[parts[-1]] = value
