#!/usr/bin/env bash
# Make the git repository `rig bisect` is tested on with the QEMU target (docs/bisect.md):
# linux-source-6.1 with firmware-hooks/linux as its first commit, then eight small
# commits, one adding 30 ms to an initcall (ext4_init_fs), an earlier one 0.3 ms (to
# virtio_mmio_init: below what the bisect's boots detect), the others comments and docs.
#
#   bisect-repo.sh        make it if needed; the output folder is the last line
#   bisect-repo.sh --dir  print the output folder; exit 0 if made, 1 if not
#
# Output: <cache>/qemu-arm64-bisect/<key>/, <key> a hash of this script and of the
# QEMU images' hash (build.sh --dir, which must be built: make qemu-images), with
#   repo/           the repository (branch main; its commits are the same on every machine)
#   kbuild/         a checkout of its own for bisect-build.sh, objects in kbuild/build/ (O=)
#   images/         rootfs.img and u-boot-env.txt of the QEMU images, for bisect-build.sh
#   manifest.json   the commits (id, subject, delay_us), good, bad, the culprit, timings
# The kernel objects start from the ones build.sh keeps (<cache>/qemu-arm64-kbuild/<hash>),
# so only what the hooks touch is compiled again; without them it is a cold build.
# Only the latest folder is kept. Exit codes: 0 ok, 1 not made (--dir), 2 error.
set -euo pipefail

prog=$(basename "$0")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hooks=$(dirname "$here")
cache_root=${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}
out_root=$cache_root/qemu-arm64-bisect
ksrc_tarball=/usr/src/linux-source-6.1.tar.xz
cross=aarch64-linux-gnu-
kmake=(make ARCH=arm64 CROSS_COMPILE="$cross" KBUILD_BUILD_USER=bootrig KBUILD_BUILD_HOST=bootrig)

log() { echo "$prog: $*" >&2; }
die() {
	echo "$prog: error: $*" >&2
	exit 2
}

mode=build
for arg in "$@"; do
	case $arg in
	--dir) mode=dir ;;
	-h | --help)
		awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"
		exit 0
		;;
	*) die "unknown argument '$arg' (try --help)" ;;
	esac
done

images=$(bash "$here/build.sh" --dir) ||
	die "the QEMU images are not built ($images): run make qemu-images first"
hash=$(basename "$images")
key=$({
	echo "bootrig qemu-arm64-bisect 1"
	echo "images $hash"
	sha256sum <"$0"
} | sha256sum | cut -c1-16)
out=$out_root/$key
if [[ $mode == dir ]]; then
	echo "$out"
	[[ -f $out/manifest.json ]] && exit 0
	exit 1
fi

for tool in git make patch debugfs flock "${cross}gcc"; do
	command -v "$tool" >/dev/null || die "$tool is missing (make qemu-images installs what is needed)"
done
mkdir -p "$out_root"
exec {lock}>"$out_root/.lock"
flock "$lock"
if [[ -f $out/manifest.json ]]; then
	echo "$out"
	exit 0
fi
rm -rf "$out_root"/.build-*
t0=$SECONDS
tmp=$(mktemp -d "$out_root/.build-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
buildlog=$tmp/build.log

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

# --- the source, as build.sh makes it, and its objects ----------------------------------
# tar keeps the files' times, so the objects build.sh kept are newer than all but the
# files the patches change: make compiles those again, nothing else.
kb=$tmp/kbuild
step "extracting $ksrc_tarball" tar -xJf "$ksrc_tarball" -C "$tmp"
mv "$tmp/linux-source-6.1" "$kb"
for p in $(cd "$hooks" && printf '%s\n' linux/*.patch | LC_ALL=C sort); do
	step "applying $p" patch -d "$kb" -p1 --batch --forward -i "$hooks/$p"
done
kept=$cache_root/qemu-arm64-kbuild/$hash
from_kept=false
copy_kept() {
	# build.sh replaces its kept tree under its own lock
	exec {blk}>"$cache_root/qemu-arm64/.lock"
	flock "$blk"
	[[ -f $kept/.config ]] && cp -a "$kept" "$kb/build"
	exec {blk}>&-
}
copy_kept
if [[ -d $kb/build ]]; then
	from_kept=true
else
	log "no kernel objects kept for images $hash: a cold build"
	merge() (mkdir -p "$kb/build" && cd "$kb" &&
		ARCH=arm64 CROSS_COMPILE=$cross scripts/kconfig/merge_config.sh -n -O build "$here/kernel.config")
	step "configuring the kernel (allnoconfig + kernel.config)" merge
fi
tk=$SECONDS
step "building the kernel Image (make O=build Image)" "${kmake[@]}" -C "$kb" O=build -j"$(nproc)" Image
base_build_seconds=$((SECONDS - tk))

# --- the repository ----------------------------------------------------------------------
repo=$tmp/repo
n=0
commit() { # commit SUBJECT DELAY_US: everything changed in repo/, dated for stable ids
	n=$((n + 1))
	local date
	date=$(printf '2024-01-%02dT12:00:00Z' "$n")
	git -C "$repo" add -A -f
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date git -C "$repo" commit -q -m "$1"
	printf '%s\t%s\t%s\n' "$(git -C "$repo" rev-parse HEAD)" "$2" "$1" >>"$tmp/commits.tsv"
}
# edit FILE PERL: a perl -0pi substitution that must change FILE
edit() {
	local f=$repo/$1
	cp "$f" "$tmp/before"
	perl -0pi -e "$2" "$f"
	! cmp -s "$f" "$tmp/before" || die "the series' edit of $1 changed nothing"
}

git init -q -b main "$repo"
git -C "$repo" config user.name "bootrig bisect fixture"
git -C "$repo" config user.email "bisect@bootrig.invalid"
git -C "$repo" config core.autocrlf false
# no automatic gc: it would pack the 75,000 objects in the background after a commit,
# holding this script's lock (an inherited descriptor) for a minute after it ended
git -C "$repo" config gc.auto 0
step "committing the source (git add)" git --git-dir="$repo/.git" --work-tree="$kb" add -A -f -- . ':(exclude)build'
n=1
GIT_AUTHOR_DATE=2024-01-01T12:00:00Z GIT_COMMITTER_DATE=2024-01-01T12:00:00Z \
	git -C "$repo" commit -q -m "linux-source-6.1 with the bootrig hooks (firmware-hooks/linux)"
printf '%s\t0\t%s\n' "$(git -C "$repo" rev-parse HEAD)" "$(git -C "$repo" log -1 --format=%s)" >"$tmp/commits.tsv"
step "checking out the repository" git -C "$repo" reset -q --hard

log "committing the series"
printf '\nBoot markers\n------------\n\n  The bootrig hooks raise a GPIO line at each boot stage they mark.\n' \
	>>"$repo/Documentation/admin-guide/README.rst"
commit "Documentation: say where the bootrig markers are" 0
edit drivers/virtio/virtio_mmio.c 's|(#include <linux/dma-mapping.h>\n)|#include <linux/delay.h>\n$1|;
	s|(virtio_mmio_init\(void\)\n\{\n)|$1\t/* let the transport settle before the first probe */\n\tudelay(300);\n|'
commit "virtio_mmio: let the transport settle 0.3 ms before registering" 300
edit drivers/gpio/gpio-pl061.c 's|\n(static int pl061_probe\()|\n/* Line 3 of the virt board is its power button: the bootrig markers skip it. */\n$1|'
commit "gpio: pl061: say which line the power button is" 0
printf '\nThe bootrig markers: see Documentation/admin-guide/README.rst.\n' >>"$repo/README"
commit "README: point to the boot markers" 0
edit fs/ext4/super.c 's|(#include <linux/module.h>\n)|$1#include <linux/delay.h>\n|;
	s|(\text4_check_flag_values\(\);\n)|$1\n\t/* give a slow journal device time to come up */\n\tmdelay(30);\n|'
commit "ext4: wait 30 ms for a slow journal device at init" 30000
edit init/main.c 's|(\n\tbootrig_marker\(BOOTRIG_KERNEL_INIT\);)|\n\t/* the root is mounted and the sysctls are set: init runs next */$1|'
commit "init: say what the kernel_init marker follows" 0
edit drivers/tty/serial/amba-pl011.c 's|(pl011_init\(void\)\n\{\n)|$1\t/* the console registers with the first port it probes */\n|'
commit "serial: amba-pl011: say when the console registers" 0
printf '\n  Each marker is one GPIO edge; the rig times the stages between them.\n' \
	>>"$repo/Documentation/admin-guide/README.rst"
commit "Documentation: the markers are GPIO edges" 0

# --- the build checkout: kbuild/ made a checkout of the first commit in place -------------
# (reset --mixed writes no file: the sources keep their times and the objects stay valid;
# the objects come from the repository through a relative alternate)
base=$(head -n1 "$tmp/commits.tsv" | cut -f1)
git init -q "$kb"
git -C "$kb" config gc.auto 0
echo "../../../repo/.git/objects" >"$kb/.git/objects/info/alternates"
echo "/build/" >>"$kb/.git/info/exclude"
git -C "$kb" update-ref HEAD "$base"
step "indexing the build checkout" git -C "$kb" reset -q --mixed "$base"
git -C "$kb" update-index -q --refresh >/dev/null || true
[[ -z $(git -C "$kb" status --porcelain) ]] || die "the build checkout differs from the first commit"
git -C "$kb" checkout -q --detach "$base"

mkdir -p "$tmp/images"
cp --sparse=always "$images/rootfs.img" "$tmp/images/rootfs.img"
cp "$images/u-boot-env.txt" "$tmp/images/u-boot-env.txt"

json_string() {
	local s=${1//\\/\\\\}
	printf '"%s"' "${s//\"/\\\"}"
}
{
	echo "{"
	echo '  "schema": "bootrig.bisect-repo/1",'
	echo "  \"images\": \"$hash\","
	echo "  \"from_kept_objects\": $from_kept,"
	echo "  \"base_build_seconds\": $base_build_seconds,"
	echo "  \"build_seconds\": $((SECONDS - t0)),"
	echo "  \"good\": \"$base\","
	echo "  \"bad\": \"$(git -C "$repo" rev-parse HEAD)\","
	echo '  "commits": ['
	sep=""
	while IFS=$'\t' read -r id delay subject; do
		printf '%s    {"commit": "%s", "delay_us": %s, "subject": %s}' "$sep" "$id" "$delay" "$(json_string "$subject")"
		sep=$',\n'
	done <"$tmp/commits.tsv"
	echo
	echo "  ]"
	echo "}"
} >"$tmp/manifest.json"
rm -f "$tmp/commits.tsv" "$tmp/before"
find "$out_root" -mindepth 1 -maxdepth 1 -type d ! -name ".build-*" -exec rm -rf {} +
mv "$tmp" "$out"
trap - EXIT
log "made in $((SECONDS - t0)) s (kernel ${base_build_seconds} s, objects kept by build.sh: $from_kept): $out"
echo "$out"
