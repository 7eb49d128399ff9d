"""The simulated board's command, `python -m simboard` and `rig sim` alike: run the board
(`serve`) or show a planned boot (`timeline`). The simulator's modules load inside the
commands, so `rig --help` does not import them.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import click

from rig.commands.common import emit_json, fail, json_option

_PROFILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group()
def sim() -> None:
    """The simulated target board (stands in for relay, console and analyzer)."""


def _fault(text: str | None, as_json: bool) -> Any:
    from simboard.timeline import Fault

    try:
        return Fault.parse(text) if text else None
    except ValueError as e:
        fail(str(e), as_json)


_FAULT_HELP = (
    "Inject a fault into every boot: hang:STAGE, panic:STAGE, console-lost, "
    "console-closed[:AT], missing-marker:MARKER, garbage[:LINE], brownout:STAGE or analyzer."
)
_FAULTS_HELP = (
    'Per-boot fault rates as JSON, e.g. \'{"hang": 0.05, "panic": 0.02}\' '
    "(docs/simulator.md); each power-on draws at most one fault from the seed."
)


def _rates(text: str | None, as_json: bool) -> Any:
    from simboard.faults import FaultRates

    try:
        return FaultRates.from_json(text) if text else None
    except ValueError as e:
        fail(f"--faults: {e}", as_json)


def _instrumentation(f: Any) -> Any:
    """`--quiet on|off` and `--initcall-debug on|off`: the board's kernel command line
    (simboard.instrumentation); each stage's budget stays the profile's as written."""
    on_off = click.Choice(["on", "off"])
    f = click.option("--initcall-debug", type=on_off, help="initcall_debug lines on or off.")(f)
    return click.option("--quiet", type=on_off, help="`quiet`: printk lines off the console.")(f)


def _knobs(f: Any) -> Any:
    """`--kernel-args` and `--uboot-env`: the rig's settings (simboard.knobs)."""
    f = click.option(
        "--uboot-env",
        metavar="JSON",
        help='U-Boot variables as a JSON object, e.g. \'{"bootdelay": "0", "verify": "no"}\'.',
    )(f)
    return click.option(
        "--kernel-args", metavar="ARGS", help="Appended to the kernel command line."
    )(f)


def _set(prof: Any, kernel_args: str | None, uboot_env: str | None, as_json: bool) -> Any:
    from simboard.knobs import SettingError

    try:
        env = json.loads(uboot_env) if uboot_env is not None else None
    except json.JSONDecodeError as e:
        fail(f"--uboot-env: not a JSON object: {e}", as_json)
    try:
        return prof.with_settings(kernel_args=kernel_args, uboot_env=env)
    except SettingError as e:
        fail(f"--{e.key.split('.')[0].replace('_', '-')}: {e}", as_json)


def _switches(quiet: str | None, initcall_debug: str | None) -> dict[str, bool | None]:
    from simboard.instrumentation import switch

    return {
        "quiet": switch(quiet, "--quiet"),
        "initcall_debug": switch(initcall_debug, "--initcall-debug"),
    }


def _load(profile: Path, as_json: bool, **overrides: Any) -> Any:
    from rig.errors import ConfigError
    from simboard.timeline import load

    try:
        return load(profile).with_overrides(**overrides)
    except ConfigError as e:
        fail(str(e), as_json)


@sim.command()
@click.argument("profile", type=_PROFILE)
@click.option(
    "--seed", type=int, help="Seed of all randomness; boot k is reproducible. Default: random."
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the control socket lives (default: a fresh temp dir).",
)
@click.option("--drift-ppm", type=float, help="Override the kernel clock drift.")
@click.option("--usb-latency-ms", type=float, help="Override the USB-serial latency timer.")
@click.option("--usb-buffer-bytes", type=int, help="Override the USB-serial buffer size.")
@click.option("--nominal", is_flag=True, help="No run-to-run variance: every boot is nominal.")
@click.option("--fault", "fault_text", metavar="FAULT", help=_FAULT_HELP)
@click.option("--faults", "faults_json", metavar="JSON", help=_FAULTS_HELP)
@_instrumentation
@_knobs
@click.option(
    "--power-switch",
    type=click.Choice(["relay", "supply"]),
    default="relay",
    show_default=True,
    help="What switches the board: the relay (supply output left on) or the SCPI supply's "
    "output (relay left closed).",
)
@click.option(
    "--supply-rate",
    type=float,
    help="Override [supply] max_readings_per_s (a slow supply answers a few per second).",
)
@click.option(
    "--back-power-v",
    type=float,
    help="Override [power] back_power_v: the rail's voltage while unpowered, held up by the "
    "console adapter's TX line (0: the rail falls to 0 V).",
)
@click.option(
    "--supply-port", type=int, default=0, help="TCP port of the SCPI supply (default: a free one)."
)
@click.option(
    "--pdu-port", type=int, default=0, help="TCP port of the REST PDU (default: a free one)."
)
@click.option(
    "--console-link",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Publish the console pty as this symlink too (a stable path, like udev's "
    "/dev/serial/by-id names, for a ser2net or labgrid exporter configured beforehand).",
)
@click.option(
    "--exit-with-parent",
    is_flag=True,
    help="Exit when the process that started us is gone (a killed rig leaves no board).",
)
@json_option
def serve(
    profile: Path,
    quiet: str | None,
    initcall_debug: str | None,
    kernel_args: str | None,
    uboot_env: str | None,
    seed: int | None,
    state_dir: Path | None,
    drift_ppm: float | None,
    usb_latency_ms: float | None,
    usb_buffer_bytes: int | None,
    nominal: bool,
    fault_text: str | None,
    faults_json: str | None,
    power_switch: str,
    supply_rate: float | None,
    back_power_v: float | None,
    supply_port: int,
    pdu_port: int,
    console_link: Path | None,
    exit_with_parent: bool,
    as_json: bool,
) -> None:
    """Run a board: prints one JSON ready line, serves until SIGTERM/SIGINT or shutdown."""
    from simboard.simulator import Simulator

    done = threading.Event()  # handlers first: a SIGTERM during start-up still cleans up
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())

    prof = _load(
        profile,
        as_json,
        drift_ppm=drift_ppm,
        usb_latency_ms=usb_latency_ms,
        usb_buffer_bytes=usb_buffer_bytes,
        supply_rate=supply_rate,
        back_power_v=back_power_v,
    )
    fault = _fault(fault_text, as_json)
    rates = _rates(faults_json, as_json)
    parent = os.getppid()
    seed = seed if seed is not None else secrets.randbelow(2**31)
    if fault is not None:
        from simboard.timeline import plan

        try:
            plan(prof, seed, 0, nominal, fault)  # a fault the profile cannot honour fails now
        except ValueError as e:
            fail(str(e), as_json)
    prof = _set(
        prof.with_overrides(**_switches(quiet, initcall_debug)), kernel_args, uboot_env, as_json
    )
    own_dir = state_dir is None
    state = Path(tempfile.mkdtemp(prefix="bootrig-sim-")) if state_dir is None else state_dir
    state.mkdir(parents=True, exist_ok=True)
    try:
        board = Simulator(
            prof, str(profile), seed, nominal, state, fault, done, rates, power_switch,
            supply_port, pdu_port, console_link,
        )  # fmt: skip
    except OSError as e:
        if own_dir:
            shutil.rmtree(state, ignore_errors=True)
        fail(f"cannot start the simulator in {state}: {e}", as_json)
    # Hand the GIL over within 0.5 ms (default 5 ms): the console writer is due on time.
    sys.setswitchinterval(0.0005)
    try:
        sys.stdout.write(json.dumps(board.ready_line(os.getpid())) + "\n")
        sys.stdout.flush()
        while not done.wait(0.5):
            if exit_with_parent and os.getppid() != parent:
                break  # our parent died (SIGKILL): we were re-parented, nobody drives us
    finally:
        board.close()
        if own_dir:
            shutil.rmtree(state, ignore_errors=True)


@sim.command()
@click.argument("profile", type=_PROFILE)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--boot", "boot", type=int, default=0, show_default=True, help="Boot index k.")
@click.option("--nominal", is_flag=True, help="Sigma-free nominal durations.")
@click.option("--drift-ppm", type=float, help="Override the kernel clock drift.")
@click.option("--lines", "show_lines", is_flag=True, help="Also list every console line.")
@click.option("--fault", "fault_text", metavar="FAULT", help=_FAULT_HELP)
@_instrumentation
@_knobs
@json_option
def timeline(
    profile: Path,
    quiet: str | None,
    initcall_debug: str | None,
    kernel_args: str | None,
    uboot_env: str | None,
    seed: int,
    boot: int,
    nominal: bool,
    drift_ppm: float | None,
    show_lines: bool,
    fault_text: str | None,
    as_json: bool,
) -> None:
    """Show the planned boot: stages, markers, console lines and bytes."""
    from simboard.timeline import plan
    from simboard.timeline_view import as_dict, print_timeline

    prof = _load(profile, as_json, drift_ppm=drift_ppm, **_switches(quiet, initcall_debug))
    prof = _set(prof, kernel_args, uboot_env, as_json)
    fault = _fault(fault_text, as_json)
    try:
        tl = plan(prof, seed=seed, boot=boot, nominal=nominal, fault=fault)
    except ValueError as e:
        fail(str(e), as_json)
    if as_json:
        emit_json(as_dict(prof, tl, show_lines))
    else:
        print_timeline(prof, tl, show_lines)
