# What build.sh, build-stock.sh and build-systemd.sh share (sourced, not run): messages,
# package checks, the --dir/--update/--help arguments, the cache and output layout, the
# hash of the inputs, the locked build folder and its steps, the pieces every image is
# made of (ui-ready, busybox, Debian's kernel, the initramfs, the boot disk, U-Boot's
# environment flash) and the final manifest.json and move into place. It sources
# cross-apt.sh (the private apt state of the target's architecture and the .deb cache).
# Both files are inputs of every script's hash (input_lines).
#
# The sourcing script sets `target` (the output folder's name under the cache, also the
# manifest's "target") and, for another architecture than arm64, `deb_arch` first, then
# calls parse_args "$@", toolchain_and_lists, sets `packages` and defines input_files,
# then begin_build ... finish_build. The script may live in another folder of
# firmware-hooks/ than this file.
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables set here are read by the sourcing script
: "${target:?}" # set by the sourcing script
deb_arch=${deb_arch:-arm64}

prog=$(basename "${BASH_SOURCE[1]}")
script=${BASH_SOURCE[1]}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hooks=$(dirname "$here")
# the script and this file as input_lines names them: relative to firmware-hooks/
script_rel=$(cd "$(dirname "$script")" && pwd)
script_rel=${script_rel#"$hooks"/}/$prog
here_rel=${here#"$hooks"/}
cache_root=${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}
out_root=$cache_root/$target
apt_dir=${BOOTRIG_APT_DIR:-$cache_root/apt-$deb_arch}
debs=$cache_root/debs
# Debian names its cross toolchain packages and folders after the GNU triplet.
case $deb_arch in
arm64) triplet=aarch64-linux-gnu ;;
armhf) triplet=arm-linux-gnueabihf ;;
*)
	echo "$prog: error: deb_arch '$deb_arch': expected arm64 or armhf" >&2
	exit 2
	;;
esac
cross=$triplet-
libc_dev=libc6-dev-$deb_arch-cross
executables=() # files of the output folder that stay executable (finish_build)

log() { echo "$prog: $*" >&2; }
die() {
	echo "$prog: error: $*" >&2
	exit 2
}

# Report every missing Debian package at once, naming the package. Arguments: `command:pkg`
# or `/absolute/path:pkg`.
require() {
	local missing=() item what pkg
	for item in "$@"; do
		what=${item%%:*}
		pkg=${item#*:}
		if [[ $what == /* ]]; then
			[[ -e $what ]] || missing+=("$pkg")
		else
			command -v "$what" >/dev/null || missing+=("$pkg")
		fi
	done
	if ((${#missing[@]})); then
		die "missing Debian packages: ${missing[*]} (install: apt-get install ${missing[*]})"
	fi
}

pkg_version() {
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null || die "Debian package $1 is not installed"
}

# shellcheck source=cross-apt.sh
source "$here/cross-apt.sh"

# Sets mode (build or dir) and update (0 or 1); --help prints the script's header comment.
parse_args() {
	local arg
	mode=build
	update=0
	for arg in "$@"; do
		case $arg in
		--dir) mode=dir ;;
		--update) update=1 ;;
		-h | --help)
			awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$script"
			exit 0
			;;
		*) die "unknown argument '$arg' (try --help)" ;;
		esac
	done
}

# What every build needs before it can name its output: the cross toolchain (its
# versions are inputs), the given further requirements, and the package lists of deb_arch.
toolchain_and_lists() {
	require dpkg-query:dpkg apt-get:apt sha256sum:coreutils "$@" \
		"${cross}gcc:gcc-$triplet" "/usr/$triplet/lib/libc.a:$libc_dev"
	gcc_version=$("${cross}gcc" --version | head -n1)
	libc_version=$(pkg_version "$libc_dev")
	if ((update)) || ! apt_lists_present; then
		apt_update
	fi
}

# --- inputs and their hash -------------------------------------------------------------
# One line per input file: the path relative to firmware-hooks/, executable bit, content
# hash; the files are the script, this file, cross-apt.sh, ui-ready.c and what the
# script's input_files prints. Then `packages` ("name version" lines, also the manifest's
# "packages") and the cross toolchain. Documentation is not an input.
input_lines() {
	local f
	echo "bootrig $target inputs 1"
	while read -r f; do
		[[ -f $hooks/$f ]] || die "input $hooks/$f is missing"
		printf '%s %s %s\n' "$f" "$([[ -x $hooks/$f ]] && echo x || echo -)" \
			"$(sha256sum <"$hooks/$f" | cut -d' ' -f1)"
	done < <(
		cd "$hooks" && {
			echo "$script_rel"
			printf '%s\n' "$here_rel"/{build-common.sh,cross-apt.sh}
			echo userspace/ui-ready.c
			input_files
		} | LC_ALL=C sort
	)
	echo "$packages"
	echo "cross-gcc $gcc_version"
	echo "$libc_dev $libc_version"
}

# --- the build folder ------------------------------------------------------------------
# `--dir`: print the output folder and exit 0 if it is built, 1 if not. Otherwise check
# the build's tools (the common ones and the arguments), take the cache's lock, exit if
# another build finished it meanwhile, and start an empty build folder. Sets hash, out,
# tmp, buildlog and t0.
begin_build() {
	hash=$(input_lines | sha256sum | cut -c1-16)
	out=$out_root/$hash
	if [[ $mode == dir ]]; then
		echo "$out"
		[[ -f $out/manifest.json ]] && exit 0
		exit 1
	fi
	require "$@" flock:util-linux dpkg-deb:dpkg mke2fs:e2fsprogs mkenvimage:u-boot-tools \
		"/usr/$triplet/include/linux/gpio.h:linux-libc-dev-$deb_arch-cross"
	mkdir -p "$out_root" "$debs"
	exec {lock}>"$out_root/.lock"
	flock "$lock" # one build at a time per cache; a waiting build may find its work done
	if [[ -f $out/manifest.json ]]; then
		echo "$out"
		exit 0
	fi
	# Holding the lock, any other temporary build folder is a killed build's leftover.
	rm -rf "$out_root"/.build-*
	t0=$SECONDS
	tmp=$(mktemp -d "$out_root/.build-$hash.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	buildlog=$tmp/build.log
	: >"$buildlog"
}

# Run a build step, its output in the build log; on failure show the log's end and keep
# it as failed-build.log.
step() {
	local what=$1
	shift
	log "$what"
	if ! "$@" >>"$buildlog" 2>&1; then
		tail -n 40 "$buildlog" >&2
		cp "$buildlog" "$out_root/failed-build.log"
		die "$what failed; full log: $out_root/failed-build.log"
	fi
}

# --- the pieces of the images ------------------------------------------------------------
# ui-ready, static for deb_arch, as ROOT/usr/bin/ui-ready.
build_ui_ready() {
	step "building ui-ready (static $deb_arch)" "${cross}gcc" -O2 -Wall -Wextra -Werror -static \
		-o "$1/usr/bin/ui-ready" "$hooks/userspace/ui-ready.c"
	"${cross}strip" "$1/usr/bin/ui-ready"
}

# busybox from the busybox-static .deb DEB as ROOT/bin/busybox, with the APPLETS
# (a space-separated list) linked to it.
install_busybox() {
	local deb=$1 root=$2 a
	step "unpacking busybox-static" dpkg-deb -x "$deb" "$tmp/busybox"
	cp "$tmp/busybox/bin/busybox" "$root/bin/busybox"
	for a in $3; do
		ln -s busybox "$root/bin/$a"
	done
}

# Debian's kernel as its .deb KDEB ships it, /boot/vmlinuz-<release> and its config, as
# $tmp/Image and $tmp/kernel.config (not the modules: the initramfs needs none, what the
# board needs is built in); dies unless each CONFIG_X=y argument is in its config. Sets
# kver (the release).
debian_kernel() {
	local kdeb=$1 opt
	shift
	kver=$(dpkg-deb -f "$kdeb" Package)
	kver=${kver#linux-image-}
	kx() { dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$tmp/kernel" "./boot/vmlinuz-$kver" "./boot/config-$kver"; }
	mkdir -p "$tmp/kernel"
	step "unpacking vmlinuz-$kver from $(basename "$kdeb")" kx
	for opt in "$@"; do
		grep -qxF "$opt" "$tmp/kernel/boot/config-$kver" || die "Debian's $kver lacks $opt"
	done
	cp "$tmp/kernel/boot/vmlinuz-$kver" "$tmp/Image"
	cp "$tmp/kernel/boot/config-$kver" "$tmp/kernel.config"
}

# The folder DIR as $tmp/initrd.img (newc cpio, owned by root, gzip -LEVEL).
make_initrd() {
	local dir=$1 level=$2
	mkcpio() { (cd "$dir" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip "-${level}n" >"$tmp/initrd.img"); }
	step "making initrd.img (newc cpio, gzip)" mkcpio
}

# The disk U-Boot reads the kernel and the initramfs from (the kernel never mounts it):
# $tmp/rootfs.img, ext4 of MIB MiB with /boot/vmlinuz and /boot/initrd.img.
make_boot_disk() {
	local disk=$tmp/disk
	mkdir -p "$disk/boot"
	cp "$tmp/Image" "$disk/boot/vmlinuz"
	cp "$tmp/initrd.img" "$disk/boot/initrd.img"
	step "making rootfs.img (ext4, $1 MiB, /boot only)" mke2fs -q -F -t ext4 \
		-L bootrig-boot -E root_owner=0:0 -d "$disk" "$tmp/rootfs.img" "$1M"
}

# U-Boot's environment ENV (a text file) as $tmp/u-boot-env.txt and as $tmp/flash1.img,
# the pflash image QEMU maps at flash 1.
make_flash() {
	cp "$1" "$tmp/u-boot-env.txt"
	step "making flash1.img" mkenvimage -s 0x40000 -o "$tmp/flash1.img" "$tmp/u-boot-env.txt"
	truncate -s 64M "$tmp/flash1.img"
}

# --- the end -----------------------------------------------------------------------------
json_string() {
	local s=${1//\\/\\\\}
	printf '"%s"' "${s//\"/\\\"}"
}

# Remove the build folder's scratch folders, write manifest.json, make the files readable
# (`executables` stay executable), move the folder to $out (a folder there with a
# manifest is a finished build) and print it. Arguments: the kernel release, a note for
# the "built in" message, then NAME=NUMBER fields for the manifest after build_seconds.
# The manifest's "packages" are `packages` and the cross toolchain; its "files" are
# `files`.
finish_build() {
	local release=$1 note=$2 field pkg ver f sep=
	shift 2
	find "$tmp" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
	build_seconds=$((SECONDS - t0))
	{
		echo "{"
		echo '  "schema": "bootrig.qemu-image/1",'
		echo "  \"target\": $(json_string "$target"),"
		echo "  \"hash\": \"$hash\","
		echo "  \"kernel_release\": $(json_string "$release"),"
		echo "  \"build_seconds\": $build_seconds,"
		for field in "$@"; do
			echo "  \"${field%%=*}\": ${field#*=},"
		done
		echo "  \"built_utc\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
		echo '  "packages": {'
		while read -r pkg ver; do
			echo "    $(json_string "$pkg"): $(json_string "$ver"),"
		done <<<"$packages"
		echo "    $(json_string "$libc_dev"): $(json_string "$libc_version"),"
		echo "    \"cross-gcc\": $(json_string "$gcc_version")"
		echo "  },"
		printf '  "files": ['
		for f in "${files[@]}"; do
			printf '%s%s' "$sep" "$(json_string "$f")"
			sep=", "
		done
		echo "]"
		echo "}"
	} >"$tmp/manifest.json"
	chmod 755 "$tmp"
	chmod 644 "$tmp"/*
	for f in "${executables[@]}"; do
		chmod 755 "$tmp/$f"
	done
	mv "$tmp" "$out"
	trap - EXIT
	log "built in ${build_seconds} s ($note): $out"
	echo "$out"
}
