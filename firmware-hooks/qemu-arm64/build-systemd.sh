#!/usr/bin/env bash
# Build the "systemd" variant of the bootrig QEMU arm64 target: Debian's own arm64 kernel
# (as build-stock.sh takes it, no bootrig hooks) booting an initramfs whose PID 1 is
# Debian's arm64 systemd; ui-ready.service, part of the default target's transaction,
# runs ui-ready. The test bed of systemd's `Startup finished` landmark. See README.md
# ("The systemd variant").
#
#   build-systemd.sh           build if needed; the output directory is the last line
#   build-systemd.sh --dir     print the output directory; exit 0 if built, 1 if not
#   build-systemd.sh --update  refresh the arm64 package lists first (new package
#                              versions are new inputs, so a new build)
#
# Output: ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/qemu-arm64-systemd/<hash>/
# with Image, initrd.img, rootfs.img (the disk U-Boot loads from), u-boot-env.txt,
# flash1.img. It shares build.sh's private arm64 apt state and .deb cache.
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 arm64 package lists unavailable.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hooks=$(dirname "$here")
cache_root=${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}
out_root=$cache_root/qemu-arm64-systemd
apt_dir=${BOOTRIG_APT_DIR:-$cache_root/apt-arm64}
debs=$cache_root/debs
cross=aarch64-linux-gnu-
meta=linux-image-arm64 # Debian's "current arm64 kernel" package; we take what it depends on
# The userspace: systemd and its Depends/Pre-Depends closure (no Recommends: no udev, no
# dbus), base-files for /etc/os-release and base-passwd for /etc/passwd and /etc/group.
roots="systemd base-files base-passwd"
rootfs_mib=128
# Never used on this board, and unpacking them costs TCG time: man pages, translations,
# docs, and glibc's iconv modules (19 MB; nothing here converts character sets).
prune="usr/share/doc usr/share/man usr/share/info usr/share/locale usr/share/lintian
usr/share/bug usr/share/zsh usr/share/bash-completion usr/lib/aarch64-linux-gnu/gconv"

prog=build-systemd.sh
# shellcheck source=arm64-apt.sh
source "$here/arm64-apt.sh"

mode=build
update=0
for arg in "$@"; do
	case $arg in
	--dir) mode=dir ;;
	--update) update=1 ;;
	-h | --help)
		sed -n '2,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
		exit 0
		;;
	*) die "unknown argument '$arg' (try --help)" ;;
	esac
done

# "package version" per line: the roots and everything they depend on, as apt resolves it
# against the private state's empty dpkg status (so nothing counts as installed).
closure() {
	local plan
	# shellcheck disable=SC2086 # $roots is a list of package names
	plan=$(apt-get "${apt_opts[@]}" -s --no-install-recommends install $roots 2>&1) ||
		die "apt cannot resolve $roots for arm64: $(tail -n3 <<<"$plan")"
	sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1 \2/p' <<<"$plan" | LC_ALL=C sort
}

# --- inputs and their hash -------------------------------------------------------------
input_lines() {
	local f line
	echo "bootrig qemu-arm64-systemd inputs 1"
	while read -r f; do
		[[ -f $hooks/$f ]] || die "input $hooks/$f is missing"
		printf '%s %s %s\n' "$f" "$([[ -x $hooks/$f ]] && echo x || echo -)" \
			"$(sha256sum <"$hooks/$f" | cut -d' ' -f1)"
	done < <(cd "$hooks" && {
		echo qemu-arm64/build-systemd.sh
		echo qemu-arm64/arm64-apt.sh
		echo userspace/ui-ready.c
		find qemu-arm64/systemd -type f
	} | LC_ALL=C sort)
	echo "kernel:arm64 $kernel"
	while read -r line; do
		echo "userspace:arm64 $line"
	done <<<"$userspace"
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
userspace=$(noted systemd-closure closure)
[[ $userspace == *"systemd "* ]] || die "the closure of $roots has no systemd"
hash=$(input_lines | sha256sum | cut -c1-16)

# --- build ---------------------------------------------------------------------------------
begin_build # --dir answers here; otherwise the lock is held and $tmp is empty

# The cached .deb of "package version", or nothing.
cached_deb() {
	local pkg=$1 ver=$2 d
	for d in "$debs/${pkg}"_*.deb; do
		[[ -f $d && $(dpkg-deb -f "$d" Package) == "$pkg" && $(dpkg-deb -f "$d" Version) == "$ver" ]] &&
			echo "$d" && return 0
	done
	return 1
}

# The .debs of "package version" lines (stdin), from the shared cache or downloaded in one
# apt-get call (and kept there); prints their paths.
fetch_debs() {
	local pkg ver d want=() paths=()
	while read -r pkg ver; do
		if d=$(cached_deb "$pkg" "$ver"); then
			paths+=("$d")
		else
			want+=("$pkg:arm64=$ver")
		fi
	done
	if ((${#want[@]})); then
		log "downloading ${#want[@]} arm64 packages"
		mkdir -p "$tmp/dl"
		(cd "$tmp/dl" && apt-get "${apt_opts[@]}" -qq download "${want[@]}") >&2 ||
			die "could not download ${want[*]}; try --update"
		for d in "$tmp/dl"/*.deb; do
			mv "$d" "$debs/" && paths+=("$debs/$(basename "$d")")
		done
	fi
	printf '%s\n' "${paths[@]}"
}

td=$SECONDS
kdeb=$(fetch_debs <<<"$kernel")
mapfile -t udebs < <(fetch_debs <<<"$userspace")
download_seconds=$((SECONDS - td))
(($(wc -l <<<"$userspace") == ${#udebs[@]})) || die "got ${#udebs[@]} .debs for $(wc -l <<<"$userspace") packages"
[[ $(dpkg-deb -f "$kdeb" Architecture) == arm64 ]] || die "$kdeb is not arm64"

# The kernel as Debian ships it: /boot/vmlinuz-<release> and its config (not the modules:
# the initramfs needs none, GPIO_PL061 and the PL011 console are built in).
kver=${kernel%% *}
kver=${kver#linux-image-}
kx() { dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$tmp/kernel" "./boot/vmlinuz-$kver" "./boot/config-$kver"; }
mkdir -p "$tmp/kernel"
step "unpacking vmlinuz-$kver from $(basename "$kdeb")" kx
# The second line: what systemd 252's README lists as required that a module could provide.
for opt in CONFIG_GPIO_PL061=y CONFIG_GPIO_CDEV=y CONFIG_BLK_DEV_INITRD=y CONFIG_RD_GZIP=y \
	CONFIG_SERIAL_AMBA_PL011_CONSOLE=y CONFIG_DEVTMPFS=y CONFIG_TMPFS=y \
	CONFIG_CGROUPS=y CONFIG_FHANDLE=y CONFIG_INOTIFY_USER=y CONFIG_SIGNALFD=y CONFIG_UNIX=y; do
	grep -qxF "$opt" "$tmp/kernel/boot/config-$kver" || die "Debian's $kver lacks $opt"
done
cp "$tmp/kernel/boot/vmlinuz-$kver" "$tmp/Image"
cp "$tmp/kernel/boot/config-$kver" "$tmp/kernel.config"

# The initramfs: every package of the closure unpacked as dpkg would (no maintainer
# scripts run: what they would do that systemd needs is done below), merged /usr as
# Debian 12 installs it.
ird=$tmp/initramfs
mkdir -p "$ird"
unpack_all() {
	local d
	for d in "${udebs[@]}"; do
		dpkg-deb -x "$d" "$ird" || return 1
	done
}
step "unpacking ${#udebs[@]} packages (systemd and its dependencies)" unpack_all
merge_usr() {
	local d
	for d in bin sbin lib; do
		[[ -e $ird/$d && ! -L $ird/$d ]] || continue
		mkdir -p "$ird/usr/$d"
		cp -a "$ird/$d/." "$ird/usr/$d/" && rm -rf "${ird:?}/$d" || return 1
		ln -s "usr/$d" "$ird/$d"
	done
}
step "merging /usr" merge_usr
for p in $prune; do
	rm -rf "${ird:?}/$p"
done
mkdir -p "$ird"/{dev,proc,sys,run,tmp,root,etc/systemd/system/multi-user.target.wants}
# base-passwd's postinst would copy these; systemd resolves users and groups through them.
cp "$ird/usr/share/base-passwd/passwd.master" "$ird/etc/passwd"
cp "$ird/usr/share/base-passwd/group.master" "$ird/etc/group"
# A fixed machine id: an empty one makes every boot systemd's "first boot" (presets,
# systemd-firstboot), which is not what a deployed device does on each power-on.
printf 'b0071600b0071600b0071600b0071600\n' >"$ird/etc/machine-id"
# What base-files' postinst does on Debian: /var/run and /var/lock live in /run.
rm -rf "${ird:?}/var/run" "${ird:?}/var/lock"
ln -s ../run "$ird/var/run"
ln -s ../run/lock "$ird/var/lock"
# Debian's systemd-sysv would make /sbin/init; the kernel runs /init from an initramfs.
ln -s lib/systemd/systemd "$ird/init"
[[ -x $ird/usr/lib/systemd/systemd ]] || die "the closure left no /lib/systemd/systemd"
step "building ui-ready (static arm64)" "${cross}gcc" -O2 -Wall -Wextra -Werror -static \
	-o "$ird/usr/bin/ui-ready" "$hooks/userspace/ui-ready.c"
"${cross}strip" "$ird/usr/bin/ui-ready"
cp "$here/systemd/ui-ready.service" "$ird/etc/systemd/system/"
ln -s ../ui-ready.service "$ird/etc/systemd/system/multi-user.target.wants/ui-ready.service"
# Masked units and generators (systemd/masked-units: one per line, why in a comment
# before it): a link to /dev/null in /etc masks a unit (systemctl mask) or a generator
# (systemd.generator(7)) of the same name.
mkdir -p "$ird/etc/systemd/system-generators"
while read -r unit; do
	case $unit in
	'') ;;
	*-generator) ln -s /dev/null "$ird/etc/systemd/system-generators/$unit" ;;
	*) ln -s /dev/null "$ird/etc/systemd/system/$unit" ;;
	esac
done < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/systemd/masked-units")
mkcpio() { (cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -6n >"$tmp/initrd.img"); }
step "making initrd.img (newc cpio, gzip)" mkcpio
unpacked_kib=$(du -sk "$ird" | cut -f1)

# The disk U-Boot reads the kernel and the initramfs from (the kernel never mounts it).
disk=$tmp/disk
mkdir -p "$disk/boot"
cp "$tmp/Image" "$disk/boot/vmlinuz"
cp "$tmp/initrd.img" "$disk/boot/initrd.img"
step "making rootfs.img (ext4, ${rootfs_mib} MiB, /boot only)" mke2fs -q -F -t ext4 \
	-L bootrig-boot -E root_owner=0:0 -d "$disk" "$tmp/rootfs.img" "${rootfs_mib}M"
cp "$here/systemd/u-boot-env.txt" "$tmp/u-boot-env.txt"
step "making flash1.img" mkenvimage -s 0x40000 -o "$tmp/flash1.img" "$tmp/u-boot-env.txt"
truncate -s 64M "$tmp/flash1.img"

rm -rf "$tmp/kernel" "$tmp/initramfs" "$tmp/disk" "$tmp/dl"
build_seconds=$((SECONDS - t0))
packages=$(while read -r pkg ver; do printf '    "%s:arm64": "%s",\n' "$pkg" "$ver"; done <<<"$kernel
$userspace")
cat >"$tmp/manifest.json" <<EOF
{
  "schema": "bootrig.qemu-image/1",
  "target": "qemu-arm64-systemd",
  "hash": "$hash",
  "kernel_release": "$kver",
  "build_seconds": $build_seconds,
  "download_seconds": $download_seconds,
  "initramfs_unpacked_kib": $unpacked_kib,
  "built_utc": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "packages": {
$packages
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
