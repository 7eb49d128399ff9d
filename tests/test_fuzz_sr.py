"""Fuzz the `.sr` readers: a damaged capture is an ArtifactError that names the file.

Hypothesis builds captures from arbitrary bytes, from zips with mutated metadata and
members, and from valid captures that are truncated or have bytes overwritten. Every
reader (read_info, read_sr, the streaming transition scan, both fast-engine entry
points) must either read it consistently or raise one of the rig's errors naming the
file: never a bare zipfile/zlib/configparser/numpy exception, a hang or a huge alloc.

With atheris installed, `python tests/test_fuzz_sr.py [libFuzzer flags]` runs the same
checks under coverage-guided fuzzing.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rig.artifacts.edges import scan_edges
from rig.artifacts.fastscan import scan_capture, scan_markers_fast
from rig.artifacts.srzip import read_info, write_sr
from rig.artifacts.uart import decode_uart
from rig.errors import ArtifactError, RigError
from tests.captures import read_sr

SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")),  # more for a long session
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def check(data: bytes) -> None:
    """Write `data` as a capture and run every reader on it."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fuzzed capture.sr"
        path.write_bytes(data)
        try:
            info = read_info(path)
        except ArtifactError as e:
            assert str(path) in str(e), e
            return
        assert 1 <= len(info.channels) <= 8 and info.samplerate > 0
        try:
            cap = read_sr(path)
            assert cap.samples == info.samples and cap.channels == info.channels
        except ArtifactError as e:
            assert str(path) in str(e), e
        try:
            edges = scan_edges(path, list(dict.fromkeys(info.channels)))
            assert edges.samples == info.samples
        except ArtifactError as e:
            assert str(path) in str(e), e
        for run in (scan_markers_fast, scan_capture):
            try:
                run(path)
            except RigError as e:
                assert str(path) in str(e), e


def good_capture(n: int = 3_000, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    data = np.repeat(rng.integers(0, 256, n // 30 + 1).astype(np.uint8), 30)[:n]
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.sr"
        write_sr(p, ["power", "bootm", "uart_tx"], 1_000_000, [data])
        buf.write(p.read_bytes())
    return buf.getvalue()


GOOD = good_capture()

META_LINES = [
    "[global]",
    "sigrok version=0.5.2",
    "[device 1]",
    "[device 2]",
    "capturefile=logic-1",
    "capturefile=",
    "capturefile=other",
    "total probes=3",
    "total probes=999999999",
    "total probes=-4",
    "total probes=abc",
    "samplerate=1 MHz",
    "samplerate=0 Hz",
    "samplerate=1.5 kHz",
    "samplerate=" + "9" * 400 + " GHz",
    "samplerate=fast",
    "samplerate=",
    "probe1=power",
    "probe2=bootm",
    "probe3=uart_tx",
    "probe9=far",
    "probe0=zero",
    "probe\u00b2=superscript",
    "probe1=",
    "unitsize=1",
    "unitsize=2",
    "unitsize=x",
    "total analog=0",
    "garbage line",
    "=",
    "",
]
MEMBER_NAMES = [
    "logic-1",
    "logic-1-1",
    "logic-1-2",
    "logic-1-10",
    "logic-1-x",
    "logic-1-",
    "version",
]


@st.composite
def zips(draw: st.DrawFn) -> bytes:
    """A well-formed zip whose metadata and members are anything plausible or not."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        if draw(st.booleans()):
            lines = draw(st.lists(st.sampled_from(META_LINES) | st.text(max_size=30), max_size=14))
            z.writestr("metadata", "\n".join(lines))
        names = draw(st.lists(st.sampled_from(MEMBER_NAMES), max_size=4, unique=True))
        for name in names:
            method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
            z.writestr(name, draw(st.binary(max_size=300)), compress_type=method)
    return buf.getvalue()


@given(st.binary(max_size=2_000))
@SETTINGS
def test_arbitrary_bytes(data: bytes) -> None:
    check(data)


@given(zips())
@SETTINGS
def test_zips_with_bad_metadata_and_members(data: bytes) -> None:
    check(data)


@given(st.integers(0, len(GOOD)))
@SETTINGS
def test_truncated_capture(cut: int) -> None:
    check(GOOD[:cut])


@given(
    st.lists(
        st.tuples(st.integers(0, len(GOOD) - 1), st.binary(min_size=1, max_size=8)), max_size=4
    )
)
@SETTINGS
def test_overwritten_bytes(patches: list[tuple[int, bytes]]) -> None:
    data = bytearray(GOOD)
    for at, new in patches:
        data[at : at + len(new)] = new
    check(bytes(data[: len(GOOD)]))


def test_the_undamaged_capture_reads() -> None:
    check(GOOD)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.sr"
        p.write_bytes(GOOD)
        assert read_sr(p).samples == 3_000


def _atheris() -> None:
    import atheris

    args = sys.argv
    if not [a for a in args[1:] if not a.startswith("-")]:  # no corpus given: seed one
        corpus = Path(tempfile.mkdtemp(prefix="sr-corpus-"))
        (corpus / "good.sr").write_bytes(GOOD)
        (corpus / "two-chunks.sr").write_bytes(good_capture(5_000, 1))
        args = [*args, str(corpus)]
    atheris.instrument_all()
    atheris.Setup(args, check)
    atheris.Fuzz()


if __name__ == "__main__":  # coverage-guided fuzzing, when atheris is installed
    _atheris()


def _rezip(data: bytes, drop: set[str] = frozenset(), meta: str | None = None) -> bytes:
    """The capture with members dropped or the metadata replaced."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in src.namelist():
            if name in drop:
                continue
            body = meta.encode() if name == "metadata" and meta is not None else src.read(name)
            z.writestr(name, body)
    return buf.getvalue()


def _patch_directory(data: bytes, member: str, offset: int, value: int) -> bytes:
    """Overwrite a 4-byte field of `member`'s central directory entry (20: compressed
    size, 24: size), as a damaged or cut-short write would leave it."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at >= 0:
        n = int.from_bytes(out[at + 28 : at + 30], "little")
        if out[at + 46 : at + 46 + n] == member.encode():
            out[at + offset : at + offset + 4] = value.to_bytes(4, "little")
            return bytes(out)
        at = out.find(b"PK\x01\x02", at + 4)
    raise AssertionError(member)


def _meta(**changes: str | None) -> str:
    keys = {
        "capturefile": "logic-1",
        "total probes": "3",
        "samplerate": "1 MHz",
        "probe1": "power",
        "probe2": "bootm",
        "probe3": "uart_tx",
        "unitsize": "1",
    }
    keys.update(changes)
    lines = [f"{k}={v}" for k, v in keys.items() if v is not None]
    return "\n".join(["[global]", "sigrok version=0.5.2", "[device 1]", *lines])


def _compressed_size(data: bytes, member: str) -> int:
    return zipfile.ZipFile(io.BytesIO(data)).getinfo(member).compress_size


CORRUPT = {
    "not a zip": (b"hello, not a zip at all" * 10, r"not a sigrok session \(bad zip"),
    "cut short": (GOOD[: len(GOOD) // 2], r"not a sigrok session \(bad zip"),
    "no metadata": (_rezip(GOOD, {"metadata"}), r"no 'metadata' member"),
    "no probeN": (
        _rezip(GOOD, meta=_meta(probe1=None, probe2=None, probe3=None)),
        r"names no channels \(no probeN keys\)",
    ),
    "bad samplerate": (
        _rezip(GOOD, meta=_meta(samplerate="fast")),
        r"samplerate: expected e.g. '1 MHz', found 'fast'",
    ),
    "zero samplerate": (_rezip(GOOD, meta=_meta(samplerate="0 Hz")), r"found '0 Hz'"),
    "unitsize 9": (_rezip(GOOD, meta=_meta(unitsize="9")), r"expected 1 to 4 bytes a sample"),
    "probe99": (
        _rezip(GOOD, meta=_meta(probe99="x")),
        r"total probes '3': 1 to 8 fit in unitsize 1",
    ),
    "no data": (_rezip(GOOD, {"logic-1-1"}), r"no logic data members named logic-1-N"),
    "truncated chunk": (
        _patch_directory(GOOD, "logic-1-1", 20, _compressed_size(GOOD, "logic-1-1") // 2),
        r"logic data member 'logic-1-1' is corrupt: (Bad CRC-32|Compressed file ended)",
    ),
    "wrong size": (
        _patch_directory(GOOD, "logic-1-1", 24, 2_000),
        r"logic data member 'logic-1-1' is corrupt: Bad CRC-32",
    ),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_capture_errors_say_what_and_which_file(case: str) -> None:
    data, why = CORRUPT[case]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "capture.sr"
        path.write_bytes(data)
        for read in (read_info, read_sr, scan_markers_fast, lambda p: decode_uart(p)):
            try:
                read(path)
            except ArtifactError as e:
                assert str(e).startswith(f"{path}: ")
                assert re.search(why, str(e)), str(e)
            else:
                assert read is read_info, f"{case}: {read} read a damaged capture"


def test_gap_in_chunk_numbers() -> None:
    src = zipfile.ZipFile(io.BytesIO(GOOD))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in src.namelist():
            z.writestr("logic-1-2" if name == "logic-1-1" else name, src.read(name))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "capture.sr"
        path.write_bytes(buf.getvalue())
        with pytest.raises(
            ArtifactError, match=r"capture\.sr: logic data members logic-1-N are not"
        ):
            read_info(path)


def test_missing_file() -> None:
    with pytest.raises(ArtifactError, match=r"nope\.sr: no such capture file"):
        scan_markers_fast(Path("/nonexistent/nope.sr"))
