# The hooked kernel for a given version and architecture (sourced by hooked.sh): Debian's
# linux-source-$kver with ../linux/*.patch, allnoconfig + a config fragment (every
# requested option checked), `make Image` (arm64) or `make zImage` (armhf: U-Boot's
# bootz boots it; the uncompressed arm Image has no boot protocol of its own), left as
# Image either way. Cached on its own inputs alone, in <cache>/<target>-kernel/<key>/
# (the latest only): this file, the patches, the fragment, the linux-source version, the
# architecture and the cross gcc. So a new busybox-static, an edited init script or
# U-Boot environment rebuild the images in seconds, not the kernel.
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables set here are read by the sourcing script
# shellcheck disable=SC2154 # cache_root, hooks, tmp, ...: build-common.sh and hooked.sh
: "${ksrc:?}" "${kconfig:?}" "${target:?}" # set by hooked.sh and the sourcing script

case $deb_arch in
arm64) karch=arm64 kimage=Image ;;
armhf) karch=arm kimage=zImage ;;
esac
kmake=(make ARCH="$karch" CROSS_COMPILE="$cross" KBUILD_BUILD_USER=bootrig KBUILD_BUILD_HOST=bootrig)

kernel_root=$cache_root/$target-kernel
kernel_files=(Image bootgraph.pl kernel.config kernel_release kernel_seconds)

# The kernel's inputs, one per line (the key is their hash): each file with its content
# hash, then the source package and the cross compiler.
kernel_inputs() {
	local f
	echo "bootrig hooked kernel inputs 1"
	while read -r f; do
		printf '%s %s\n' "$f" "$(sha256sum <"$hooks/$f" | cut -d' ' -f1)"
	done < <(cd "$hooks" && printf '%s\n' qemu-arm64/hooked-kernel.sh linux/*.patch "$kconfig" | LC_ALL=C sort)
	echo "$ksrc $(pkg_version "$ksrc")"
	echo "arch $deb_arch"
	echo "cross-gcc $gcc_version"
}

# Called holding the build lock (begin_build): leaves $tmp/Image, $tmp/bootgraph.pl and
# $tmp/kernel.config, from the kernel cache or built (then cached); sets kernel_release,
# kernel_seconds (the build's that made it) and kernel_key.
hooked_kernel() {
	local kdir f
	kernel_key=$(kernel_inputs | sha256sum | cut -c1-16)
	kdir=$kernel_root/$kernel_key
	if [[ -f $kdir/kernel_seconds ]]; then
		log "kernel $kernel_key from the kernel cache ($kdir)"
	else
		build_kernel
		mkdir -p "$kernel_root"
		rm -rf "$kernel_root"/.new-* # a killed build's leftover (we hold the lock)
		mkdir "$kernel_root/.new-$kernel_key"
		for f in "${kernel_files[@]}"; do
			cp "$tmp/$f" "$kernel_root/.new-$kernel_key/"
		done
		# the latest kernel only: the folder name is complete only when all is there
		find "$kernel_root" -mindepth 1 -maxdepth 1 -not -name ".new-*" -exec rm -rf {} +
		mv "$kernel_root/.new-$kernel_key" "$kdir"
	fi
	for f in "${kernel_files[@]}"; do
		cp "$kdir/$f" "$tmp/$f"
	done
	kernel_release=$(<"$tmp/kernel_release")
	kernel_seconds=$(<"$tmp/kernel_seconds")
	rm "$tmp/kernel_release" "$tmp/kernel_seconds"
}

# Extract, patch, configure, check and build into $tmp/src, leaving the kernel_files in
# $tmp. The source and objects go with $tmp.
build_kernel() {
	local src=$tmp/src/$ksrc p tk
	local obj=$src/build
	mkdir -p "$tmp/src"
	step "extracting $ksrc_tarball" tar -xJf "$ksrc_tarball" -C "$tmp/src"
	[[ -d $src ]] || die "$ksrc_tarball has no $ksrc/ directory"
	while read -r p; do
		step "applying $p" patch -d "$src" -p1 --batch --forward -i "$hooks/$p"
	done < <(cd "$hooks" && compgen -G 'linux/*.patch' | LC_ALL=C sort)

	merge() (
		mkdir -p "$obj" && cd "$src" &&
			ARCH=$karch CROSS_COMPILE=$cross scripts/kconfig/merge_config.sh -n -O build "$hooks/$kconfig"
	)
	step "configuring the kernel (allnoconfig + $kconfig)" merge
	check_kconfig "$hooks/$kconfig" "$obj/.config"

	tk=$SECONDS
	step "building the $ksrc kernel $kimage (make -j$(nproc) $kimage; log: build.log)" \
		"${kmake[@]}" -C "$src" O=build -j"$(nproc)" "$kimage"
	echo $((SECONDS - tk)) >"$tmp/kernel_seconds"
	"${kmake[@]}" -s -C "$src" O=build kernelrelease >"$tmp/kernel_release"
	cp "$obj/arch/$karch/boot/$kimage" "$tmp/Image"
	cp "$src/scripts/bootgraph.pl" "$tmp/bootgraph.pl"
	cp "$obj/.config" "$tmp/kernel.config"
	rm -rf "$tmp/src"
}

# Every line of the fragment FRAG holds in CONFIG (set as asked, or not set when it
# says `# CONFIG_X is not set`); otherwise name the ones that do not and stop.
check_kconfig() {
	local line sym bad=()
	while read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)= ]]; then
			grep -qxF -- "$line" "$2" || bad+=("$line")
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym=${BASH_REMATCH[1]}
			if grep -q "^$sym=" "$2"; then bad+=("$line"); fi
		fi
	done <"$1"
	if ((${#bad[@]})); then
		printf '%s: not in the merged kernel config: %s\n' "$prog" "${bad[@]}" >&2
		die "$kconfig asks for options the kernel did not take (dependencies?)"
	fi
}
