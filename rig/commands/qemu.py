"""`rig qemu`: the QEMU targets' images (arm64, armv7) and recorded real boots.

`rig qemu build` builds (or finds cached) U-Boot environment, kernel and root filesystem
with the config's build script (firmware-hooks/qemu-arm64/build.sh by default).
`rig qemu record` boots the target N times and keeps each boot's raw artifacts (not the
images) with QEMU's GPIO trace beside them as the reference: the recorded real boots
under tests/data/real/.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from rig.artifacts.rundir import CAPTURE, CONSOLE_JSONL, CONSOLE_LOG, RUN, read_run
from rig.commands.common import config_option, console, emit_json, fail, json_option
from rig.config.load import RigConfig
from rig.errors import EXIT_RIG_FAILED, RigError, exit_code
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.qemu.drivers import QEMU_JSON, TRACE_FILE
from rig.instruments.qemu.reference import reference_edges
from rig.instruments.qemu.settings import BUILD_SCRIPT, QemuConfig
from rig.instruments.setup import Instruments

#: What a recorded boot keeps: the raw measurement, never the analysis or the images.
KEEP = (RUN, CONSOLE_JSONL, CONSOLE_LOG, CAPTURE, TRACE_FILE, QEMU_JSON)
REFERENCE = "reference.json"


@click.group()
def qemu() -> None:
    """The QEMU arm64 and armv7 targets (real U-Boot and Linux under emulation)."""


@qemu.command()
@config_option(
    "Build what this config's [qemu] build_script builds (default: the hooked target).",
    default=None,
)
@json_option
def build(config_path: Path | None, as_json: bool) -> None:
    """Build the images if an input changed; print their folder."""
    script = BUILD_SCRIPT
    if config_path is not None:
        script = _qemu_config(config_path, as_json)[1].build_script
    try:
        p = subprocess.run(
            ["bash", str(script)],
            stdout=subprocess.PIPE,
            stderr=None if not as_json else subprocess.PIPE,
            text=True,
            check=False,
        )
    except OSError as e:
        fail(f"{script}: {e}", as_json, EXIT_RIG_FAILED)
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        detail = (p.stderr or "").strip()[-2000:] if as_json else "see the output above"
        fail(f"{script} failed ({p.returncode}): {detail}", as_json, EXIT_RIG_FAILED)
    folder = lines[-1]
    if as_json:
        emit_json({"images": folder})
    else:
        console.print(f"images: {escape(folder)}", highlight=False)


def _qemu_config(
    path: Path, as_json: bool, overrides: Sequence[str] = ()
) -> tuple[RigConfig, QemuConfig]:
    """The config, which must describe a QEMU target; any problem ends the command."""
    cfg = load_config(path, overrides=overrides)  # a ConfigError: exit 2 (json_option)
    qemu = driver_specs(cfg).qemu
    if qemu is None:
        fail(f"{path}: not a QEMU target config (no [qemu] table)", as_json)
    return cfg, qemu


def _variant(path: Path, as_json: bool, console_only: bool, kernel_args: str) -> RigConfig:
    sets = ['analyzer.driver="none"'] if console_only else []
    if kernel_args:
        args = f"{_qemu_config(path, as_json)[1].kernel_args} {kernel_args}".strip()
        sets.append(f"qemu.kernel_args={json.dumps(args)}")
    return _qemu_config(path, as_json, sets)[0]


def _scrub(folder: Path, cfg: RigConfig) -> None:
    """Recorded boots are committed: no path of the recording machine stays in them."""
    qemu = driver_specs(cfg).qemu
    assert qemu is not None
    info = json.loads((folder / QEMU_JSON).read_text(encoding="utf-8"))
    paths = {
        str(Path(info["command"][info["command"].index("-D") + 1]).parent): "<tmp>",
        str(qemu.image_dir()): "<images>",
        str(cfg.results_dir): "<results>",
    }
    if qemu.images != "auto":
        paths[qemu.images] = "<images>"
    run = read_run(folder)
    run.host = "recorded"
    for name, obj in ((QEMU_JSON, info), (RUN, run.to_json())):
        text = json.dumps(obj, indent=2)
        for path, placeholder in sorted(paths.items(), key=lambda p: -len(p[0])):
            text = text.replace(path, placeholder)
        (folder / name).write_text(text + "\n", encoding="utf-8")


def record_boot(cfg: RigConfig, out: Path, name: str) -> dict[str, Any]:
    # Here, not at the top: `rig qemu --help` needs no numpy (rig/commands/group.py).
    from rig.measure.cycle import run_cycle

    with Instruments(cfg) as bench:
        result = run_cycle(cfg, bench)
    dest = out / name
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for f in KEEP:
        if (result.folder / f).exists():
            shutil.copyfile(result.folder / f, dest / f)
    _scrub(dest, cfg)
    edges = reference_edges(dest)
    ref = {"source": TRACE_FILE, "t0": "QMP RESUME (power on)", "edges_s": edges}
    (dest / REFERENCE).write_text(json.dumps(ref, indent=2) + "\n", encoding="utf-8")
    return {"name": name, "folder": str(dest), "ui_seen": result.ui_seen, "edges_s": edges}


@qemu.command()
@config_option("The QEMU target's rig configuration.", default=Path("config/qemu-arm64.toml"))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder to fill.")
@click.option("--boots", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--name", "prefix", default="boot", show_default=True, help="Folder name prefix.")
@click.option("--console-only", is_flag=True, help="No capture: the console alone.")
@click.option("--kernel-args", default="", help="Appended to bootargs, e.g. initcall_debug.")
@json_option
def record(
    config_path: Path,
    out: Path,
    boots: int,
    prefix: str,
    console_only: bool,
    kernel_args: str,
    as_json: bool,
) -> None:
    """Boot the QEMU target and keep each boot's raw artifacts with the traced edges."""
    cfg = _variant(config_path, as_json, console_only, kernel_args)
    done = []
    try:
        for i in range(1, boots + 1):
            done.append(record_boot(cfg, out, f"{prefix}-{i}"))
            if not as_json:
                console.print(escape(f"{done[-1]['folder']}: edges {done[-1]['edges_s']}"))
    except (RigError, OSError) as e:
        fail(f"recording stopped after {len(done)} boots: {e}", as_json, exit_code(e))
    if as_json:
        emit_json({"boots": done})
