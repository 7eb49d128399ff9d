#!/usr/bin/env bash
# Build the bootrig QEMU arm64 target from Debian packages only: a kernel from
# linux-source-6.1 with firmware-hooks/linux applied, a root disk with a static
# busybox and ui-ready, and U-Boot's environment flash. See README.md.
#
#   build.sh           build if needed; the output directory is the last line
#   build.sh --dir     print the output directory; exit 0 if built, 1 if not
#   build.sh --update  refresh the arm64 package lists first (a new busybox-static
#                      version is a new input, so it means a new build)
#
# Output: ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/qemu-arm64/<hash>/
# where <hash> covers every input (see input_lines). BOOTRIG_APT_DIR overrides where
# the private arm64 apt state lives (default: beside the outputs, shared by builds).
# The kernel's object tree (make O=) is kept as <cache>/qemu-arm64-kbuild/<hash>/ (the
# latest build's only), so bisect-repo.sh starts its builds from it, not cold.
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 arm64 package lists unavailable.
set -euo pipefail

target=qemu-arm64
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
ksrc_tarball=/usr/src/linux-source-6.1.tar.xz
kmake=(make ARCH=arm64 CROSS_COMPILE="$cross" KBUILD_BUILD_USER=bootrig KBUILD_BUILD_HOST=bootrig)
rootfs_mib=64
# busybox applets linked in the root filesystem (the rest run as `busybox NAME`)
applets="sh ash cat cp date dd dmesg echo false grep head kill ln ls md5sum mkdir mount
mv ps rm sed seq sha256sum sleep sync tail true umount uname wc"

parse_args "$@"
toolchain_and_lists "$ksrc_tarball:linux-source-6.1"
compgen -G "$hooks/linux/*.patch" >/dev/null || die "no patches in $hooks/linux"
ksrc_version=$(pkg_version linux-source-6.1)
busybox=$(noted busybox-static-pkg busybox_pkg)
packages="linux-source-6.1 $ksrc_version
$(as_arch <<<"$busybox")"
input_files() (
	shopt -s nullglob
	printf '%s\n' linux/*.patch qemu-arm64/kernel.config qemu-arm64/u-boot-env.txt
	find qemu-arm64/rootfs -type f
)

# --- build ---------------------------------------------------------------------------------
begin_build make:make gcc:gcc bc:bc bison:bison flex:flex perl:perl patch:patch xz:xz-utils

# The kernel: allnoconfig + kernel.config, every requested option checked. Objects go
# to build/ inside the source (O=): a subfolder makes kbuild's paths relative, so the
# object tree is kept (kbuild_keep) and reused by bisect-repo.sh from another source.
src=$tmp/src/linux-source-6.1
obj=$src/build
kbuild_keep=$cache_root/qemu-arm64-kbuild
mkdir -p "$tmp/src"
step "extracting $ksrc_tarball" tar -xJf "$ksrc_tarball" -C "$tmp/src"
[[ -d $src ]] || die "$ksrc_tarball has no linux-source-6.1/ directory"
while read -r f; do
	[[ $f == linux/* ]] || continue
	step "applying $f" patch -d "$src" -p1 --batch --forward -i "$hooks/$f"
done < <(cd "$hooks" && input_files | LC_ALL=C sort)

merge_config() (
	mkdir -p "$obj" && cd "$src" &&
		ARCH=arm64 CROSS_COMPILE=$cross scripts/kconfig/merge_config.sh -n -O build "$here/kernel.config"
)
step "configuring the kernel (allnoconfig + kernel.config)" merge_config

check_config() {
	local line sym bad=()
	while read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)= ]]; then
			grep -qxF -- "$line" "$obj/.config" || bad+=("$line")
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym=${BASH_REMATCH[1]}
			if grep -q "^$sym=" "$obj/.config"; then bad+=("$line"); fi
		fi
	done <"$here/kernel.config"
	if ((${#bad[@]})); then
		printf 'build.sh: not in the merged kernel config: %s\n' "${bad[@]}" >&2
		die "kernel.config asks for options the kernel did not take (dependencies?)"
	fi
}
check_config

tk=$SECONDS
step "building the kernel Image (make -j$(nproc) Image; log: build.log)" \
	"${kmake[@]}" -C "$src" O=build -j"$(nproc)" Image
kernel_seconds=$((SECONDS - tk))
kernel_release=$("${kmake[@]}" -s -C "$src" O=build kernelrelease)
cp "$obj/arch/arm64/boot/Image" "$tmp/Image"
cp "$src/scripts/bootgraph.pl" "$tmp/bootgraph.pl"
cp "$obj/.config" "$tmp/kernel.config"

# The root filesystem: busybox, the init script, ui-ready and the kernel for U-Boot.
root=$tmp/rootfs
mkdir -p "$root"/{bin,sbin,usr/bin,dev,proc,sys,tmp,boot,root,etc}
bdeb=$(fetch_debs <<<"$busybox")
install_busybox "$bdeb" "$root" "$applets"
build_ui_ready "$root"
cp -R --preserve=mode "$here/rootfs/." "$root/"
cp "$tmp/Image" "$root/boot/Image"
step "making rootfs.img (ext4, ${rootfs_mib} MiB)" mke2fs -q -F -t ext4 -L bootrig-root \
	-E root_owner=0:0 -d "$root" "$tmp/rootfs.img" "${rootfs_mib}M"
make_flash "$here/u-boot-env.txt"

# Keep the object tree (its source is the tarball and the patches), this build's only.
rm -rf "$kbuild_keep"
mkdir -p "$kbuild_keep"
mv "$obj" "$kbuild_keep/$hash"

files=(Image rootfs.img flash1.img u-boot-env.txt bootgraph.pl kernel.config build.log)
executables=(bootgraph.pl)
finish_build "$kernel_release" "kernel ${kernel_seconds} s" kernel_build_seconds="$kernel_seconds"
