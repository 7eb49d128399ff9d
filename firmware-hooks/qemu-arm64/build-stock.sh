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

parse_args "$@"
toolchain_and_lists
kernel=$(noted stock-kernel kernel_pkg)
busybox=$(noted busybox-static-pkg busybox_pkg)
packages=$(as_arch <<<"$kernel
$busybox")
input_files() { find qemu-arm64/stock -type f; }

# --- build ---------------------------------------------------------------------------------
begin_build cpio:cpio gzip:gzip # --dir answers here; otherwise the lock is held and $tmp is empty

td=$SECONDS
kdeb=$(fetch_debs <<<"$kernel")
bdeb=$(fetch_debs <<<"$busybox")
download_seconds=$((SECONDS - td))

debian_kernel "$kdeb" CONFIG_GPIO_PL061=y CONFIG_GPIO_CDEV=y CONFIG_BLK_DEV_INITRD=y \
	CONFIG_RD_GZIP=y CONFIG_SERIAL_AMBA_PL011_CONSOLE=y CONFIG_DEVTMPFS=y

# The initramfs: busybox, ui-ready and /init; no /dev/console (no root needed to build).
ird=$tmp/initramfs
mkdir -p "$ird"/{bin,dev,proc,sys,usr/bin}
install_busybox "$bdeb" "$ird" "$applets"
build_ui_ready "$ird"
cp -R --preserve=mode "$here/stock/initramfs/." "$ird/"
make_initrd "$ird" 9
make_boot_disk "$rootfs_mib"
make_flash "$here/stock/u-boot-env.txt"

files=(Image initrd.img rootfs.img flash1.img u-boot-env.txt kernel.config build.log)
finish_build "$kver" "downloads ${download_seconds} s" download_seconds="$download_seconds"
