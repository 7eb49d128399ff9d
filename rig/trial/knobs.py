"""Where an advisory's knob goes on the rig's target (docs/try.md, "Targets"): the config
overrides, as `rig run --set` takes them, that boot the target with the knob applied."""

from __future__ import annotations

import json

from rig import names
from rig.config.load import RigConfig
from rig.model.knob import Knob


class Untryable(Exception):
    """The knob cannot be applied on this target; the message says why."""


def _arg_name(token: str) -> str:
    return token.partition("=")[0]


def apply_kernel_arg(args: str, knob: Knob, key: str) -> str:
    """`args` (a kernel command line fragment) with the knob applied: `set` replaces every
    argument of its name and appends `name[=value]`; `remove` drops every one of them."""
    kept = [t for t in args.split() if _arg_name(t) != knob.name]
    if knob.op == names.KNOB_REMOVE:
        if len(kept) == len(args.split()):
            raise Untryable(
                f"{knob.name} is not in {key} ({args!r}): the rig can only remove what it adds"
            )
        return " ".join(kept)
    return " ".join([*kept, knob.setting])


def kernel_args_key(cfg: RigConfig) -> tuple[str, str]:
    """The config key the target's extra kernel arguments live in, and its value."""
    if cfg.qemu is not None:
        return "qemu.kernel_args", str(cfg.qemu.data.get("kernel_args") or "")
    raise Untryable(
        "this target takes no kernel arguments from the rig (the QEMU target's "
        "qemu.kernel_args does): set it in the board's boot configuration by hand"
    )


def overrides(knob: Knob, cfg: RigConfig) -> list[str]:
    """The `--set` items booting `cfg`'s target with `knob` applied."""
    if knob.kind == names.KNOB_KERNEL_ARG and knob.name:
        key, args = kernel_args_key(cfg)
        return [f"{key}={json.dumps(apply_kernel_arg(args, knob, key))}"]
    if knob.kind == names.KNOB_UBOOT_ENV and knob.name:
        if cfg.qemu is None:
            # The console path (rig.instruments.uboot_console) is not wired to rig try yet.
            raise Untryable(
                "this target takes no U-Boot variables from the rig (the QEMU target's "
                "[qemu.uboot_env] does): set it at the U-Boot prompt by hand"
            )
        if knob.op == names.KNOB_REMOVE or knob.value is None:
            raise Untryable(f"removing the U-Boot variable {knob.name} is not supported")
        return [f"qemu.uboot_env.{knob.name}={json.dumps(knob.value)}"]
    raise Untryable(knob.why or "nothing the rig can set")
