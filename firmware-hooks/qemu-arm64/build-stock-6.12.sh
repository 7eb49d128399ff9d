#!/usr/bin/env bash
# Build the stock variant with Linux 6.12: build-stock.sh's hookless test bed (Debian's
# U-Boot, a busybox initramfs whose /init runs ui-ready, the same stock/ files) with
# Debian 12's own arm64 6.12 kernel (linux-image-6.12-arm64's linux-image-6.12.*-arm64,
# from bookworm-security; no bootrig hooks) instead of 6.1's. See README.md ("The stock
# variant").
#
#   build-stock-6.12.sh           build if needed; the output directory is the last line
#   build-stock-6.12.sh --dir     print the output directory; exit 0 if built, 1 if not
#   build-stock-6.12.sh --update  refresh the arm64 package lists first (a new kernel or
#                                 busybox-static version is a new input, so a new build)
#
# Output: ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/qemu-arm64-stock-6.12/<hash>/
# with what build-stock.sh leaves. It shares the private arm64 apt state and .deb cache
# (BOOTRIG_APT_DIR); the kernel .deb is about 90 MB, downloaded once.
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 arm64 package lists unavailable.
set -euo pipefail

target=qemu-arm64-stock-6.12
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
rootfs_mib=80 # 6.12's Image is larger than 6.1's
applets="sh mount md5sum sleep cat ls dmesg"
meta_612=linux-image-6.12-arm64 # Debian 12's "current 6.12 arm64 kernel" package

# linux-image-6.12-arm64 depends on exactly one linux-image-6.12.*-arm64 (= version).
kernel_pkg_612() {
	local v dep
	v=$(candidate "$meta_612")
	dep=$(apt-cache "${apt_opts[@]}" show "$meta_612=$v" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1)
	[[ $dep =~ ^(linux-image-6\.12\.[0-9]+\+deb12-arm64)\ \(=\ ([^\)]+)\) ]] ||
		die "$meta_612 $v depends on '$dep', not on one linux-image-6.12.*-arm64"
	echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
}

stock_kernel_pkg=kernel_pkg_612
stock_kernel_note=stock-kernel-6.12
# shellcheck source=stock-build.sh
source "$here/stock-build.sh"
