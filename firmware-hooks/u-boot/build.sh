#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build U-Boot as Debian 12 ships it (fetch-source.sh) with the bootrig patches
# (*.patch here, in name order) and CONFIG_BOOTRIG_MARKER=y; print the build directory
# (u-boot.bin inside).
#
#   firmware-hooks/u-boot/build.sh                          # qemu_arm64_defconfig
#   firmware-hooks/u-boot/build.sh DEFCONFIG [CONFIG_X=y ...]
#   CROSS_COMPILE=arm-linux-gnueabihf- firmware-hooks/u-boot/build.sh myboard_defconfig \
#       'CONFIG_BOOTRIG_MARKER_GPIO="gpio@4804c000_12"'
#
# CROSS_COMPILE defaults to aarch64-linux-gnu-. The build is cached under
# ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/u-boot-build/, keyed on the
# patches, the defconfig, the extra options and CROSS_COMPILE; a new key replaces the old
# build of that defconfig with the same options (a build with other options stays: the
# QEMU target's writable-environment build sits beside the default one). Needs make, gcc,
# bison, flex, bc, libssl-dev and the cross compiler.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
defconfig=${1:-qemu_arm64_defconfig}
[ $# -eq 0 ] || shift
CROSS_COMPILE=${CROSS_COMPILE-aarch64-linux-gnu-}
export CROSS_COMPILE

src=$("$here/fetch-source.sh")
cache=${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/u-boot-build
key=$({
    cat "$here"/*.patch
    echo "$src" "$defconfig" "$CROSS_COMPILE"
    for opt in "$@"; do echo "$opt"; done
} | sha256sum | cut -c1-12)
dir=$cache/$defconfig-$key

if [ -f "$dir/.bootrig-complete" ]; then
    echo "$dir/out"
    exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -f "$dir/.bootrig-complete" ]; then
    echo "$dir/out"
    exit 0
fi
# The options of a build, one a line: what says which older build this one replaces.
options=$(printf '%s\n' "$CROSS_COMPILE" "$@")
for old in "$cache/$defconfig"-*; do
    if [ -f "$old/.bootrig-options" ] && [ "$(cat "$old/.bootrig-options")" = "$options" ]; then
        rm -rf "$old"
    fi
done
rm -rf "$dir"
mkdir -p "$dir"
cp -a "$src" "$dir/src"
for p in "$here"/*.patch; do
    patch -d "$dir/src" -s -p1 --forward --batch --no-backup-if-mismatch -i "$p" >&2
done

{
    make -C "$dir/src" -s O="$dir/out" "$defconfig"
    printf '%s\n' CONFIG_BOOTRIG_MARKER=y "$@" >>"$dir/out/.config"
    make -C "$dir/src" -s O="$dir/out" olddefconfig
} >&2
# Kconfig drops what it cannot honour (a missing dependency): say so instead of
# building something else than asked.
for opt in CONFIG_BOOTRIG_MARKER=y "$@"; do
    grep -qxF "$opt" "$dir/out/.config" || {
        echo "build.sh: Kconfig did not keep $opt (a dependency missing?)" >&2
        exit 1
    }
done

start=$(date +%s)
make -C "$dir/src" -s O="$dir/out" -j"$(nproc)" >&2
echo "build.sh: U-Boot $defconfig built in $(($(date +%s) - start)) s" >&2
rm -rf "$dir/src"
printf '%s\n' "$options" >"$dir/.bootrig-options"
touch "$dir/.bootrig-complete"
echo "$dir/out"
