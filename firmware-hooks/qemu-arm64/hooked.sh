# The hooked target's own steps, for a given kernel version and architecture (sourced,
# not run, after build-common.sh): the kernel from Debian's linux-source-$kver with
# ../linux/*.patch (hooked-kernel.sh, cached on its own inputs), and the busybox root
# disk with that kernel as /boot/Image. build-6.12.sh and ../qemu-armv7/build.sh use it
# (hooked_build). build.sh (6.1 arm64) has the same steps inline, and keeps its kernel
# objects for the bisect repository (bisect-repo.sh).
#
# The sourcing script sets `kver` (the linux-source version, e.g. 6.12), `kconfig` (the
# config fragment, relative to firmware-hooks/) and, if not arm64's, `uboot_env` (U-Boot's
# environment, relative to firmware-hooks/) before sourcing; `deb_arch` before
# build-common.sh.
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables set here are read by the sourcing script
: "${kver:?}" "${kconfig:?}" "${here:?}" # kver, kconfig: the sourcing script; here: build-common.sh

ksrc=linux-source-$kver
ksrc_tarball=/usr/src/$ksrc.tar.xz
uboot_env=${uboot_env:-qemu-arm64/u-boot-env.txt}
rootfs_mib=64
# busybox applets linked in the root filesystem (the rest run as `busybox NAME`)
applets="sh ash cat cp date dd dmesg echo false grep head kill ln ls md5sum mkdir mount
mv ps rm sed seq sha256sum sleep sync tail true umount uname wc"
# shellcheck source=hooked-kernel.sh
source "$here/hooked-kernel.sh"

# After parse_args: the toolchain, the source tarball and the deb_arch lists; sets
# `busybox` and `packages` (this kernel source's version, busybox-static's).
hooked_requirements() {
	toolchain_and_lists "$ksrc_tarball:$ksrc"
	compgen -G "$hooks/linux/*.patch" >/dev/null || die "no patches in $hooks/linux"
	busybox=$(noted busybox-static-pkg busybox_pkg)
	packages="$ksrc $(pkg_version "$ksrc")
$(as_arch <<<"$busybox")"
}

# The input files (relative to firmware-hooks/) besides the script and the shared ones:
# this file and hooked-kernel.sh, the patches, the kernel config fragment, U-Boot's
# environment, the rootfs.
input_files() (
	shopt -s nullglob
	printf '%s\n' qemu-arm64/hooked.sh qemu-arm64/hooked-kernel.sh linux/*.patch "$kconfig" \
		"$uboot_env"
	find qemu-arm64/rootfs -type f
)

# The root disk (busybox, the init script, ui-ready, $tmp/Image as /boot/Image) as
# $tmp/rootfs.img and U-Boot's environment as $tmp/flash1.img.
hooked_rootfs() {
	local root=$tmp/rootfs bdeb
	mkdir -p "$root"/{bin,sbin,usr/bin,dev,proc,sys,tmp,boot,root,etc}
	bdeb=$(fetch_debs <<<"$busybox")
	install_busybox "$bdeb" "$root" "$applets"
	build_ui_ready "$root"
	cp -R --preserve=mode "$here/rootfs/." "$root/"
	cp "$tmp/Image" "$root/boot/Image"
	step "making rootfs.img (ext4, ${rootfs_mib} MiB)" mke2fs -q -F -t ext4 -L bootrig-root \
		-E root_owner=0:0 -d "$root" "$tmp/rootfs.img" "${rootfs_mib}M"
	make_flash "$hooks/$uboot_env"
}

# The whole build (the script's arguments): the output folder is the last line printed.
hooked_build() {
	parse_args "$@"
	hooked_requirements
	begin_build make:make gcc:gcc bc:bc bison:bison flex:flex perl:perl patch:patch xz:xz-utils
	hooked_kernel
	hooked_rootfs
	files=(Image rootfs.img flash1.img u-boot-env.txt bootgraph.pl kernel.config build.log)
	executables=(bootgraph.pl)
	finish_build "$kernel_release" "kernel $kernel_key, built in ${kernel_seconds} s" \
		kernel_build_seconds="$kernel_seconds" kernel_key="\"$kernel_key\""
}
