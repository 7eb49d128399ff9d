"""The readers of the rig's other state files take hostile JSON as bad input: the trend
state, uart.bin, the InfluxDB spool, a QEMU run's qemu.json. And the strict parser reads
everything the rig writes exactly as Python's json does."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest

from rig.artifacts.uartbin import read_uart_bin
from rig.errors import ArtifactError, InputError
from rig.instruments.qemu.reference import reference_edges
from rig.sinks.influx.spool import MAGIC, Spool
from rig.trend.state import load
from rig.untrusted import MAX_DEPTH, parse_json, read_line, too_deep
from tests.e2e import make_config
from tests.test_errors_cli import rig
from tests.test_untrusted_json import DEEP, fails_with

REAL = Path(__file__).parent / "data" / "real"


def test_trend_state(tmp_path: Path) -> None:
    path = tmp_path / "last.json"
    path.write_text('{"schema": "bootrig.trend-state/1", "regressions": ' + DEEP + "}")
    with pytest.raises(InputError, match=r"last\.json: not a trend state file \(nested deeper"):
        load(path)


def test_uart_bin_header_with_an_infinite_count(tmp_path: Path) -> None:
    """int(inf) raised OverflowError, which no reader expected."""
    head = {"schema": "bootrig.uart/1", "channel": "uart_tx", "samplerate": 1000000,
            "baud": 115200, "baud_detected": False, "frame_errors": 0, "bytes": "@"}  # fmt: skip
    path = tmp_path / "uart.bin"
    path.write_bytes(json.dumps(head).replace('"@"', "Infinity").encode() + b"\n")
    with pytest.raises(
        ArtifactError, match=r"uart\.bin: not a bootrig.uart/1 file: Infinity is not"
    ):
        read_uart_bin(path)


def test_spool_entry_with_a_deep_header(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    path = tmp_path / "0001-x.lp"
    path.write_bytes(MAGIC + b'{"points": ' + DEEP.encode() + b"}\nm v=1\n")
    with pytest.raises(ValueError, match=r"0001-x\.lp: bad spool header: nested deeper"):
        spool.read(path)


def test_qemu_json_nested_too_deep(tmp_path: Path) -> None:
    (tmp_path / "qemu.json").write_text('{"gpio": ' + DEEP + "}")
    with pytest.raises(ArtifactError, match=rf"qemu\.json: nested deeper than {MAX_DEPTH}"):
        reference_edges(tmp_path)


def test_the_strict_parser_reads_the_rigs_own_files_as_json_does() -> None:
    files = sorted(REAL.glob("*/*.json")) + sorted(REAL.glob("*/*.jsonl"))
    assert len(files) > 20
    for path in files:
        for line in (
            path.read_bytes().splitlines() if path.suffix == ".jsonl" else [path.read_bytes()]
        ):
            assert parse_json(line) == json.loads(line), path


def test_read_line_stops_at_the_limit_without_reading_on() -> None:
    f = io.BytesIO(b"ab\n" + b"x" * 100 + b"\nrest\n")
    assert read_line(f, "f", 10) == b"ab\n"
    with pytest.raises(InputError, match=r"^f:2: a line longer than 10 bytes"):
        read_line(f, "f:2", 10)
    assert f.tell() == 3 + 11  # one byte past the limit, no more


def test_the_depth_check_holds_one_iterator_a_level_however_wide() -> None:
    """A 64 MiB run.json of empty arrays peaked at 3.5 GB when the check queued every
    element at once; it holds one iterator a level now."""
    wide: list[object] = [[] for _ in range(1_000_000)]
    tracemalloc.start()
    try:
        assert not too_deep(wide, MAX_DEPTH)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000, peak
    assert too_deep([[], [[[]]], {}], 3) and not too_deep([[], [[[]]], {}], 4)
    assert too_deep([], 0) and not too_deep(1, 0) and not too_deep({}, 1)


def test_rig_grafana_query_with_a_deep_dashboard(tmp_path: Path) -> None:
    """A folder of dashboards is anyone's files; read before InfluxDB is asked anything."""
    (tmp_path / "d.json").write_text('{"panels": ' + DEEP + "}")
    p = rig("grafana", "query", "--dashboards", str(tmp_path), "--config",
            str(make_config(tmp_path)), "--json")  # fmt: skip
    fails_with(p, tmp_path / "d.json", f"nested deeper than {MAX_DEPTH}", "input")
