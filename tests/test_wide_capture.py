"""Captures of more than 8 channels (unitsize 2 and more), as sigrok writes them for a
16-channel analyzer: sigrok's own demo driver, and a real UART capture moved onto
channel 11 of a 16-channel, DSLogic-named (`0`..`15`) session that sigrok-cli itself
decodes. Our streamed edges must be sigrok's, and `rig analyze` must read them."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts.edges import scan_edges
from rig.artifacts.srzip import read_info
from rig.errors import ArtifactError
from tests.captures import read_sr
from tests.test_capture_anywhere import HELLO

RIG = [sys.executable, "-m", "rig"]
CHANNELS = ("D3", "D9", "D12")


@pytest.fixture(scope="module")
def demo16(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 000 samples of sigrok's demo driver with 16 logic channels (unitsize 2)."""
    path = tmp_path_factory.mktemp("demo16") / "demo16.sr"
    subprocess.run(
        ["sigrok-cli", "-d", "demo:logic_channels=16:analog_channels=0",
         "--config", "samplerate=200k", "--samples", "200000", "-o", str(path)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return path


def sigrok_levels(path: Path, channels: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Each channel's level per sample as sigrok-cli itself prints it (`-O bits`)."""
    out = subprocess.run(
        ["sigrok-cli", "-i", str(path), "-C", ",".join(channels), "-O", "bits:width=0"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    levels = {}
    for line in out.splitlines():
        name, _, bits = line.partition(":")
        if name in channels:
            levels[name] = np.frombuffer(bits.replace(" ", "").encode(), np.uint8) - ord("0")
    assert set(levels) == set(channels), out[:300]
    return levels


@pytest.mark.parametrize("block", [4097, 1 << 22])
def test_edges_of_a_16_channel_capture_are_sigroks(demo16: Path, block: int) -> None:
    info = read_info(demo16)
    assert info.unitsize == 2 and len(info.channels) == 16 and info.samples == 200_000
    edges = scan_edges(demo16, CHANNELS, block=block)  # an odd block splits samples
    for name, level in sigrok_levels(demo16, CHANNELS).items():
        assert len(level) == edges.samples
        assert edges.initial[name] == level[0]
        np.testing.assert_array_equal(edges.at[name], np.flatnonzero(level[1:] != level[:-1]) + 1)


def wide_session(path: Path, bootm_at: int) -> None:
    """The sigrok-dumps 115200 8N1 'Hello World!' capture (TX, 1 MHz) as channel 11 of a
    16-channel session named like a DSLogic's, with a marker edge on channel 9."""
    tx = read_sr(HELLO)
    level = (tx.data & 1).astype(np.uint16)
    samples = level << 11
    samples[bootm_at:] |= 1 << 9
    meta = "[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n"
    meta += "total probes=16\nsamplerate=1 MHz\ntotal analog=0\n"
    meta += "".join(f"probe{i + 1}={i}\n" for i in range(16)) + "unitsize=2\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("version", "2")
        z.writestr("metadata", meta)
        raw = samples.astype("<u2").tobytes()
        half = len(raw) // 4 * 2  # two members, as sigrok writes them: whole samples each
        z.writestr("logic-1-1", raw[:half])
        z.writestr("logic-1-2", raw[half:])


@pytest.mark.parametrize("engine", ["fast", "sigrok"])
def test_rig_analyze_reads_a_16_channel_capture(tmp_path: Path, engine: str) -> None:
    wide_session(tmp_path / "capture.sr", bootm_at=2_500)
    # sigrok-cli itself reads the session: its UART decoder finds the text on channel 11.
    dec = subprocess.run(
        ["sigrok-cli", "-i", str(tmp_path / "capture.sr"), "-P", "uart:rx=11:baudrate=115200",
         "-A", "uart=rx-data"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    text = bytes(int(w, 16) for w in dec.split()[1::2])
    assert text == b"Hello World!\r\n" * 3
    p = subprocess.run(
        [*RIG, "analyze", str(tmp_path), "--map", "11=uart_tx", "--map", "9=bootm",
         "--engine", engine, "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    report = json.loads(p.stdout)
    tap = report["console"]["uart_tap"]
    assert (tap["bytes"], tap["baud"], tap["frame_errors"], tap["lines_timed"]) == (
        42,
        115200,
        0,
        3,
    )
    gpio = {e["name"]: e["t_s"] for e in report["events"] if e["source"] == "gpio"}
    assert gpio["bootm"] == pytest.approx(0.0025)
    assert len(report["capture"]["channels"]) == 16


@pytest.mark.parametrize(
    ("meta", "data", "needle"),
    [
        ("unitsize=5\n", b"\0" * 10, "unitsize: expected 1 to 4 bytes a sample, found '5'"),
        ("unitsize=two\n", b"\0" * 10, "found 'two'"),
        ("unitsize=2\n", b"\0" * 11, "11 bytes, not a whole number of 2-byte samples"),
        ("unitsize=1\n", b"\0" * 10, "total probes '16': 1 to 8 fit in unitsize 1"),
    ],
)
def test_bad_sample_layouts_are_named(tmp_path: Path, meta: str, data: bytes, needle: str) -> None:
    path = tmp_path / "bad.sr"
    head = "[device 1]\ncapturefile=logic-1\ntotal probes=16\nsamplerate=1 MHz\nprobe1=A\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata", head + meta)
        z.writestr("logic-1-1", data)
    with pytest.raises(ArtifactError, match=r"bad\.sr") as e:
        read_info(path)
    assert needle in str(e.value)
