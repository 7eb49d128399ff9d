"""The metadata of a sigrok session file (`.sr`), read as libsigrok reads it. Both
engines take channel names and sample rate from here, so what libsigrok would read
differently (a key or name given twice, a channel past `total probes`, a rate of no
whole number of Hz) is refused, naming the file and the key."""

from __future__ import annotations

import configparser
import re
import zipfile
import zlib
from decimal import Decimal
from pathlib import Path

from rig.errors import ArtifactError

#: What opening a damaged zip or reading a damaged member raises (bad deflate data, CRC,
#: unknown compression or zip version, encryption...).
MEMBER_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
)


_RATE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(|k|M|G)Hz\s*$")
_RATE_MUL = {"": 1, "k": 1_000, "M": 1_000_000, "G": 1_000_000_000}


def parse_samplerate(text: str) -> int:
    """`1 MHz`, `1.5 kHz` in Hz, exactly: `1.5 Hz` is a ValueError, not rounded."""
    m = _RATE_RE.match(text)
    if not m:
        raise ValueError(f"not a sample rate: {text!r}")
    hz = Decimal(m.group(1)) * _RATE_MUL[m.group(2)]
    if hz != hz.to_integral_value():
        raise ValueError(f"not a whole number of Hz: {text!r}")
    return int(hz)


#: Up to 32 channels a sample (DSLogic U3Pro32 and the like).
MAX_UNITSIZE = 4


def number(text: str) -> int:
    """A plain decimal number of at most 9 digits, or -1 (int() would take "²" and " 3 "
    too, and raise on 5,000 digits)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else -1


#: A capture's metadata is a few hundred bytes; more is not one (and configparser takes
#: quadratic time over many bad lines: 50 MB of them took minutes).
MAX_METADATA_BYTES = 64 << 10
#: The fastest sample rate a capture may claim (the config's analyzer.samplerate bound).
MAX_SAMPLERATE = 100_000_000_000


def metadata_ini(path: Path, z: zipfile.ZipFile) -> configparser.ConfigParser:
    """The metadata read as libsigrok's GKeyFile reads it (UTF-8, keys keep their case,
    only '=' separates, '#' comments); a key or section given twice is refused."""
    size = z.getinfo("metadata").file_size  # what zipfile will decompress, at most
    if size > MAX_METADATA_BYTES:
        raise ArtifactError(
            f"{path}: a metadata member of {size} bytes, more than {MAX_METADATA_BYTES} "
            "for the metadata"
        )
    try:
        text = z.read("metadata").decode("utf-8")
    except UnicodeDecodeError as e:
        raise ArtifactError(f"{path}: metadata is not UTF-8 text (byte offset {e.start})") from None
    except MEMBER_ERRORS as e:
        raise ArtifactError(f"{path}: metadata is not readable: {e}") from None
    cp = configparser.ConfigParser(
        interpolation=None, delimiters=("=",), comment_prefixes=("#",), default_section=""
    )
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        cp.read_string("\n".join(line.lstrip() for line in text.splitlines()))
    except configparser.DuplicateOptionError as e:
        raise ArtifactError(
            f"{path}: metadata [{e.section}] key {e.option!r} given twice (line {e.lineno})"
        ) from None
    except configparser.DuplicateSectionError as e:
        raise ArtifactError(
            f"{path}: metadata section [{e.section}] given twice (line {e.lineno})"
        ) from None
    except configparser.Error as e:
        raise ArtifactError(f"{path}: metadata is not readable: {e}") from None
    return cp


def channel_names(
    where: str, sec: configparser.SectionProxy, total: str, unitsize: int
) -> tuple[str, ...]:
    """Channel names by index (bit i of a sample is channel i); a channel with no
    probeN key is called by its index, as sigrok-cli calls it."""
    probes: dict[int, tuple[str, str]] = {}  # N -> (key, name)
    for key, name in sec.items():
        if not key.startswith("probe"):
            continue
        n = number(key[5:])
        if n < 1:
            raise ArtifactError(f"{where} key {key!r}: expected probeN with N from 1")
        if n in probes:
            raise ArtifactError(f"{where} keys {probes[n][0]!r} and {key!r} both name channel {n}")
        if not name:
            raise ArtifactError(f"{where} {key}: an empty channel name")
        probes[n] = (key, name)
    if not probes:
        raise ArtifactError(f"{where} names no channels (no probeN keys)")
    if number(total) < 0 or max(number(total), *probes) > 8 * unitsize:
        raise ArtifactError(
            f"{where} total probes {total!r}: 1 to {8 * unitsize} fit in unitsize {unitsize}"
        )
    if past := [n for n in probes if n > number(total) > 0]:
        n = min(past)
        raise ArtifactError(f"{where} probe{n} names channel {n}, but total probes is {total}")
    seen: dict[str, str] = {}
    for i in range(max(number(total), *probes)):
        key, name = probes.get(i + 1, (f"channel {i + 1} (no probe{i + 1})", str(i)))
        if name in seen:
            raise ArtifactError(
                f"{where} names channel {name!r} twice ({seen[name]} and {key}); "
                "each channel needs a name of its own"
            )
        seen[name] = key
    return tuple(seen)
