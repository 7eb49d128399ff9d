# The private apt state of the target's Debian architecture, deb_arch (arm64 or armhf;
# lists only: the machine's dpkg is not touched), the package versions the builds take
# from it and the shared .deb cache. Sourced by build-common.sh (which sets prog,
# deb_arch, apt_dir and debs and defines log and die), so an input of every build
# script's hash.
# shellcheck shell=bash
: "${prog:?}" "${deb_arch:?}" "${apt_dir:?}" "${debs:?}" # set by build-common.sh
meta=linux-image-arm64 # Debian's "current arm64 kernel" package; we take what it depends on

apt_opts=(
	-o "APT::Architecture=$deb_arch" -o "APT::Architectures=$deb_arch"
	-o "Dir::State=$apt_dir/state" -o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::State::status=$apt_dir/status" -o "Dir::Cache=$apt_dir/cache"
	-o "Debug::NoLocking=false" -o "APT::Get::List-Cleanup=true"
)
((EUID == 0)) && apt_opts+=(-o "APT::Sandbox::User=root")

apt_lists_present() {
	compgen -G "$apt_dir/lists/*binary-${deb_arch}_Packages*" >/dev/null
}

apt_update() {
	log "fetching the Debian $deb_arch package lists into $apt_dir"
	mkdir -p "$apt_dir/state" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	touch "$apt_dir/status"
	rm -f "$apt_dir"/*.version
	# A mirror in the middle of a sync serves an index that does not match its Release
	# file ("File has unexpected size ... Mirror sync in progress?"), for minutes or until
	# the mirror's cache moves on: try again, then build from the lists that did arrive
	# (every version taken is in the build's inputs and manifest), saying which failed.
	local try
	for try in 1 2 3; do
		apt-get "${apt_opts[@]}" -qq update >&2 2>"$apt_dir/update.err" && break
		cat "$apt_dir/update.err" >&2
		if ((try < 3)); then sleep $((try * 15)); fi
	done
	if ! apt_lists_present; then
		echo "$prog: error: could not fetch the Debian $deb_arch package lists" \
			"(apt sources: /etc/apt/sources.list{,.d})" >&2
		exit 3
	fi
	if [[ -s $apt_dir/update.err ]] && grep -q '^E:' "$apt_dir/update.err"; then
		log "warning: some $deb_arch package lists did not arrive (above); building from the others"
	fi
}

# What the command `${@:2}` prints (apt's answers: slow), noted once per list update as
# $1.version.
noted() {
	local note=$apt_dir/$1.version
	if [[ ! -s $note || $note -ot $apt_dir/lists ]]; then
		{ "${@:2}" >"$note.tmp" && mv "$note.tmp" "$note"; } || die "could not resolve $1"
	fi
	cat "$note"
}

candidate() {
	local v
	v=$(apt-cache "${apt_opts[@]}" policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	[[ -n $v && $v != "(none)" ]] || die "no $deb_arch $1 in the Debian package lists ($apt_dir); try --update"
	echo "$v"
}

# linux-image-arm64 ($meta) depends on exactly one linux-image-6.1.0-N-arm64 (= version).
# (Debian's own kernel: the arm64 stock and systemd targets only.)
kernel_pkg() {
	local v dep
	v=$(candidate "$meta")
	dep=$(apt-cache "${apt_opts[@]}" show "$meta=$v" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1)
	[[ $dep =~ ^(linux-image-6\.1\.[0-9.]+-[0-9]+-arm64)\ \(=\ ([^\)]+)\) ]] ||
		die "$meta $v depends on '$dep', not on one linux-image-6.1.*-arm64"
	echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
}

busybox_pkg() { echo "busybox-static $(candidate busybox-static)"; }

# "package version" lines (stdin) as "package:ARCH version", ARCH the target's (how inputs
# and manifests name them).
as_arch() { sed "s/^\([^ ]*\) /\1:$deb_arch /"; }

# The cached .deb of package $1 version $2 (for deb_arch or all architectures), or nothing.
cached_deb() {
	local d
	for d in "$debs/$1"_*.deb; do
		[[ -f $d && $(dpkg-deb -f "$d" Package Version Architecture | tr '\n' ' ') == \
		"Package: $1 Version: $2 Architecture: "@("$deb_arch"|all)" " ]] && echo "$d" && return 0
	done
	return 1
}

# The .debs of "package version" lines (stdin), one path per line in the same order: from
# the shared cache, the missing ones downloaded in one apt-get call into $tmp/dl (and kept
# in the cache).
fetch_debs() {
	local lines line pkg ver d want=()
	mapfile -t lines
	for line in "${lines[@]}"; do
		read -r pkg ver <<<"$line"
		cached_deb "$pkg" "$ver" >/dev/null || want+=("$pkg:$deb_arch=$ver")
	done
	if ((${#want[@]} == 1)); then
		log "downloading ${want[0]/=/ }"
	elif ((${#want[@]})); then
		log "downloading ${#want[@]} $deb_arch packages"
	fi
	if ((${#want[@]})); then
		mkdir -p "$tmp/dl"
		(cd "$tmp/dl" && apt-get "${apt_opts[@]}" -qq download "${want[@]}") >&2 ||
			die "could not download ${want[*]}; try --update"
		for d in "$tmp/dl"/*.deb; do
			[[ -f $d ]] && mv "$d" "$debs/"
		done
	fi
	for line in "${lines[@]}"; do
		read -r pkg ver <<<"$line"
		cached_deb "$pkg" "$ver" || die "apt-get download left no $deb_arch $pkg $ver .deb"
	done
}
