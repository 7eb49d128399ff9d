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
# Exit codes: 0 ok, 1 not built (--dir), 2 error, 3 arm64 package lists unavailable.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hooks=$(dirname "$here")
cache_root=${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}
out_root=$cache_root/qemu-arm64
apt_dir=${BOOTRIG_APT_DIR:-$cache_root/apt-arm64}
ksrc_tarball=/usr/src/linux-source-6.1.tar.xz
cross=aarch64-linux-gnu-
kmake=(make ARCH=arm64 CROSS_COMPILE="$cross" KBUILD_BUILD_USER=bootrig KBUILD_BUILD_HOST=bootrig)
rootfs_mib=64
# busybox applets linked in the root filesystem (the rest run as `busybox NAME`)
applets="sh ash cat cp date dd dmesg echo false grep head kill ln ls md5sum mkdir mount
mv ps rm sed seq sha256sum sleep sync tail true umount uname wc"

log() { echo "build.sh: $*" >&2; }
die() {
	echo "build.sh: error: $*" >&2
	exit 2
}

usage() {
	sed -n '2,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

mode=build
update=0
for arg in "$@"; do
	case $arg in
	--dir) mode=dir ;;
	--update) update=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$arg' (try --help)" ;;
	esac
done

# Report every missing Debian package at once, naming the package.
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

# --- the private arm64 apt state: lists only, the machine's dpkg is not touched -----
apt_opts=(
	-o "APT::Architecture=arm64" -o "APT::Architectures=arm64"
	-o "Dir::State=$apt_dir/state" -o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::State::status=$apt_dir/status" -o "Dir::Cache=$apt_dir/cache"
	-o "Debug::NoLocking=false" -o "APT::Get::List-Cleanup=true"
)
((EUID == 0)) && apt_opts+=(-o "APT::Sandbox::User=root")

apt_lists_present() {
	compgen -G "$apt_dir/lists/*binary-arm64_Packages*" >/dev/null
}

apt_update() {
	log "fetching the Debian arm64 package lists into $apt_dir"
	mkdir -p "$apt_dir/state" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	touch "$apt_dir/status"
	rm -f "$apt_dir/busybox-static.version"
	if ! apt-get "${apt_opts[@]}" -qq update >&2 || ! apt_lists_present; then
		echo "build.sh: error: could not fetch the Debian arm64 package lists" \
			"(apt sources: /etc/apt/sources.list{,.d})" >&2
		exit 3
	fi
}

# The version apt would download, noted once per list update (apt-cache takes seconds).
busybox_version() {
	local v note=$apt_dir/busybox-static.version
	if [[ ! -s $note || $note -ot $apt_dir/lists ]]; then
		v=$(apt-cache "${apt_opts[@]}" policy busybox-static 2>/dev/null |
			sed -n 's/^ *Candidate: //p')
		[[ -n $v && $v != "(none)" ]] ||
			die "no arm64 busybox-static in the Debian package lists ($apt_dir); try --update"
		echo "$v" >"$note.tmp" && mv "$note.tmp" "$note"
	fi
	cat "$note"
}

# --- inputs and their hash -------------------------------------------------------------
input_files() {
	(
		cd "$hooks"
		shopt -s nullglob
		printf '%s\n' linux/*.patch qemu-arm64/build.sh qemu-arm64/kernel.config \
			qemu-arm64/u-boot-env.txt userspace/ui-ready.c
		find qemu-arm64/rootfs -type f | LC_ALL=C sort
	)
}

# One line per input: the path relative to firmware-hooks/, executable bit, content hash;
# then the Debian packages the outputs are made from.
input_lines() {
	local f
	echo "bootrig qemu-arm64 inputs 1"
	while read -r f; do
		[[ -f $hooks/$f ]] || die "input $hooks/$f is missing"
		printf '%s %s %s\n' "$f" "$([[ -x $hooks/$f ]] && echo x || echo -)" \
			"$(sha256sum <"$hooks/$f" | cut -d' ' -f1)"
	done < <(input_files | LC_ALL=C sort)
	echo "linux-source-6.1 $ksrc_version"
	echo "busybox-static:arm64 $bb_version"
	echo "cross-gcc $gcc_version"
	echo "libc6-dev-arm64-cross $libc_version"
}

require dpkg-query:dpkg apt-get:apt sha256sum:coreutils \
	"$ksrc_tarball:linux-source-6.1" "${cross}gcc:gcc-aarch64-linux-gnu" \
	"/usr/aarch64-linux-gnu/lib/libc.a:libc6-dev-arm64-cross"
compgen -G "$hooks/linux/*.patch" >/dev/null || die "no patches in $hooks/linux"
ksrc_version=$(pkg_version linux-source-6.1)
gcc_version=$("${cross}gcc" --version | head -n1)
libc_version=$(pkg_version libc6-dev-arm64-cross)
if ((update)) || ! apt_lists_present; then
	apt_update
fi
bb_version=$(busybox_version)
hash=$(input_lines | sha256sum | cut -c1-16)
out=$out_root/$hash

if [[ $mode == dir ]]; then
	echo "$out"
	[[ -f $out/manifest.json ]] && exit 0
	exit 1
fi

# --- build ---------------------------------------------------------------------------------
require make:make gcc:gcc bc:bc bison:bison flex:flex perl:perl patch:patch xz:xz-utils \
	flock:util-linux dpkg-deb:dpkg mke2fs:e2fsprogs mkenvimage:u-boot-tools \
	"/usr/aarch64-linux-gnu/include/linux/gpio.h:linux-libc-dev-arm64-cross"

mkdir -p "$out_root"
exec {lock}>"$out_root/.lock"
flock "$lock" # one build at a time per cache; a waiting build may find its work done
if [[ -f $out/manifest.json ]]; then
	echo "$out"
	exit 0
fi

# Holding the lock, any other temporary build directory is a killed build's leftover.
rm -rf "$out_root"/.build-*
t0=$SECONDS
tmp=$(mktemp -d "$out_root/.build-$hash.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
buildlog=$tmp/build.log
: >"$buildlog"

# Run a step with its output in build.log; on failure show the log's tail and stop.
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

# The kernel: allnoconfig + kernel.config, every requested option checked.
src=$tmp/src/linux-source-6.1
mkdir -p "$tmp/src"
step "extracting $ksrc_tarball" tar -xJf "$ksrc_tarball" -C "$tmp/src"
[[ -d $src ]] || die "$ksrc_tarball has no linux-source-6.1/ directory"
while read -r f; do
	[[ $f == linux/* ]] || continue
	step "applying $f" patch -d "$src" -p1 --batch --forward -i "$hooks/$f"
done < <(input_files | LC_ALL=C sort)

merge_config() (
	cd "$src" &&
		ARCH=arm64 CROSS_COMPILE=$cross scripts/kconfig/merge_config.sh -n "$here/kernel.config"
)
step "configuring the kernel (allnoconfig + kernel.config)" merge_config

check_config() {
	local line sym bad=()
	while read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)= ]]; then
			grep -qxF -- "$line" "$src/.config" || bad+=("$line")
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym=${BASH_REMATCH[1]}
			if grep -q "^$sym=" "$src/.config"; then bad+=("$line"); fi
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
	"${kmake[@]}" -C "$src" -j"$(nproc)" Image
kernel_seconds=$((SECONDS - tk))
kernel_release=$("${kmake[@]}" -s -C "$src" kernelrelease)
cp "$src/arch/arm64/boot/Image" "$tmp/Image"
cp "$src/scripts/bootgraph.pl" "$tmp/bootgraph.pl"
cp "$src/.config" "$tmp/kernel.config"

# busybox-static for arm64, the exact version hashed above, kept in the cache.
debs=$cache_root/debs
mkdir -p "$debs"
deb=$(compgen -G "$debs/busybox-static_*_arm64.deb" | while read -r d; do
	[[ $(dpkg-deb -f "$d" Version) == "$bb_version" ]] && echo "$d"
done | head -n1 || true)
if [[ -z $deb ]]; then
	dl=$tmp/dl
	mkdir -p "$dl"
	log "downloading busybox-static:arm64 $bb_version"
	(cd "$dl" && apt-get "${apt_opts[@]}" -qq download "busybox-static:arm64=$bb_version") >&2 ||
		die "could not download busybox-static:arm64 $bb_version; try --update"
	deb=$(compgen -G "$dl/busybox-static_*_arm64.deb" | head -n1) ||
		die "apt-get download left no busybox-static .deb"
	mv "$deb" "$debs/" && deb=$debs/$(basename "$deb")
fi
[[ $(dpkg-deb -f "$deb" Package Architecture Version | tr '\n' ' ') == \
"Package: busybox-static Architecture: arm64 Version: $bb_version " ]] ||
	die "$deb is not busybox-static arm64 $bb_version"

# The root filesystem: busybox, the init script, ui-ready and the kernel for U-Boot.
root=$tmp/rootfs
mkdir -p "$root"/{bin,sbin,usr/bin,dev,proc,sys,tmp,boot,root,etc}
step "unpacking busybox-static" dpkg-deb -x "$deb" "$tmp/busybox"
cp "$tmp/busybox/bin/busybox" "$root/bin/busybox"
for a in $applets; do
	ln -s busybox "$root/bin/$a"
done
step "building ui-ready (static arm64)" "${cross}gcc" -O2 -Wall -Wextra -Werror -static \
	-o "$root/usr/bin/ui-ready" "$hooks/userspace/ui-ready.c"
"${cross}strip" "$root/usr/bin/ui-ready"
cp -R --preserve=mode "$here/rootfs/." "$root/"
cp "$tmp/Image" "$root/boot/Image"
step "making rootfs.img (ext4, ${rootfs_mib} MiB)" mke2fs -q -F -t ext4 -L bootrig-root \
	-E root_owner=0:0 -d "$root" "$tmp/rootfs.img" "${rootfs_mib}M"

# U-Boot's environment, as the pflash image QEMU maps at flash 1.
cp "$here/u-boot-env.txt" "$tmp/u-boot-env.txt"
step "making flash1.img" mkenvimage -s 0x40000 -o "$tmp/flash1.img" "$here/u-boot-env.txt"
truncate -s 64M "$tmp/flash1.img"

rm -rf "$tmp/src" "$tmp/busybox" "$tmp/rootfs" "$tmp/dl"
build_seconds=$((SECONDS - t0))
cat >"$tmp/manifest.json" <<EOF
{
  "schema": "bootrig.qemu-image/1",
  "target": "qemu-arm64",
  "hash": "$hash",
  "kernel_release": "$kernel_release",
  "build_seconds": $build_seconds,
  "kernel_build_seconds": $kernel_seconds,
  "built_utc": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "packages": {
    "linux-source-6.1": "$ksrc_version",
    "busybox-static:arm64": "$bb_version",
    "libc6-dev-arm64-cross": "$libc_version",
    "cross-gcc": "${gcc_version//\"/\\\"}"
  },
  "files": ["Image", "rootfs.img", "flash1.img", "u-boot-env.txt", "bootgraph.pl",
            "kernel.config", "build.log"]
}
EOF
chmod 755 "$tmp"
chmod 644 "$tmp"/*
chmod 755 "$tmp/bootgraph.pl"
mv "$tmp" "$out"
trap - EXIT
log "built in ${build_seconds} s (kernel ${kernel_seconds} s): $out"
echo "$out"
