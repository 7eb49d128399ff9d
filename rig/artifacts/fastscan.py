"""The fast capture engine: power, markers (and the console) from one pass over a
`.sr`, identical to the sigrok-cli reference but for `engine` (docs/engines.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from rig.artifacts.decode import channel_map, check_debounce, contract_channels
from rig.artifacts.edges import Edges, scan_edges
from rig.artifacts.markerlogic import debounce_samples, replay
from rig.artifacts.srzip import read_info
from rig.artifacts.uart import uart_from_edges
from rig.errors import ArtifactError
from rig.model import MarkerScan
from rig.model.uart import UartBytes
from rig.names import POWER, UART_TX


def markers_from_edges(edges: Edges, mapping: dict[str, str], debounce_us: float) -> MarkerScan:
    """The MarkerScan `scan_markers` would return, from the capture's transitions.
    Without a power channel the boot starts at the first sample (a rail up and held)."""
    virtual = POWER not in mapping
    dense = {m: edges.dense[c] for m, c in mapping.items() if c in edges.dense}
    found = replay(
        edges.samples,
        1 if virtual else debounce_samples(debounce_us, edges.samplerate),
        np.zeros(1, np.int64) if virtual else edges.at[mapping[POWER]],
        0 if virtual else edges.initial[mapping[POWER]],
        {m: edges.at[c] for m, c in mapping.items() if m != POWER},
    )
    return MarkerScan(
        samplerate=edges.samplerate,
        samples=edges.samples,
        channels=edges.channels,
        power_up=tuple(sorted(found.power_up)),
        power_down=tuple(sorted(found.power_down)),
        edges={k: tuple(sorted(v)) for k, v in found.edges.items()},
        bounces=found.bounces,
        warnings=tuple(found.warnings)
        + tuple(
            f"sample {at}: channel {mapping[m]!r} ({m}) toggles faster than any boot signal "
            "(a floating probe or a clock on a mis-mapped channel): not decoded"
            for m, at in dense.items()
        ),
        engine="fast",
        power_channel=not virtual,
        dense=dense,
    )


def scan_markers_fast(capture: Path, debounce_us: float = 1000.0) -> MarkerScan:
    """`scan_markers` without sigrok-cli: same result, `engine="fast"`."""
    capture = Path(capture)
    channels = read_info(capture).channels
    check_debounce(debounce_us)
    mapping = channel_map(channels, None, capture)
    return markers_from_edges(scan_edges(capture, list(mapping.values())), mapping, debounce_us)


@dataclass(frozen=True)
class CaptureScan:
    markers: MarkerScan
    uart: UartBytes | None  # None: no console channel, or it could not be decoded
    uart_error: str | None = None  # why not, when the channel is there


def scan_capture(
    capture: Path,
    debounce_us: float = 1000.0,
    uart_channel: str = UART_TX,
    baud: int | None = None,
    rename: Mapping[str, str] | None = None,
) -> CaptureScan:
    """Markers and the console (8N1; baud detected if None) in one read of the capture;
    a console that cannot be decoded is `uart_error`, never costing the markers."""
    capture = Path(capture)
    info = read_info(capture)
    check_debounce(debounce_us)
    mapping = channel_map(info.channels, rename, capture, need_power=False)
    uart_channel = contract_channels(info.channels, rename, capture).get(uart_channel, uart_channel)
    tap = uart_channel in info.channels
    names = list(dict.fromkeys([*mapping.values(), *([uart_channel] if tap else [])]))
    edges = scan_edges(capture, names)
    markers = markers_from_edges(edges, mapping, debounce_us)
    if tap and uart_channel in edges.dense:
        markers = replace(markers, dense={**markers.dense, UART_TX: edges.dense[uart_channel]})
    if not tap:
        return CaptureScan(markers, None)
    try:
        since = markers.power_up[0] if markers.power_up else 0  # this boot's bytes only
        return CaptureScan(markers, uart_from_edges(edges, uart_channel, baud, since))
    except ArtifactError as e:
        return CaptureScan(markers, None, str(e))
