"""Board profiles: the Ecovec numbers, the fast test board, validation, reproducibility."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.names import MARKERS
from simboard.profile import STAGES
from simboard.timeline import load, plan

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"

# Murray, ELC-E 2010, MS7724 Ecovec (docs/contract.md, "Stages").
ECOVEC = {
    "ecovec-baseline.toml": (2.58, 1.30, 6.83, 1.30, 7.43, 19.44),
    "ecovec-optimised.toml": (0.28, 0.11, 0.02, 0.06, 0.30, 0.77),
}


@pytest.mark.parametrize("name", sorted(ECOVEC))
def test_ecovec_nominal_stages_match_the_talk(name: str) -> None:
    tl = plan(load(BOARDS / name), nominal=True)
    *stages, total = ECOVEC[name]
    assert [s.name for s in tl.stages] == list(STAGES)
    for span, want in zip(tl.stages, stages, strict=True):
        assert span.duration_s == pytest.approx(want, rel=0.01), span.name
    assert tl.stages[-1].end_s == pytest.approx(total, rel=0.01)


def test_every_profile_loads_and_is_complete() -> None:
    for path in sorted(BOARDS.glob("*.toml")):
        tl = plan(load(path), seed=1)
        assert set(tl.markers) == set(MARKERS), path.name
        texts = [ln.text for ln in tl.lines]
        assert any("Starting application" in t for t in texts), path.name
        for m in MARKERS:
            assert f"bootrig: marker {m}" in texts or any(
                t.endswith(f"] bootrig: marker {m}") for t in texts
            ), (path.name, m)


def test_fast_profile_is_short_with_drift_and_1ms_latency() -> None:
    p = load(BOARDS / "fast.toml")
    tl = plan(p, nominal=True)
    assert 0.25 <= tl.stages[-1].end_s <= 0.35
    assert p.kernel_clock.drift_ppm != 0
    assert p.console.usb_latency_ms == 1
    assert any(" calling  " in ln.text for ln in tl.lines)


def test_baseline_console_is_realistic() -> None:
    tl = plan(load(BOARDS / "ecovec-baseline.toml"), nominal=True)
    text = "\n".join(ln.text for ln in tl.lines)
    for needle in (
        "U-Boot 2009.01",
        "DRAM:",
        "Flash:",
        "Hit any key to stop autoboot:  2 \b\b\b 1 \b\b\b 0 ",
        "## Booting kernel from Legacy Image at",
        "   Verifying Checksum ... OK",
        "   Uncompressing Kernel Image ... OK",
        "Starting kernel ...",
        "] Linux version 2.6.31",
        "] Calibrating delay loop... 299.00 BogoMIPS (lpj=1495040)",
        "] VFS: Mounted root (ext3 filesystem) on device 179:2.",
        "] Freeing unused kernel memory: 124k freed",
        "Starting application: /usr/bin/ecovec-ui",
    ):
        assert needle in text, needle
    assert sum(" calling  " in ln.text for ln in tl.lines) >= 24


def test_optimised_skips_the_offenders() -> None:
    tl = plan(load(BOARDS / "ecovec-optimised.toml"), nominal=True)
    text = "\n".join(ln.text for ln in tl.lines)
    assert "Hit any key to stop autoboot:  0 " in text
    assert "Verifying Checksum" not in text
    assert "Calibrating delay loop (skipped) preset value.. 299.00 BogoMIPS" in text
    assert " calling  " not in text


def test_seeded_boots_are_reproducible() -> None:
    p = load(BOARDS / "fast.toml")
    a, b = plan(p, seed=5, boot=3), plan(p, seed=5, boot=3)
    assert a.data == b.data
    assert [s.duration_s for s in a.stages] == [s.duration_s for s in b.stages]
    other = plan(p, seed=5, boot=4)
    assert [s.factor for s in other.stages] != [s.factor for s in a.stages]
    assert [s.factor for s in plan(p, seed=6, boot=3).stages] != [s.factor for s in a.stages]


def test_variance_follows_sigma() -> None:
    p = load(BOARDS / "ecovec-baseline.toml")
    rootfs = [plan(p, seed=1, boot=k).stages[2].duration_s for k in range(200)]
    mean = sum(rootfs) / len(rootfs)
    sd = (sum((x - mean) ** 2 for x in rootfs) / (len(rootfs) - 1)) ** 0.5
    assert mean == pytest.approx(6.83, rel=0.02)
    assert 0.02 < sd / mean < 0.06  # the profile says sigma 0.04 (the rest dominates)


# Validation: every error names the file and the key.

FAST = (BOARDS / "fast.toml").read_text()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("baud = 115200", 'baud = "fast"', "console.baud"),
        ("relay_channel = 1", "relay_channel = 9", "power.relay_channel"),
        ("bounce_ms = [0.3, 0.8]", "bounce_ms = [0.3, 3.0]", "power.bounce_ms"),
        ("drift_ppm = 40.0", "drift_ppm = 4000.0", "kernel_clock.drift_ppm"),
        ('name = "kernel"', 'name = "linux"', "stages"),
        ("{ wait_s = 0.004 },", "{ wait_s = -1.0 },", "stages[0].steps[0].wait_s"),
        ("{ wait_s = 0.004 },", "{ sleep_s = 0.004 },", "stages[0].steps[0]"),
        ("{ wait_s = 0.004 },", "{ wait_s = 0.004, line = 'x' },", "stages[0].steps[0]"),
        ('{ marker = "bootm" },', '{ marker = "bootz" },', "stages[0].steps[4].marker"),
        ('{ marker = "bootm" },', '{ line = "x" },', "stages[0].steps[4]"),
        ("duration_s = 0.12", "duration_s = 0.05", "stages[1].duration_s"),
        (
            "sigma = 0.02\nsteps = [\n  { wait_s",
            "sigma = 0.02\nwho = 1\nsteps = [\n  { wait_s",
            "stages[0].who",
        ),
    ],
)
def test_validation_names_file_and_key(tmp_path: Path, old: str, new: str, key: str) -> None:
    assert old in FAST
    path = _write(tmp_path, FAST.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load(path)
    msg = str(err.value)
    assert str(path) in msg
    assert f"'{key}'" in msg


def test_negative_rest_names_the_stage(tmp_path: Path) -> None:
    path = _write(tmp_path, FAST.replace("duration_s = 0.12", "duration_s = 0.05", 1))
    with pytest.raises(ConfigError, match=r"stage 'kernel' takes 0\.\d+ s"):
        load(path)


def test_printk_needs_a_started_kernel(tmp_path: Path) -> None:
    path = _write(tmp_path, FAST.replace("{ kernel_start = true },", "", 1))
    with pytest.raises(ConfigError, match="after the kernel_start step"):
        load(path)


def test_cli_overrides_are_validated() -> None:
    p = load(BOARDS / "fast.toml")
    assert p.with_overrides(drift_ppm=-12.5).kernel_clock.drift_ppm == -12.5
    with pytest.raises(ConfigError, match="--usb-buffer-bytes"):
        p.with_overrides(usb_buffer_bytes=0)
