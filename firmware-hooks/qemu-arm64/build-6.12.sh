#!/usr/bin/env bash
# Build the bootrig QEMU arm64 target with Linux 6.12: build.sh's target (U-Boot's
# environment, the busybox root disk with ui-ready, the four markers) with a kernel from
# Debian's linux-source-6.12 carrying the same firmware-hooks/linux series. See
# README.md ("Linux 6.12").
#
#   build-6.12.sh           build if needed; the output directory is the last line
#   build-6.12.sh --dir     print the output directory; exit 0 if built, 1 if not
#   build-6.12.sh --update  refresh the arm64 package lists first (a new busybox-static
#                           version is a new input, so it means a new build)
#
# Output: ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/qemu-arm64-6.12/<hash>/
# with what build.sh leaves (see README.md, "Output"); <hash> covers this target's inputs
# only: not linux-source-6.1 nor build.sh. It shares build.sh's private arm64 apt state
# and .deb cache (BOOTRIG_APT_DIR), and keeps no kernel objects.
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 arm64 package lists unavailable.
set -euo pipefail

target=qemu-arm64-6.12
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
kver=6.12
kconfig=qemu-arm64/kernel.config
# shellcheck source=hooked.sh
source "$here/hooked.sh"
hooked_build "$@"
