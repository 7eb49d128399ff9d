from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

from rig.analysis.lines import MAX_PARSED, kernel_backlog, split_lines
from rig.measure.pipeline import analyze_folder
from rig.model import Chunk

REAL = Path(__file__).parent / "data" / "real"


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


def test_an_overlong_noise_line_is_kept_whole_but_parsed_only_in_part() -> None:
    """10 MB of invalid UTF-8 without a newline (a floating RX): every byte stays in `raw`,
    the text the parsers see is bounded, and a tag after the noise is still found."""
    noise = bytes([0xFF, 0xFE, 0x80]) * 3_400_000
    lines = split_lines([Chunk(1, b"ok\n" + noise), Chunk(2, b"bootrig: marker ui_ready\n")])
    assert len(lines) == 2 and len(lines[1].raw) == len(noise) + 24
    assert lines[1].overlong and not lines[0].overlong
    assert len(lines[1].text) <= 4 * MAX_PARSED and len(lines[1].body) <= 4 * MAX_PARSED
    assert lines[1].tag == "ui_ready"
    assert lines[1].text is lines[1].text  # decoded once, not by every parser again


def test_a_recorded_boot_with_a_noise_line_is_analyzed_and_noted(tmp_path: Path) -> None:
    """A real recorded boot (U-Boot + Linux under QEMU) with 2 MB of line noise spliced
    into its console: the analysis finishes, names the line, and keeps every marker."""
    boot = tmp_path / "boot"
    shutil.copytree(REAL / "console-1", boot)
    recs = [json.loads(x) for x in (boot / "console.jsonl").read_text().splitlines()]
    noise = base64.b64encode(bytes([0xFF, 0x80]) * 1_000_000).decode()
    recs.insert(5, {"t_ns": recs[5]["t_ns"], "data_b64": noise})
    (boot / "console.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    before = analyze_folder(REAL / "console-1", write=False).to_json()
    after = analyze_folder(boot, write=False).to_json()
    assert after["outcome"] == before["outcome"]
    notes = [n for n in after["analysis"]["notes"] if f"longer than {MAX_PARSED} bytes" in n]
    assert len(notes) == 1 and "2000" in notes[0], after["analysis"]["notes"]
    assert after["outcome"] == "ok"
    assert [e["name"] for e in after["events"]] == [e["name"] for e in before["events"]]


def test_the_kernel_backlog_is_what_it_logged_before_its_console_registered() -> None:
    text = (
        b"U-Boot 2023.01\r\nStarting kernel ...\r\n"
        b"[    0.000000] Booting Linux on physical CPU 0x0\r\n"
        b"[    0.051062] DMA: preallocated 128 KiB pool\r\n"
        b"[    0.087454] printk: console [ttyAMA0] enabled\r\n"
        b"[    0.090000] clk: Disabling unused clocks\r\n"
    )
    lines = split_lines([Chunk(0, text)])
    assert kernel_backlog(lines) == {2, 3}  # not U-Boot's, not the message itself
    # Older kernels say it without "printk: "; a console that was never registered
    # (no message) or a boot console that printed as it went holds nothing back.
    old = split_lines([Chunk(0, text.replace(b"printk: console", b"console"))])
    assert kernel_backlog(old) == {2, 3}
    assert kernel_backlog(split_lines([Chunk(0, text.split(b"[    0.087454]")[0])])) == set()
    early = b"[    0.000000] printk: bootconsole [pl11] enabled\r\n" + text
    assert kernel_backlog(split_lines([Chunk(0, early)])) == set()
    # Newer kernels (6.12 among them) announce a console that is not nbcon as "legacy".
    legacy = split_lines([Chunk(0, text.replace(b"printk: console", b"printk: legacy console"))])
    assert kernel_backlog(legacy) == {2, 3}
    legacy_early = b"[    0.000000] printk: legacy bootconsole [pl11] enabled\r\n" + text
    assert kernel_backlog(split_lines([Chunk(0, legacy_early)])) == set()
