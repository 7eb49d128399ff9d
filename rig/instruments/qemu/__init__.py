"""The QEMU arm64 target: real U-Boot and Linux on emulated hardware, driven through the
same instrument protocols as a board on the bench (power = QMP, console = the PL011 pty,
analyzer = QEMU's PL061 trace)."""
