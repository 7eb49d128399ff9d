"""`rig decoders`: install the `bootmarkers` decoder for sigrok-cli/PulseView, show where it is."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import click
from rich.markup import escape

from rig.artifacts.decode import DECODER, find_decoders, user_decoders_dir
from rig.commands.common import console, emit_json, fail, json_option
from rig.errors import exit_code


@click.group()
def decoders() -> None:
    """The sigrok protocol decoder (`bootmarkers`) behind the marker scan."""


def _copy(src: Path, root: Path) -> None:
    """Replace root/bootmarkers with src, via a temporary name so a failure leaves no mix."""
    target, tmp = root / DECODER, root / f".{DECODER}.tmp"
    root.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def _sigrok_finds_it() -> bool | None:
    """Does sigrok-cli load the decoder with no environment override? None: no sigrok-cli."""
    exe = shutil.which("sigrok-cli")
    if exe is None:
        return None
    overrides = ("SIGROKDECODE_DIR", "SIGROKDECODE_PATH")
    env = {k: v for k, v in os.environ.items() if k not in overrides}
    proc = subprocess.run(
        [exe, "--show", "-P", DECODER], capture_output=True, text=True, env=env, check=False
    )
    return proc.returncode == 0 and f"ID: {DECODER}" in proc.stdout


@decoders.command()
@click.option(
    "--dest",
    type=click.Path(file_okay=False, path_type=Path),
    help="Decoders directory to install into (default: the per-user one sigrok searches).",
)
@json_option
def install(dest: Path | None, as_json: bool) -> None:
    """Copy `bootmarkers` to where sigrok-cli and PulseView find it for this user."""
    src_root, source = find_decoders()  # a ConfigError (exit 2) or RigError (exit 3)
    root = dest or user_decoders_dir()
    src = src_root / DECODER
    target = root / DECODER
    if target.resolve() != src.resolve():
        try:
            _copy(src, root)
        except OSError as e:
            fail(f"cannot install {src} to {target}: {e}", as_json, exit_code(e))
    # Only the default destination is one sigrok searches by itself; checking --dest could
    # only find some other copy.
    found = _sigrok_finds_it() if dest is None else None
    if as_json:
        emit_json({"installed": str(target), "from": str(src), "source": source, "found": found})
        return
    console.print(
        f"installed {DECODER} to {escape(str(target))} (from {escape(str(src))})", highlight=False
    )
    if found is False:
        console.print("[yellow]warning:[/] sigrok-cli does not find it there", highlight=False)
    elif dest is not None:
        console.print(f"sigrok-cli and PulseView find it with SIGROKDECODE_DIR={escape(str(root))}")


@decoders.command()
@json_option
def path(as_json: bool) -> None:
    """Print the decoders directory the rig passes to sigrok-cli."""
    where, source = find_decoders()
    if as_json:
        user = str(user_decoders_dir())
        emit_json({"decoders_dir": str(where), "source": source, "user_dir": user})
    else:
        click.echo(str(where))
