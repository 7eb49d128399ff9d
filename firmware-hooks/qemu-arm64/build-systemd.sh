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

target=qemu-arm64-systemd
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
# The userspace: systemd and its Depends/Pre-Depends closure (no Recommends: no udev, no
# dbus), base-files for /etc/os-release and base-passwd for /etc/passwd and /etc/group.
roots="systemd base-files base-passwd"
rootfs_mib=128
# Never used on this board, and unpacking them costs TCG time: man pages, translations,
# docs, and glibc's iconv modules (19 MB; nothing here converts character sets).
prune="usr/share/doc usr/share/man usr/share/info usr/share/locale usr/share/lintian
usr/share/bug usr/share/zsh usr/share/bash-completion usr/lib/aarch64-linux-gnu/gconv"

parse_args "$@"

# "package version" per line: the roots and everything they depend on, as apt resolves it
# against the private state's empty dpkg status (so nothing counts as installed).
closure() {
	local plan
	# shellcheck disable=SC2086 # $roots is a list of package names
	plan=$(apt-get "${apt_opts[@]}" -s --no-install-recommends install $roots 2>&1) ||
		die "apt cannot resolve $roots for arm64: $(tail -n3 <<<"$plan")"
	sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1 \2/p' <<<"$plan" | LC_ALL=C sort
}

toolchain_and_lists
kernel=$(noted stock-kernel kernel_pkg)
userspace=$(noted systemd-closure closure)
[[ $userspace == *"systemd "* ]] || die "the closure of $roots has no systemd"
packages=$(as_arch <<<"$kernel
$userspace")
input_files() { find qemu-arm64/systemd -type f; }

# --- build ---------------------------------------------------------------------------------
begin_build cpio:cpio gzip:gzip # --dir answers here; otherwise the lock is held and $tmp is empty

td=$SECONDS
kdeb=$(fetch_debs <<<"$kernel")
udeb_list=$(fetch_debs <<<"$userspace")
mapfile -t udebs <<<"$udeb_list"
download_seconds=$((SECONDS - td))

# The second line: what systemd 252's README lists as required that a module could provide.
debian_kernel "$kdeb" CONFIG_GPIO_PL061=y CONFIG_GPIO_CDEV=y CONFIG_BLK_DEV_INITRD=y \
	CONFIG_RD_GZIP=y CONFIG_SERIAL_AMBA_PL011_CONSOLE=y CONFIG_DEVTMPFS=y CONFIG_TMPFS=y \
	CONFIG_CGROUPS=y CONFIG_FHANDLE=y CONFIG_INOTIFY_USER=y CONFIG_SIGNALFD=y CONFIG_UNIX=y

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
build_ui_ready "$ird"
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
make_initrd "$ird" 6
unpacked_kib=$(du -sk "$ird" | cut -f1)
make_boot_disk "$rootfs_mib"
make_flash "$here/systemd/u-boot-env.txt"

files=(Image initrd.img rootfs.img flash1.img u-boot-env.txt kernel.config build.log)
finish_build "$kver" "downloads ${download_seconds} s" download_seconds="$download_seconds" \
	initramfs_unpacked_kib="$unpacked_kib"
