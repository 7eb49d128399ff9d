"""The simulated board's knobs (groundwork for `rig try`, issue 25): kernel arguments
and U-Boot variables, what each does to the planned boot, and its truth checked against
what it removes counted by hand (seconds of CPU and bytes at 10 bit times)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rig import names
from rig.errors import ConfigError, InstrumentError
from rig.instruments.drivers import load_config
from rig.model.knob import Knob
from simboard.client import SimProcess
from simboard.knob_truth import durations, knob_gains, knob_truth, with_knob
from simboard.knobs import SettingError
from simboard.timeline import Timeline, load, plan
from tests.e2e import REPO, make_config

BOARDS = REPO / "config" / "boards"
BASELINE = BOARDS / "ecovec-baseline.toml"
KNOBS = REPO / "tests" / "data" / "boards" / "knobs.toml"
BYTE_S = 10 / 115200


def env(name: str, value: str) -> Knob:
    return Knob(names.KNOB_UBOOT_ENV, "", names.KNOB_SET, name, value)


def arg(name: str, value: str | None = None, op: str = names.KNOB_SET) -> Knob:
    return Knob(names.KNOB_KERNEL_ARG, "", op, name, value)


def texts(tl: Timeline) -> list[str]:
    return [ln.text for ln in tl.lines]


def nominal(profile: object) -> Timeline:
    return plan(profile, 0, 0, nominal=True)  # type: ignore[arg-type]


def sent(tl: Timeline, pick: object) -> int:
    """Bytes on the wire of the lines `pick` selects (CR LF included)."""
    return sum(len(ln.text) + 2 for ln in tl.lines if pick(ln))  # type: ignore[operator]


def test_as_written_the_knob_steps_print_what_the_profile_printed_before() -> None:
    tl = nominal(load(BASELINE))
    t = texts(tl)
    assert "   Verifying Checksum ... OK" in t
    assert any(x.endswith("] Calibrating delay loop... 299.00 BogoMIPS (lpj=1495040)") for x in t)
    assert any(
        x.endswith(
            "] Kernel command line: console=ttySC0,115200 root=/dev/mmcblk0p2 rootwait "
            "initcall_debug"
        )
        for x in t
    )
    assert not any("before mounting root device" in x for x in t)  # no rootdelay= written
    assert tl.markers["ui_ready"] == pytest.approx(19.44)


def test_bootdelay_sets_the_countdown_and_removes_its_seconds() -> None:
    p = load(BASELINE)
    on = nominal(with_knob(p, env("bootdelay", "0")))
    assert "Hit any key to stop autoboot:  0 " in texts(on)
    # Two seconds of timer and the two "\b\b\b N " ticks (6 bytes each) the countdown printed.
    assert knob_truth(p, env("bootdelay", "0")) == pytest.approx(2.0 + 12 * BYTE_S, abs=1e-9)
    assert knob_gains(p, env("bootdelay", "0"))["bootloader"] == pytest.approx(2.0 + 12 * BYTE_S)
    longer = knob_truth(p, env("bootdelay", "5"))
    assert longer == pytest.approx(-(3.0 + 18 * BYTE_S), abs=1e-9)  # a knob can cost


def test_verify_no_removes_the_check_and_its_line() -> None:
    p = load(BASELINE)
    on = nominal(with_knob(p, env("verify", "no")))
    assert not any("Verifying" in x for x in texts(on))
    line = len("   Verifying Checksum ... OK\r\n")
    assert knob_truth(p, env("verify", "no")) == pytest.approx(0.05 + line * BYTE_S, abs=1e-9)
    assert knob_gains(p, env("verify", "no"))["kernel"] == pytest.approx(0.05 + line * BYTE_S)
    # U-Boot 2009.01 reads only the first letter: "nope" skips it, "off" does not.
    assert knob_truth(p, env("verify", "nope")) == knob_truth(p, env("verify", "no"))
    assert knob_truth(p, env("verify", "off")) == 0.0


def test_silent_drops_uboot_output_only_where_silent_console_is_built_in() -> None:
    p = load(BASELINE)
    off = nominal(p)
    on = nominal(with_knob(p, env("silent", "1")))
    assert off.kernel_start_s is not None
    uboot = sent(off, lambda ln: ln.t_s < off.kernel_start_s)
    assert not [ln for ln in on.lines if on.kernel_start_s and ln.t_s < on.kernel_start_s]
    # The countdown keeps its two seconds; every U-Boot byte (its ticks too) goes.
    counting = len("Hit any key to stop autoboot:  2 \b\b\b 1 \b\b\b 0 ") + 2
    by_line = uboot - sent(off, lambda ln: "Hit any key" in ln.text) + counting
    assert knob_truth(p, env("silent", "1")) == pytest.approx(by_line * BYTE_S, abs=1e-9)
    assert on.markers["bootm"] == pytest.approx(off.markers["bootm"] - 19.444e-3, abs=1e-5)
    # Without CONFIG_SILENT_CONSOLE U-Boot ignores the variable.
    opt = load(BOARDS / "ecovec-optimised.toml")
    assert not opt.silent_console and knob_truth(opt, env("silent", "1")) == 0.0


def test_quiet_on_the_command_line_is_the_instrumentation_switch() -> None:
    p = load(BASELINE)
    on = nominal(with_knob(p, arg("quiet")))
    stamped = [x for x in texts(on) if x.startswith("[")]
    assert stamped and all("bootrig: marker" in x for x in stamped)
    assert durations(with_knob(p, arg("quiet"))) == durations(p.with_overrides(quiet=True))
    printk = sent(nominal(p), lambda ln: ln.printk_ts is not None and "bootrig:" not in ln.text)
    assert knob_truth(p, arg("quiet")) == pytest.approx(printk * BYTE_S, abs=1e-9)


def test_lpj_skips_the_calibration_loop() -> None:
    p = load(BASELINE)
    on = nominal(with_knob(p, arg("lpj", "1495040")))
    line = "Calibrating delay loop (skipped) preset value.. 299.00 BogoMIPS (lpj=1495040)"
    assert any(x.endswith(f"] {line}") for x in texts(on))
    assert any(x.endswith("initcall_debug lpj=1495040") for x in texts(on))
    # The loop's 0.25 s, less the longer line (22 bytes) and " lpj=1495040" (12 bytes).
    assert knob_truth(p, arg("lpj", "1495040")) == pytest.approx(0.25 - 34 * BYTE_S, abs=1e-9)
    # The kernel's simple_strtoul: no number is no preset, and the loop runs.
    assert "Calibrating delay loop... " in "".join(texts(nominal(p.with_settings("lpj=x"))))
    other = nominal(p.with_settings("lpj=2990080"))
    assert any(x.endswith("preset value.. 598.01 BogoMIPS (lpj=2990080)") for x in texts(other))


def test_initcall_blacklist_drops_the_calls_and_says_so() -> None:
    p = load(BASELINE)
    knob = arg("initcall_blacklist", "sh_mobile_lcdc_init,usbhid_init")
    on = nominal(with_knob(p, knob))
    t = texts(on)
    assert any(x.endswith("] initcall sh_mobile_lcdc_init blacklisted") for x in t)
    assert any(x.endswith("] initcall usbhid_init blacklisted") for x in t)
    assert not any("calling  sh_mobile_lcdc_init" in x or "calling  usbhid_init" in x for x in t)
    off = nominal(p)
    debug = sent(off, lambda ln: "sh_mobile_lcdc_init+" in ln.text or "usbhid_init+" in ln.text)
    said = sent(on, lambda ln: "blacklisted" in ln.text)
    args = len(" initcall_blacklist=sh_mobile_lcdc_init,usbhid_init")
    want = 0.0403 + 0.00119 + (debug - said - args) * BYTE_S
    assert knob_truth(p, knob) == pytest.approx(want, abs=1e-9)


def test_removing_rootdelay_drops_the_sleep() -> None:
    p = load(KNOBS)
    off = nominal(p)
    assert any(x.endswith("] Waiting 1 sec before mounting root device...") for x in texts(off))
    knob = arg("rootdelay", op=names.KNOB_REMOVE)
    on_profile = with_knob(p, knob)
    assert on_profile.settings.uboot_env["bootargs"] == (
        "console=ttySC0,115200 root=/dev/mmcblk0p2 initcall_debug"
    )
    on = nominal(on_profile)
    assert not any("before mounting" in x for x in texts(on))
    line = sent(off, lambda ln: "before mounting" in ln.text)
    want = 1.0 + (line + len(" rootdelay=1")) * BYTE_S
    assert knob_truth(p, knob) == pytest.approx(want, abs=1e-9)
    # The Ecovec as written has no rootdelay=: removing it gains nothing; adding costs.
    eco = load(BASELINE)
    assert knob_truth(eco, knob) == 0.0
    assert knob_truth(eco, arg("rootdelay", "2")) < -2.0


def test_a_knob_moves_a_varied_boot_by_its_truth_within_the_jitter() -> None:
    """Boot k of one seed with and without a knob: the same variance factors, so the
    difference is the truth but for the removed CPU time's own scaling."""
    p = load(BASELINE)
    for knob, cpu_s, stage in (
        (env("verify", "no"), 0.05, 1),
        (arg("lpj", "1495040"), 0.25, 1),
        (env("bootdelay", "0"), 0.0, 0),
    ):
        truth = knob_truth(p, knob)
        sigma = p.stages[stage].sigma
        for boot in range(4):
            a = plan(p, 7, boot).markers["ui_ready"]
            b = plan(with_knob(p, knob), 7, boot).markers["ui_ready"]
            assert abs((a - b) - truth) <= cpu_s * 4 * sigma + 1e-9, (knob.name, boot)


def test_the_talks_steps_in_turn_on_the_baseline() -> None:
    """Every knob the baseline's advice names, on top of each other: each removes what
    it removes alone, except quiet, which finds less console time left to remove."""
    p = load(BASELINE)
    steps = [
        env("bootdelay", "0"),
        env("verify", "no"),
        env("silent", "1"),
        arg("lpj", "1495040"),
        arg("quiet"),
    ]
    total = durations(p)["power_to_ui"]
    for knob in steps:
        gain = knob_truth(p, knob)
        assert gain > 0, knob.name
        total -= gain
        p = with_knob(p, knob)
        assert durations(p)["power_to_ui"] == pytest.approx(total, abs=1e-9)
    assert p.settings.kernel_args == "lpj=1495040 quiet"
    assert p.settings.uboot_env == {"bootdelay": "0", "verify": "no", "silent": "1"}


#: docs/simulator.md, "Knobs": the baseline's truths in ms, nominal.
ECOVEC_MS = [
    (env("bootdelay", "0"), 2001.042),
    (env("verify", "no"), 52.604),
    (env("silent", "1"), 50.521),
    (arg("quiet"), 552.431),
    (arg("lpj", "1495040"), 247.049),
    (arg("initcall_blacklist", "sh_mobile_lcdc_init"), 44.206),
    (arg("initcall_debug", op=names.KNOB_REMOVE), 336.024),
    (arg("rootdelay", op=names.KNOB_REMOVE), 0.0),
]


@pytest.mark.parametrize(("knob", "ms"), ECOVEC_MS, ids=lambda x: getattr(x, "name", x))
def test_the_documented_baseline_truths(knob: Knob, ms: float) -> None:
    assert knob_truth(load(BASELINE), knob) * 1000 == pytest.approx(ms, abs=0.0005)


@pytest.mark.parametrize(
    ("uboot_env", "kernel_args", "key"),
    [
        ({"bootdelay": "x"}, None, "uboot_env.bootdelay"),
        ({"bootdelay": "-1"}, None, "uboot_env.bootdelay"),
        ({"bootdelay": 0}, None, "uboot_env.bootdelay"),
        ({"verify": {"a": "b"}}, None, "uboot_env.verify"),
        (["bootdelay=0"], None, "uboot_env"),
        (None, "quiet\nlpj=1", "kernel_args"),
    ],
)
def test_bad_settings_name_the_key(uboot_env: object, kernel_args: str | None, key: str) -> None:
    with pytest.raises(SettingError) as e:
        load(BASELINE).with_settings(kernel_args=kernel_args, uboot_env=uboot_env)
    assert e.value.key == key and f"key '{key}'" in str(e.value)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ('sim.uboot_env={bootdelay="x"}', "sim.uboot_env.bootdelay"),
        ("sim.uboot_env={bootdelay=0}", "sim.uboot_env.bootdelay"),
        ('sim.uboot_env={silent=["1"]}', "sim.uboot_env.silent"),
        ('sim.uboot_env="bootdelay=0"', "sim.uboot_env"),
        ("sim.kernel_args=3", "sim.kernel_args"),
    ],
)
def test_bad_sim_settings_are_config_errors(tmp_path: Path, override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"rig\.toml: key '{key}': expected"):
        load_config(make_config(tmp_path), overrides=[override])


def test_rig_run_refuses_a_bad_bootdelay_naming_the_key(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(make_config(tmp_path)), "--json",
         "--set", 'sim.uboot_env={bootdelay="x"}'],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = json.loads(proc.stdout)["error"]
    assert "key 'sim.uboot_env.bootdelay': expected a whole number of seconds 0..99" in err
    assert "Traceback" not in proc.stderr


def test_sim_settings_reach_the_simulator_as_options(tmp_path: Path) -> None:
    cfg = load_config(
        make_config(tmp_path),
        overrides=['sim.kernel_args="lpj=1495040 quiet"', 'sim.uboot_env={verify="no"}'],
    )
    assert cfg.sim is not None
    assert cfg.sim.options["kernel_args"] == "lpj=1495040 quiet"
    assert json.loads(cfg.sim.options["uboot_env"]) == {"verify": "no"}


def test_the_ready_line_says_what_the_board_boots_with() -> None:
    env_json = json.dumps({"verify": "no", "bootdelay": "0"})
    options = {"kernel_args": "lpj=1495040 quiet", "uboot_env": env_json}
    with SimProcess(KNOBS, seed=1, options=options) as sim:
        assert sim.info["knobs"] == {
            "kernel_args": "lpj=1495040 quiet",
            "uboot_env": {"verify": "no", "bootdelay": "0"},
        }
    bad = SimProcess(KNOBS, seed=1, options={"uboot_env": '{"bootdelay": "x"}'})
    with pytest.raises(InstrumentError, match=r"uboot_env\.bootdelay"), bad:
        pass


def _timeline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "simboard", "timeline", str(BASELINE), "--nominal", "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_timeline_takes_the_settings_and_refuses_bad_ones() -> None:
    proc = _timeline("--uboot-env", '{"bootdelay": "0"}', "--kernel-args", "lpj=1495040")
    assert proc.returncode == 0, proc.stderr
    total = json.loads(proc.stdout)["stages"][-1]["end_s"]
    p = load(BASELINE).with_settings("lpj=1495040", {"bootdelay": "0"})
    assert total == pytest.approx(durations(p)["power_to_ui"])
    bad = _timeline("--uboot-env", '{"bootdelay": "soon"}')
    assert bad.returncode == 2
    assert "uboot_env.bootdelay" in json.loads(bad.stdout)["error"]
    bad = _timeline("--uboot-env", "bootdelay=0")
    assert bad.returncode == 2 and "--uboot-env" in json.loads(bad.stdout)["error"]


ROOTDELAY = "  { rootdelay = true },"


@pytest.mark.parametrize(
    ("new", "key"),
    [
        ("  { verify = 0.05 },", "verify"),  # after kernel_start: U-Boot's comes before
        ('  { cmdline = "quiet" },', "cmdline"),  # a second command line
        ("  { calibrate = 0.1 },", "lpj"),  # the loop's result is needed
        ("  { calibrate = 0.1, lpj = 1, hz = 10000 },", "hz"),  # BogoMIPS divide by HZ
        ("  { rootdelay = 1 },", "rootdelay"),
    ],
)
def test_profile_knob_steps_are_checked(tmp_path: Path, new: str, key: str) -> None:
    # rootdelay is replaced; the others go in beside it (in the kernel stage)
    text = BASELINE.read_text()
    text = text.replace(ROOTDELAY, new if key == "rootdelay" else f"{new}\n{ROOTDELAY}")
    path = tmp_path / "board.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"key 'stages\[1\]\.steps\[\d+\]\.{key}'"):
        load(path)
