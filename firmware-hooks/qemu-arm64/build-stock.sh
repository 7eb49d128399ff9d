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

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hooks=$(dirname "$here")
cache_root=${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}
out_root=$cache_root/qemu-arm64-stock
apt_dir=${BOOTRIG_APT_DIR:-$cache_root/apt-arm64}
debs=$cache_root/debs
cross=aarch64-linux-gnu-
meta=linux-image-arm64 # Debian's "current arm64 kernel" package; we take what it depends on
rootfs_mib=64
# busybox applets linked in the initramfs (what /init runs)
applets="sh mount md5sum sleep cat ls dmesg"

prog=build-stock.sh
# shellcheck source=arm64-apt.sh
source "$here/arm64-apt.sh"

mode=build
update=0
for arg in "$@"; do
	case $arg in
	--dir) mode=dir ;;
	--update) update=1 ;;
	-h | --help)
		sed -n '2,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
		exit 0
		;;
	*) die "unknown argument '$arg' (try --help)" ;;
	esac
done

busybox_pkg() { echo "busybox-static $(candidate busybox-static)"; }

# --- inputs and their hash -------------------------------------------------------------
input_files() {
	(
		cd "$hooks"
		printf '%s\n' qemu-arm64/build-stock.sh qemu-arm64/arm64-apt.sh \
			qemu-arm64/stock/u-boot-env.txt \
			userspace/ui-ready.c
		find qemu-arm64/stock/initramfs -type f | LC_ALL=C sort
	)
}

input_lines() {
	local f
	echo "bootrig qemu-arm64-stock inputs 1"
	while read -r f; do
		[[ -f $hooks/$f ]] || die "input $hooks/$f is missing"
		printf '%s %s %s\n' "$f" "$([[ -x $hooks/$f ]] && echo x || echo -)" \
			"$(sha256sum <"$hooks/$f" | cut -d' ' -f1)"
	done < <(input_files | LC_ALL=C sort)
	echo "kernel:arm64 $kernel"
	echo "busybox:arm64 $busybox"
	echo "cross-gcc $gcc_version"
	echo "libc6-dev-arm64-cross $libc_version"
}

require dpkg-query:dpkg apt-get:apt sha256sum:coreutils "${cross}gcc:gcc-aarch64-linux-gnu" \
	"/usr/aarch64-linux-gnu/lib/libc.a:libc6-dev-arm64-cross"
gcc_version=$("${cross}gcc" --version | head -n1)
libc_version=$(pkg_version libc6-dev-arm64-cross)
if ((update)) || ! apt_lists_present; then
	apt_update
fi
kernel=$(noted stock-kernel kernel_pkg)
busybox=$(noted busybox-static-pkg busybox_pkg)
hash=$(input_lines | sha256sum | cut -c1-16)

# --- build ---------------------------------------------------------------------------------
begin_build # --dir answers here; otherwise the lock is held and $tmp is empty

# The .deb of "package version", from the shared cache or downloaded (and kept there).
fetch_deb() {
	local pkg=$1 ver=$2 d
	for d in "$debs/${pkg}"_*_arm64.deb; do
		[[ -f $d && $(dpkg-deb -f "$d" Package) == "$pkg" && $(dpkg-deb -f "$d" Version) == "$ver" ]] &&
			echo "$d" && return 0
	done
	log "downloading $pkg:arm64 $ver"
	mkdir -p "$tmp/dl"
	(cd "$tmp/dl" && apt-get "${apt_opts[@]}" -qq download "$pkg:arm64=$ver") >&2 ||
		die "could not download $pkg:arm64 $ver; try --update"
	d=$(compgen -G "$tmp/dl/${pkg}_*_arm64.deb" | head -n1) || die "apt-get download left no $pkg .deb"
	mv "$d" "$debs/" && echo "$debs/$(basename "$d")"
}

td=$SECONDS
kdeb=$(fetch_deb "${kernel% *}" "${kernel#* }")
bdeb=$(fetch_deb "${busybox% *}" "${busybox#* }")
download_seconds=$((SECONDS - td))
[[ $(dpkg-deb -f "$kdeb" Architecture) == arm64 ]] || die "$kdeb is not arm64"

# The kernel as Debian ships it: /boot/vmlinuz-<release> and its config (not the modules:
# the initramfs needs none, GPIO_PL061 and the PL011 console are built in).
kver=${kernel%% *}
kver=${kver#linux-image-}
kx() { dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$tmp/kernel" "./boot/vmlinuz-$kver" "./boot/config-$kver"; }
mkdir -p "$tmp/kernel"
step "unpacking vmlinuz-$kver from $(basename "$kdeb")" kx
for opt in CONFIG_GPIO_PL061=y CONFIG_GPIO_CDEV=y CONFIG_BLK_DEV_INITRD=y CONFIG_RD_GZIP=y \
	CONFIG_SERIAL_AMBA_PL011_CONSOLE=y CONFIG_DEVTMPFS=y; do
	grep -qxF "$opt" "$tmp/kernel/boot/config-$kver" || die "Debian's $kver lacks $opt"
done
cp "$tmp/kernel/boot/vmlinuz-$kver" "$tmp/Image"
cp "$tmp/kernel/boot/config-$kver" "$tmp/kernel.config"

# The initramfs: busybox, ui-ready and /init; no /dev/console (no root needed to build).
ird=$tmp/initramfs
mkdir -p "$ird"/{bin,dev,proc,sys,usr/bin}
step "unpacking busybox-static" dpkg-deb -x "$bdeb" "$tmp/busybox"
cp "$tmp/busybox/bin/busybox" "$ird/bin/busybox"
for a in $applets; do
	ln -s busybox "$ird/bin/$a"
done
step "building ui-ready (static arm64)" "${cross}gcc" -O2 -Wall -Wextra -Werror -static \
	-o "$ird/usr/bin/ui-ready" "$hooks/userspace/ui-ready.c"
"${cross}strip" "$ird/usr/bin/ui-ready"
cp -R --preserve=mode "$here/stock/initramfs/." "$ird/"
mkcpio() { (cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -9n >"$tmp/initrd.img"); }
step "making initrd.img (newc cpio, gzip)" mkcpio

# The disk U-Boot reads the kernel and the initramfs from (the kernel never mounts it).
disk=$tmp/disk
mkdir -p "$disk/boot"
cp "$tmp/Image" "$disk/boot/vmlinuz"
cp "$tmp/initrd.img" "$disk/boot/initrd.img"
step "making rootfs.img (ext4, ${rootfs_mib} MiB, /boot only)" mke2fs -q -F -t ext4 \
	-L bootrig-boot -E root_owner=0:0 -d "$disk" "$tmp/rootfs.img" "${rootfs_mib}M"
cp "$here/stock/u-boot-env.txt" "$tmp/u-boot-env.txt"
step "making flash1.img" mkenvimage -s 0x40000 -o "$tmp/flash1.img" "$tmp/u-boot-env.txt"
truncate -s 64M "$tmp/flash1.img"

rm -rf "$tmp/kernel" "$tmp/busybox" "$tmp/initramfs" "$tmp/disk" "$tmp/dl"
build_seconds=$((SECONDS - t0))
cat >"$tmp/manifest.json" <<EOF
{
  "schema": "bootrig.qemu-image/1",
  "target": "qemu-arm64-stock",
  "hash": "$hash",
  "kernel_release": "$kver",
  "build_seconds": $build_seconds,
  "download_seconds": $download_seconds,
  "built_utc": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "packages": {
    "${kernel%% *}:arm64": "${kernel#* }",
    "busybox-static:arm64": "${busybox#* }",
    "libc6-dev-arm64-cross": "$libc_version",
    "cross-gcc": "${gcc_version//\"/\\\"}"
  },
  "files": ["Image", "initrd.img", "rootfs.img", "flash1.img", "u-boot-env.txt",
            "kernel.config", "build.log"]
}
EOF
chmod 755 "$tmp"
chmod 644 "$tmp"/*
mv "$tmp" "$out"
trap - EXIT
log "built in ${build_seconds} s (downloads ${download_seconds} s): $out"
echo "$out"
