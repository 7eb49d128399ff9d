"""The QEMU arm64 target: real U-Boot and Linux on emulated hardware, behind the same
instrument protocols as a board on the bench."""
