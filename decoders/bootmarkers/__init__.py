"""
bootrig boot markers: when did the target get power, and when did each boot boundary pass?

Channels: 'power' (required) is the target's supply rail through a divider. 'bootm',
'do_mount_root', 'kernel_init' and 'ui_ready' (optional) are GPIOs that patched firmware
toggles once at that boot boundary; either edge direction counts.

A power-up is the first sample of a rising edge of 'power' after which the rail stays high
for at least debounce_us; earlier rising edges that fall back sooner (relay contact bounce)
are rejected and counted. A power-down is the same for a falling edge that stays low.

Annotation texts are a stable, machine-readable format (see docs/decoder.md in bootrig):
'power-up', 'power-down', 'bounce N', 'marker <name> rise|fall', 'warning: ...'.
"""

from .pd import Decoder

__all__ = ["Decoder"]
