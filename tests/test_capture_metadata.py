"""A capture's metadata naming its channels ambiguously, or saying more than a capture
can, through the real `rig analyze` with both engines: refused with exit 2 naming the
file and the channel or key, never one reading silently chosen (the boot read `ok`) and
never sigrok-cli failing as the rig's own error (exit 3)."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from rig.artifacts.srmeta import MAX_METADATA_BYTES
from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from tests.e2e import make_config
from tests.test_errors_cli import REPO, no_traceback, rig
from tests.test_fuzz_sr import _patch_directory
from tests.test_untrusted_json import fails_with

CAPTURE_RUN = REPO / "tests" / "data" / "real" / "capture-1"  # probe1=power .. probe8=D7


def with_metadata(tmp_path: Path, edit: Callable[[str], str | bytes], name: str = "b") -> Path:
    """A copy of the recorded capture run whose capture.sr has its metadata edited."""
    folder = tmp_path / name
    shutil.copytree(CAPTURE_RUN, folder)
    src, buf = zipfile.ZipFile(CAPTURE_RUN / "capture.sr"), io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "metadata":
                new = edit(data.decode())
                data = new if isinstance(new, bytes) else new.encode()
            z.writestr(item.filename, data)
    (folder / "capture.sr").write_bytes(buf.getvalue())
    return folder


def sub(old: str, new: str) -> Callable[[str], str]:
    def edit(meta: str) -> str:
        assert old in meta, old
        return meta.replace(old, new, 1)

    return edit


# Name -> (metadata edit, what the error says)
AMBIGUOUS: dict[str, tuple[Callable[[str], str | bytes], str]] = {
    "power twice": (
        sub("probe6=D5", "probe6=power"),
        "names channel 'power' twice (probe1 and probe6)",
    ),
    "bootm twice": (
        sub("probe7=D6", "probe7=bootm"),
        "names channel 'bootm' twice (probe2 and probe7)",
    ),
    "a spare name twice": (
        sub("probe7=D6", "probe7=D5"),
        "names channel 'D5' twice (probe6 and probe7)",
    ),
    "one probe key twice": (sub("probe8=D7", "probe8=D7\nprobe1=D6x"), "key 'probe1' given twice"),
    "probe1 and probe01": (
        sub("probe8=D7", "probe8=D7\nprobe01=x"),
        "'probe1' and 'probe01' both name channel 1",
    ),
    "an empty name": (sub("probe6=D5", "probe6="), "probe6: an empty channel name"),
    "not probeN": (sub("probe6=D5", "probe6:x=D5"), "key 'probe6:x': expected probeN"),
    "probe0": (sub("probe8=D7", "probe8=D7\nprobe0=zero"), "key 'probe0': expected probeN"),
    "more probes than total probes": (
        sub("total probes=8", "total probes=3"),
        "probe4 names channel 4, but total probes is 3",
    ),
    "samplerate twice": (
        sub("samplerate=1 MHz", "samplerate=1 MHz\nsamplerate=2 MHz"),
        "key 'samplerate' given twice",
    ),
    "section twice": (lambda m: m + "\n[device 1]\nunitsize=1\n", "section [device 1] given twice"),
    "samplerate absurd": (sub("1 MHz", "999999999 GHz"), "found '999999999 GHz'"),
    "samplerate not whole Hz": (sub("1 MHz", "1.5 Hz"), "found '1.5 Hz'"),
    "not UTF-8": (
        lambda m: m.encode().replace(b"probe6=D5", b"probe6=D\xff"),
        "metadata is not UTF-8",
    ),
    "huge": (
        lambda m: m + "\n" + ("x" * 1000 + "\n") * 50_000,
        f"bytes, more than {MAX_METADATA_BYTES} for the metadata",
    ),
}


@pytest.mark.parametrize("engine", ["fast", "sigrok"])
@pytest.mark.parametrize("case", sorted(AMBIGUOUS))
def test_metadata(case: str, engine: str, tmp_path: Path) -> None:
    edit, why = AMBIGUOUS[case]
    folder = with_metadata(tmp_path, edit)
    p = rig("analyze", str(folder), "--no-write", "--engine", engine, "--json")
    fails_with(p, folder / "capture.sr", why)


@pytest.mark.parametrize("engine", ["fast", "sigrok"])
def test_a_map_onto_a_name_the_capture_has_is_what_is_read(engine: str, tmp_path: Path) -> None:
    """`--map D5=power` while probe1 is `power`: the user's word wins (it was silently
    ignored, the first channel in the capture won); D5 never rises here."""
    folder = with_metadata(tmp_path, lambda m: m)
    args = ("analyze", str(folder), "--no-write", "--engine", engine, "--json")
    p = rig(*args, "--map", "D5=power")
    no_traceback(p)
    assert json.loads(p.stdout)["outcome"] == "no_power_edge", p.stdout[-2000:] + p.stderr
    p = rig(*args, "--map", "D5=power", "--map", "D6=power")
    why = "channels 'D5' and 'D6' are both mapped to power"
    fails_with(p, folder / "capture.sr", why, "input")


@pytest.mark.parametrize("engine", ["fast", "sigrok"])
def test_a_marker_and_its_old_name(engine: str, tmp_path: Path) -> None:
    """kernel_init and init_post are one marker: a capture with both has two of it."""
    folder = with_metadata(tmp_path, sub("probe6=D5", "probe6=init_post"))
    p = rig("analyze", str(folder), "--no-write", "--engine", engine, "--json")
    why = "channels 'kernel_init' and 'init_post' would both be read as kernel_init"
    fails_with(p, folder / "capture.sr", why)


def test_the_recorded_capture_still_reads(tmp_path: Path) -> None:
    """The copy the cases above edit, unedited: the metadata rules accept it."""
    folder = with_metadata(tmp_path, lambda m: m)
    for engine in ("fast", "sigrok"):
        p = rig("analyze", str(folder), "--no-write", "--engine", engine, "--json")
        no_traceback(p)
        assert (p.returncode, json.loads(p.stdout)["outcome"]) == (0, "ok"), p.stderr


def test_a_config_wiring_a_marker_and_its_old_name(tmp_path: Path) -> None:
    """[analyzer.channels] kernel_init and init_post: the second silently replaced the
    first, so the rig armed one channel and the config said another."""
    config = make_config(tmp_path)
    text = config.read_text()
    assert 'kernel_init = "D3"' in text
    config.write_text(text.replace('kernel_init = "D3"', 'kernel_init = "D3"\ninit_post = "D6"'))
    p = rig("run", "--config", str(config), "--json")
    fails_with(p, config, "init_post': expected no second channel for kernel_init", "config")


def test_a_qemu_config_giving_a_marker_and_its_old_name(tmp_path: Path) -> None:
    config = tmp_path / "qemu.toml"
    text = (REPO / "config" / "qemu-arm64.toml").read_text()
    config.write_text(text.replace("kernel_init = 2\n", "kernel_init = 2\ninit_post = 5\n"))
    with pytest.raises(ConfigError, match=r"init_post': expected no second line for kernel_init"):
        load_config(config)


@pytest.mark.parametrize("engine", ["fast", "sigrok"])
def test_a_zip_directory_claiming_4_gb_of_samples(engine: str, tmp_path: Path) -> None:
    """sigrok-cli reads the member's data; the rig's report took its sample count from
    the directory: 4294967280 samples, outcome ok."""
    folder = with_metadata(tmp_path, lambda m: m)
    data = (folder / "capture.sr").read_bytes()
    (folder / "capture.sr").write_bytes(_patch_directory(data, "logic-1-1", 24, 0xFFFFFFF0))
    p = rig("analyze", str(folder), "--no-write", "--engine", engine, "--json")
    fails_with(p, folder / "capture.sr", "holds 1098240 bytes, the zip directory says 4294967280")
