# The stock variant's build (sourced by build-stock.sh and build-stock-6.12.sh, after
# build-common.sh): Debian's kernel .deb, a busybox initramfs whose /init runs ui-ready,
# the boot disk and U-Boot's environment flash. The caller sets target, rootfs_mib,
# applets, and the kernel lookup: stock_kernel_pkg (a function printing "package version")
# and stock_kernel_note (the name its answer is noted under).
# shellcheck shell=bash
# shellcheck disable=SC2154 # set by build-common.sh and the sourcing script
: "${stock_kernel_pkg:?}" "${stock_kernel_note:?}" "${rootfs_mib:?}" "${applets:?}"

parse_args "$@"
toolchain_and_lists
kernel=$(noted "$stock_kernel_note" "$stock_kernel_pkg")
busybox=$(noted busybox-static-pkg busybox_pkg)
packages=$(as_arch <<<"$kernel
$busybox")
input_files() {
	find qemu-arm64/stock -type f
	echo qemu-arm64/stock-build.sh
}

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
