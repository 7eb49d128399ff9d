#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Fetch U-Boot as Debian 12 ships it (source package u-boot, version below) with
# Debian's own patches (debian/patches/series) applied, and print the tree's path.
#
#   firmware-hooks/u-boot/fetch-source.sh            # prints .../u-boot-src/u-boot-<version>
#
# The tree is cached under ${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/u-boot-src/
# and fetched once. apt runs on a private source list and private state directories:
# nothing machine-wide changes (no sources.list edit, no apt-get update of the system).
# Needs apt-get, tar, xz, patch and flock.
#
# Environment:
#   UBOOT_DEB_VERSION  the Debian version to fetch (default below; it must still be in
#                      the archive, or reachable through UBOOT_DEB_MIRROR)
#   UBOOT_DEB_MIRROR   a Debian mirror (default http://deb.debian.org/debian), e.g. a
#                      snapshot.debian.org/archive/debian/<stamp> URL once the version
#                      has left the archive
set -eu

VERSION=${UBOOT_DEB_VERSION:-2023.01+dfsg-2+deb12u3}
MIRROR=${UBOOT_DEB_MIRROR:-http://deb.debian.org/debian}
SECURITY=${UBOOT_DEB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

cache=${BOOTRIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootrig}/u-boot-src
tree=$cache/u-boot-$VERSION

if [ -f "$tree/.bootrig-complete" ]; then
    echo "$tree"
    exit 0
fi

for tool in apt-get tar xz patch flock; do
    command -v "$tool" >/dev/null || { echo "fetch-source.sh: $tool is missing" >&2; exit 1; }
done
[ -r "$KEYRING" ] || { echo "fetch-source.sh: no $KEYRING (debian-archive-keyring)" >&2; exit 1; }

mkdir -p "$cache"
# One fetch at a time; a second caller waits, then finds the tree.
exec 9>"$cache/.lock"
flock 9
if [ -f "$tree/.bootrig-complete" ]; then
    echo "$tree"
    exit 0
fi
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/dl"

# bookworm-security carries the +debNNuN updates too, so list it alongside the release.
cat >"$work/sources.list" <<EOF
deb-src [signed-by=$KEYRING] $MIRROR bookworm main
deb-src [signed-by=$KEYRING] $MIRROR bookworm-updates main
deb-src [signed-by=$KEYRING] $SECURITY bookworm-security main
EOF

apt_private() {
    apt-get -q \
        -o Dir::Etc::SourceList="$work/sources.list" \
        -o Dir::Etc::SourceParts=/dev/null \
        -o Dir::State::Lists="$work/lists" \
        -o Dir::Cache="$work/cache" \
        -o APT::Sandbox::User=root \
        "$@"
}

echo "fetch-source.sh: fetching u-boot $VERSION (Debian source package)" >&2
apt_private update >&2
# apt checks every file against the signed Sources index.
(cd "$work/dl" && apt_private source --download-only "u-boot=$VERSION") >&2 || {
    echo "fetch-source.sh: u-boot $VERSION is not in $MIRROR; set UBOOT_DEB_MIRROR to a" \
        "snapshot.debian.org URL that has it" >&2
    exit 1
}

orig=$(ls "$work"/dl/u-boot_*.orig.tar.*)
debian=$(ls "$work"/dl/u-boot_"$VERSION".debian.tar.*)
mkdir "$work/src"
tar -xf "$orig" -C "$work/src" --strip-components=1
tar -xf "$debian" -C "$work/src"

# What dpkg-source -x does for a "3.0 (quilt)" package: the series, in order, -p1.
series=$work/src/debian/patches/series
if [ -f "$series" ]; then
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$series" | while read -r p opts; do
        [ -n "$p" ] || continue
        patch -d "$work/src" -s -p1 --forward --batch --no-backup-if-mismatch $opts \
            -i "debian/patches/$p" || { echo "fetch-source.sh: Debian patch $p failed" >&2; exit 1; }
    done
fi
echo "$VERSION" >"$work/src/.bootrig-complete"

rm -rf "$tree"    # a tree left incomplete by an interrupted run
mv "$work/src" "$tree"
echo "$tree"
