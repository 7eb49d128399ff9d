#!/usr/bin/env bash
# Build the bootrig QEMU armv7 target (32-bit ARM, -M virt with a Cortex-A15) from Debian
# packages only: a zImage from linux-source-6.1 with firmware-hooks/linux applied,
# cross-built for armhf (kernel.config here), the arm64 target's busybox root disk with
# armhf busybox-static and ui-ready, and U-Boot's environment flash (u-boot-env.txt here:
# the environment-only marker recipe, `mw` to the PL061 then `echo`, and `bootz`).
# The steps are the arm64 6.12 target's (../qemu-arm64/hooked.sh). See
# ../qemu-arm64/README.md ("The armv7 target").
#
#   build.sh           build if needed; the output directory is the last line
#   build.sh --dir     print the output directory; exit 0 if built, 1 if not
#   build.sh --update  refresh the armhf package lists first (a new busybox-static
#                      version is a new input, so it means a new build)
#
# Output: ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/qemu-armv7/<hash>/
# with what the arm64 builds leave (Image is the zImage); the kernel is cached on its own
# inputs in <cache>/qemu-armv7-kernel/. The private armhf apt state is <cache>/apt-armhf
# (BOOTRIG_APT_DIR overrides it); the .deb cache is shared with the arm64 builds.
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 armhf package lists unavailable.
set -euo pipefail

target=qemu-armv7
deb_arch=armhf
# shellcheck source=../qemu-arm64/build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../qemu-arm64/build-common.sh"
kver=6.1
kconfig=qemu-armv7/kernel.config
uboot_env=qemu-armv7/u-boot-env.txt
# shellcheck source=../qemu-arm64/hooked.sh
source "$here/hooked.sh"
hooked_build "$@"
