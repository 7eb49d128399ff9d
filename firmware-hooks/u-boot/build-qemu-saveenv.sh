#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The QEMU target's U-Boot that can saveenv: build.sh's qemu_arm64 build programming the
# environment flash word by word, 32 bits at a time. QEMU 7.2's pflash takes a CFI
# buffered write only in the first 4 KiB of a sector, which Debian's build (buffered
# writes) cannot save past (docs/qemu.md). Prints the build directory (u-boot.bin inside),
# cached like build.sh's others:
#
#   rig run --config config/qemu-arm64.toml --set qemu.env_writable=true \
#       --set "qemu.bios=\"$(firmware-hooks/u-boot/build-qemu-saveenv.sh)/u-boot.bin\""
set -eu

here=$(cd "$(dirname "$0")" && pwd)
exec "$here/build.sh" qemu_arm64_defconfig \
    '# CONFIG_SYS_FLASH_USE_BUFFER_WRITE is not set' \
    '# CONFIG_SYS_FLASH_CFI_WIDTH_8BIT is not set' \
    'CONFIG_SYS_FLASH_CFI_WIDTH_32BIT=y'
