"""The QEMU targets (arm64, armv7): real U-Boot and Linux on emulated hardware, behind
the same instrument protocols as a board on the bench."""
