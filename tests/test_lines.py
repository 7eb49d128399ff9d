from __future__ import annotations

from rig.analysis.lines import split_lines
from rig.model import Chunk


def test_lines_take_first_byte_chunk_time() -> None:
    chunks = [
        Chunk(100, b"U-Boot 2009.01\r\nDR"),
        Chunk(200, b"AM:  256 MB\r\n[    0.000123] bootrig: marker do_mount_root\r\n"),
        Chunk(300, b"tail without newline"),
    ]
    lines = split_lines(chunks)
    assert [ln.text for ln in lines] == [
        "U-Boot 2009.01",
        "DRAM:  256 MB",
        "[    0.000123] bootrig: marker do_mount_root",
        "tail without newline",
    ]
    assert [ln.t_ns for ln in lines] == [100, 100, 200, 300]
    assert [ln.offset for ln in lines] == [0, 16, 31, 77]
    assert lines[2].printk_ts == 0.000123 and lines[2].tag == "do_mount_root"
    assert lines[2].body == "bootrig: marker do_mount_root"
    assert lines[0].printk_ts is None and lines[0].tag is None


def test_caller_id_loglevel_and_alias() -> None:
    lines = split_lines([Chunk(1, b"<6>[   12.500000][    T1] bootrig: marker init_post\n")])
    assert lines[0].printk_ts == 12.5
    assert lines[0].tag == "kernel_init"


def test_garbage_is_kept() -> None:
    data = b"\x00\xff\xfe ok\r\n\x80abc\n"
    lines = split_lines([Chunk(5, data[:3]), Chunk(6, data[3:])])
    assert b"".join(ln.raw + b"\n" for ln in lines).replace(b"\r", b"") == data.replace(b"\r", b"")
    assert "\\xff" in lines[0].text


def test_empty() -> None:
    assert split_lines([]) == []
