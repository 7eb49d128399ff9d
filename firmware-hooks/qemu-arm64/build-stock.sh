#!/usr/bin/env bash
# Build the "stock" variant of the bootrig QEMU arm64 target: Debian's own arm64 kernel
# (linux-image-arm64's linux-image-6.1.*-arm64, no bootrig hooks) booting a busybox
# initramfs whose /init runs ui-ready. The hookless test bed: the kernel's boundaries
# can only be read from its own messages. See README.md ("The stock variant").
#
#   build-stock.sh           build if needed; the output directory is the last line
#   build-stock.sh --dir     print the output directory; exit 0 if built, 1 if not
#   build-stock.sh --update  refresh the arm64 package lists first (a new kernel or
#                            busybox-static version is a new input, so a new build)
#
# Output: ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/qemu-arm64-stock/<hash>/
# with Image, rootfs.img (the disk U-Boot loads from), u-boot-env.txt, flash1.img.
# It shares build.sh's private arm64 apt state and .deb cache (BOOTRIG_APT_DIR).
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 arm64 package lists unavailable.
set -euo pipefail

target=qemu-arm64-stock
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
rootfs_mib=64
# busybox applets linked in the initramfs (what /init runs)
applets="sh mount md5sum sleep cat ls dmesg"

stock_kernel_pkg=kernel_pkg
stock_kernel_note=stock-kernel
# shellcheck source=stock-build.sh
source "$here/stock-build.sh"
