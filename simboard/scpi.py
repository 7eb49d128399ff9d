"""SCPI command lines of the simulated bench supply: parsing only (pure).

A subset of a common programmable supply: `*IDN?`, `*RST`, `*CLS`, `*OPC?`,
`SYST:ERR?`, `OUTP[:STAT] ON|OFF|1|0` and `OUTP?`, `APPL <V>,<A>` and `APPL?`,
`[SOUR:]VOLT <V>` / `VOLT?`, `[SOUR:]CURR <A>` / `CURR?`, `MEAS[:SCAL]:CURR[:DC]?`,
`MEAS[:SCAL]:VOLT[:DC]?`. Mnemonics are case-insensitive in their short or long form;
several commands may share a line, separated by `;`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: (short, long) forms of every mnemonic we know.
_FORMS = {
    "SOUR": "SOURCE",
    "VOLT": "VOLTAGE",
    "CURR": "CURRENT",
    "OUTP": "OUTPUT",
    "STAT": "STATE",
    "APPL": "APPLY",
    "MEAS": "MEASURE",
    "SCAL": "SCALAR",
    "SYST": "SYSTEM",
    "ERR": "ERROR",
    "LEV": "LEVEL",
    "IMM": "IMMEDIATE",
    "DC": "DC",
}
#: Optional mnemonics dropped before matching (SCPI's [bracketed] nodes).
_OPTIONAL = {"SOUR", "STAT", "SCAL", "DC", "LEV", "IMM"}

#: SCPI error numbers and texts (the standard's).
UNDEFINED_HEADER = (-113, "Undefined header")
MISSING_PARAMETER = (-109, "Missing parameter")
DATA_TYPE = (-104, "Data type error")
OUT_OF_RANGE = (-222, "Data out of range")


class ScpiError(Exception):
    def __init__(self, code: tuple[int, str], detail: str = "") -> None:
        super().__init__(f'{code[0]},"{code[1]}{"; " + detail if detail else ""}"')
        self.code = code


@dataclass(frozen=True)
class Command:
    """`header`: canonical short mnemonics joined by ':' (e.g. "MEAS:CURR"), or a
    common command ("*IDN"); `query`: ends with '?'; `args`: the parameters."""

    header: str
    query: bool
    args: tuple[str, ...]


def _mnemonic(token: str) -> str:
    up = token.upper()
    for short, long in _FORMS.items():
        if up in (short, long):
            return short
    raise ScpiError(UNDEFINED_HEADER, token)


def parse(text: str) -> Command:
    text = text.strip()
    head, _, rest = text.partition(" ")
    query = head.endswith("?")
    head = head.rstrip("?")
    args = tuple(a.strip() for a in rest.split(",")) if rest.strip() else ()
    if head.startswith("*"):
        return Command(head.upper(), query, args)
    nodes = [_mnemonic(t) for t in head.lstrip(":").split(":") if t]
    kept = [n for n in nodes if n not in _OPTIONAL]
    if not kept:
        raise ScpiError(UNDEFINED_HEADER, head)
    return Command(":".join(kept), query, args)


def split_line(line: str) -> list[str]:
    """Commands of one line (`;` separates them; a leading ':' restarts at the root)."""
    return [part for part in (p.strip() for p in line.split(";")) if part]


def number(cmd: Command, i: int, lo: float, hi: float) -> float:
    if len(cmd.args) <= i:
        raise ScpiError(MISSING_PARAMETER, cmd.header)
    try:
        v = float(cmd.args[i])
    except ValueError:
        raise ScpiError(DATA_TYPE, cmd.args[i]) from None
    if not lo <= v <= hi:
        raise ScpiError(OUT_OF_RANGE, f"{cmd.header} {v:g} not within {lo:g}..{hi:g}")
    return v


def boolean(cmd: Command) -> bool:
    if not cmd.args:
        raise ScpiError(MISSING_PARAMETER, cmd.header)
    word = cmd.args[0].upper()
    if word in ("ON", "1"):
        return True
    if word in ("OFF", "0"):
        return False
    raise ScpiError(DATA_TYPE, cmd.args[0])
