#!/usr/bin/env bash
# The build command of `rig bisect` on the repository bisect-repo.sh makes: builds one
# commit's kernel and leaves what the QEMU target boots (Image, rootfs.img with that
# Image in /boot, u-boot-env.txt) in OUT, for `--set 'qemu.images="{out}"'`.
#
#   bisect-build.sh DIR WORKTREE COMMIT OUT
#
# DIR is bisect-repo.sh's folder; WORKTREE, COMMIT and OUT are rig bisect's {worktree},
# {commit} and {out}. The kernel is built in DIR/kbuild, a checkout of its own that stays
# between builds and bisects (objects in DIR/kbuild/build, make O=): checking COMMIT out
# there rewrites only the files it changes, so make compiles only those, where the
# bisect's fresh worktree would make every file new. A commit it lacks is fetched from
# WORKTREE. One build at a time per DIR. Exit 0 built, 2 bad arguments, else failed.
set -euo pipefail

prog=$(basename "$0")
die() {
	echo "$prog: error: $*" >&2
	exit 2
}
[[ $# -eq 4 ]] || die "usage: $prog DIR WORKTREE COMMIT OUT"
dir=$1 worktree=$2 commit=$3 out=$4
kb=$dir/kbuild
[[ -d $kb/.git && -f $dir/images/rootfs.img ]] || die "$dir: not a bisect-repo.sh folder"
[[ -d $out ]] || die "$out: no such folder"

exec {lock}>"$dir/.build.lock"
flock "$lock"
if ! git -C "$kb" cat-file -e "$commit^{commit}" 2>/dev/null; then
	git -C "$kb" fetch -q --no-tags "$worktree" HEAD
fi
git -C "$kb" checkout -q --detach --force "$commit"
t0=$SECONDS
make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- KBUILD_BUILD_USER=bootrig \
	KBUILD_BUILD_HOST=bootrig -C "$kb" O=build -j"$(nproc)" Image
echo "$prog: kernel of ${commit:0:12} built in $((SECONDS - t0)) s"

cp "$kb/build/arch/arm64/boot/Image" "$out/Image"
cp "$dir/images/u-boot-env.txt" "$out/u-boot-env.txt"
cp --sparse=always "$dir/images/rootfs.img" "$out/rootfs.img.tmp"
# debugfs exits 0 whatever its commands do: the size of /boot/Image is the check
debugfs -w -f - "$out/rootfs.img.tmp" >/dev/null <<EOF
cd /boot
rm Image
write "$out/Image" Image
EOF
size=$(debugfs -R "stat /boot/Image" "$out/rootfs.img.tmp" 2>/dev/null | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -n1)
[[ $size == "$(stat -c %s "$out/Image")" ]] || {
	echo "$prog: /boot/Image in rootfs.img is ${size:-missing}, not the built Image" >&2
	exit 1
}
mv "$out/rootfs.img.tmp" "$out/rootfs.img"
