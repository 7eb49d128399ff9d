"""Scan a capture's power rail and marker channels with sigrok-cli and our `bootmarkers`
decoder, the reference, and parse its annotation texts (format: docs/decoder.md)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from rig.errors import ArtifactError, ConfigError, InputError, RigError
from rig.model import MarkerScan
from rig.names import CHANNELS, POWER, UART_TX, canonical_marker

DECODER = "bootmarkers"
ENV_DIR = "BOOTRIG_DECODERS_DIR"

# "123-456 bootmarkers-1: text", as printed with --protocol-decoder-samplenum.
_LINE_RE = re.compile(rf"^(\d+)-(\d+) {DECODER}-\d+: (.*)$")
_MARKER_RE = re.compile(r"^marker (\w+) (rise|fall)$")
_BOUNCE_RE = re.compile(r"^bounce (\d+)$")
# sigrok-cli exits 0 even when the decoder raised or a channel name did not resolve; these
# stderr lines are how such failures show.
_FAILURE_RE = re.compile(r"^(srd|cli): |Traceback|Fatal Python error", re.MULTILINE)


def user_decoders_dir() -> Path:
    """The per-user directory libsigrokdecode searches (glib's g_get_user_data_dir)."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "libsigrokdecode" / "decoders"


def repo_decoders_dir() -> Path:
    """The source tree's `decoders/`, next to the `rig` package (editable installs)."""
    return Path(__file__).resolve().parents[2] / "decoders"


def find_decoders() -> tuple[Path, str]:
    """Where the rig loads `bootmarkers` from, and why: "env", "repo", "package" or "user"."""
    env = os.environ.get(ENV_DIR)
    if env:
        # An explicit setting that is wrong must be loud, not silently replaced.
        if not (Path(env) / DECODER / "pd.py").is_file():
            raise ConfigError(f"{ENV_DIR}={env}: no {DECODER}/pd.py there")
        return Path(env), "env"
    for d, source in (
        (repo_decoders_dir(), "repo"),
        (Path(sys.prefix) / "share" / "bootrig" / "decoders", "package"),  # pyproject data-files
        (user_decoders_dir(), "user"),
    ):
        if (d / DECODER / "pd.py").is_file():
            return d, source
    raise RigError(
        f"decoder '{DECODER}' not found in {repo_decoders_dir()} or {user_decoders_dir()}; "
        f"run `rig decoders install` or set {ENV_DIR}"
    )


def contract_channels(
    capture_channels: tuple[str, ...],
    rename: Mapping[str, str] | None = None,
    where: Path | str = "capture",
) -> dict[str, str]:
    """Contract name (power, the markers, uart_tx) -> the capture channel read as it.

    `rename` reads a capture channel as a contract name (`{"TX": "uart_tx"}`), in place
    of one the capture itself calls so; an old marker name is its contract name. Two
    channels read as one name are refused naming both: taking either would be a guess."""
    rename = {c: canonical_marker(n) for c, n in (rename or {}).items()}
    mapped: dict[str, list[str]] = {}
    named: dict[str, list[str]] = {}
    for c in capture_channels:
        if c in rename:
            mapped.setdefault(rename[c], []).append(c)
        elif canonical_marker(c) in CHANNELS:
            named.setdefault(canonical_marker(c), []).append(c)
    out: dict[str, str] = {}
    for name in CHANNELS:
        if len(got := mapped.get(name, [])) > 1:
            raise InputError(
                f"{where}: channels {got[0]!r} and {got[1]!r} are both mapped to {name}"
            )
        if len(named.get(name, [])) > 1 and not got:
            a, b = named[name][:2]
            raise ArtifactError(f"{where}: channels {a!r} and {b!r} would both be read as {name}")
        if found := got or named.get(name):
            out[name] = found[0]
    return out


def check_debounce(debounce_us: float) -> None:
    """Both engines refuse a negative (or NaN) debounce before reading the capture."""
    if not debounce_us >= 0:
        raise ValueError(f"debounce_us must be >= 0, got {debounce_us}")


def channel_map(
    capture_channels: tuple[str, ...],
    rename: Mapping[str, str] | None = None,
    where: Path | str = "capture",
    need_power: bool = True,
) -> dict[str, str]:
    """Decoder channel id -> capture channel name: `contract_channels` without uart_tx;
    refused without a power channel when `need_power`."""
    found = contract_channels(capture_channels, rename, where)
    if need_power and POWER not in found:
        raise ArtifactError(
            f"{where}: no '{POWER}' channel (channels: {', '.join(capture_channels)})"
        )
    return {k: v for k, v in found.items() if k != UART_TX}


def scan_markers(
    capture: Path,
    debounce_us: float = 1000.0,
    sigrok_cli: str = "sigrok-cli",
    rename: Mapping[str, str] | None = None,
) -> MarkerScan:
    """Find debounced power edges and marker edges in `capture` (sample numbers from 0)."""
    check_debounce(debounce_us)
    # Here, not at the top: the sample reader needs numpy, `rig decoders --help` does not.
    from rig.artifacts.srzip import check_members

    capture = Path(capture)
    info = check_members(capture)  # a directory claiming more samples than the data holds
    mapping = channel_map(info.channels, rename, capture)
    opts = [f"debounce_us={float(debounce_us)!r}"] + [f"{k}={v}" for k, v in mapping.items()]
    cmd = [sigrok_cli, "-i", str(capture), "-P", ":".join([DECODER, *opts])]
    cmd.append("--protocol-decoder-samplenum")
    env = {**os.environ, "SIGROKDECODE_DIR": str(find_decoders()[0])}
    where = f"{capture}: `{shlex.join(cmd)}`"
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    except OSError as e:
        raise RigError(f"{where} could not start: {e}") from None
    if proc.returncode != 0 or _FAILURE_RE.search(proc.stderr):
        raise RigError(f"{where} failed (exit {proc.returncode}):\n{proc.stderr.strip()}")
    return _parse(proc.stdout, info.samplerate, info.samples, info.channels, tuple(mapping))


def _parse(
    out: str,
    samplerate: int,
    samples: int,
    channels: tuple[str, ...],
    mapped: tuple[str, ...],
) -> MarkerScan:
    up: list[int] = []
    down: list[int] = []
    edges: dict[str, list[int]] = {m: [] for m in mapped if m != POWER}
    warnings: list[str] = []
    bounces = 0
    for line in out.splitlines():
        m = _LINE_RE.match(line)
        if not m:
            continue
        ss, text = int(m.group(1)), m.group(3)
        if text == "power-up":
            up.append(ss)
        elif text == "power-down":
            down.append(ss)
        elif b := _BOUNCE_RE.match(text):
            bounces += int(b.group(1))
        elif (e := _MARKER_RE.match(text)) and e.group(1) in edges:
            edges[e.group(1)].append(ss)
        elif text.startswith("warning: "):
            warnings.append(f"sample {ss}: {text[9:]}")
    return MarkerScan(
        samplerate=samplerate,
        samples=samples,
        channels=channels,
        power_up=tuple(sorted(up)),
        power_down=tuple(sorted(down)),
        edges={k: tuple(sorted(v)) for k, v in edges.items()},
        bounces=bounces,
        warnings=tuple(warnings),
        engine="sigrok",
    )
