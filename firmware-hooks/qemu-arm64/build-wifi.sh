#!/usr/bin/env bash
# Build the bootrig QEMU arm64 target with a wireless LAN stack built into its Linux 6.1
# kernel (kernel-wifi.config: kernel.config plus cfg80211, mac80211 and mac80211_hwsim):
# the same hooks, root disk and U-Boot environment, and one initcall of an optional
# subsystem, init_mac80211_hwsim, for the initcall_blacklist advice (docs/try.md). Its own
# kernel and cache: the hooked 6.1 kernel, and what is keyed on it, are untouched.
#
#   build-wifi.sh           build if needed; the output directory is the last line
#   build-wifi.sh --dir     print the output directory; exit 0 if built, 1 if not
#   build-wifi.sh --update  refresh the arm64 package lists first
#
# Output: ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/qemu-arm64-wifi/<hash>/
# with what build.sh leaves (see README.md, "Output"). It shares build.sh's private arm64
# apt state and .deb cache (BOOTRIG_APT_DIR), and keeps no kernel objects.
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 arm64 package lists unavailable.
set -euo pipefail

target=qemu-arm64-wifi
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
kver=6.1
kconfig=qemu-arm64/kernel-wifi.config
# shellcheck source=hooked.sh
source "$here/hooked.sh"

hooked_build "$@"
