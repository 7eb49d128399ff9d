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
    if cfg.sim is not None:
        return "sim.kernel_args", str(cfg.sim.options.get("kernel_args") or "")
    raise Untryable(
        "this target takes no kernel arguments from the rig (the QEMU target's "
        "qemu.kernel_args and the simulated board's sim.kernel_args do): set it in the "
        "board's boot configuration by hand"
    )


def _bootargs(cfg: RigConfig, knob: Knob, cmdline: str | None, extra: str) -> list[str]:
    """Removing an argument the rig did not add, on the simulated board: U-Boot's
    `bootargs` (the command line the boot printed, less the rig's own arguments, which the
    board appends again) without it."""
    if cfg.sim is None or cmdline is None:
        raise Untryable(
            f"{knob.name} is not among the arguments the rig adds ({extra!r}): remove it "
            "from the board's bootargs by hand"
        )
    tokens = cmdline.split()
    ours = extra.split()
    if ours and tokens[-len(ours) :] == ours:
        tokens = tokens[: -len(ours)]
    kept = [t for t in tokens if _arg_name(t) != knob.name]
    if len(kept) == len(tokens):
        raise Untryable(f"{knob.name} is not on the boot's command line ({cmdline!r})")
    return [f"sim.uboot_env.bootargs={json.dumps(' '.join(kept))}"]


def console_changes(knob: Knob, cfg: RigConfig, way: str = "auto") -> dict[str, str] | None:
    """The U-Boot variables to set at the board's prompt for `knob` (the console path);
    None when the knob goes through the config (`overrides`)."""
    if knob.kind != names.KNOB_UBOOT_ENV or not knob.name:
        return None
    by_config = cfg.qemu is not None or cfg.sim is not None
    if way == "config" or (way == "auto" and by_config):
        return None
    if cfg.sim is not None:
        raise Untryable("the simulated board has no U-Boot prompt: --uboot-env config")
    if knob.op == names.KNOB_REMOVE or knob.value is None:
        raise Untryable(f"removing the U-Boot variable {knob.name} is not supported")
    return {knob.name: knob.value}


def overrides(knob: Knob, cfg: RigConfig, cmdline: str | None = None) -> list[str]:
    """The `--set` items booting `cfg`'s target with `knob` applied; `cmdline` is the
    kernel command line the advised boot printed, if it did. A U-Boot variable of a
    target whose config carries none goes through the console (`console_changes`)."""
    if knob.kind == names.KNOB_KERNEL_ARG and knob.name:
        key, args = kernel_args_key(cfg)
        if knob.op == names.KNOB_REMOVE and knob.name not in {_arg_name(t) for t in args.split()}:
            return _bootargs(cfg, knob, cmdline, args)
        return [f"{key}={json.dumps(apply_kernel_arg(args, knob, key))}"]
    if knob.kind == names.KNOB_UBOOT_ENV and knob.name:
        if knob.op == names.KNOB_REMOVE or knob.value is None:
            raise Untryable(f"removing the U-Boot variable {knob.name} is not supported")
        if cfg.qemu is not None:
            return [f"qemu.uboot_env.{knob.name}={json.dumps(knob.value)}"]
        if cfg.sim is not None:
            return [f"sim.uboot_env.{knob.name}={json.dumps(knob.value)}"]
        raise Untryable(
            "this target's config carries no U-Boot variables (the QEMU target's "
            "[qemu.uboot_env] and the simulated board's [sim.uboot_env] do): "
            "rig try --uboot-env console sets them at the U-Boot prompt"
        )
    raise Untryable(knob.why or "nothing the rig can set")
