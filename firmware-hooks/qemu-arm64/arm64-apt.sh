# Shared by build-stock.sh and build-systemd.sh (sourced, not run): messages, Debian
# package checks, and the private arm64 apt state (lists, .deb cache) that build.sh
# uses too. The sourcing script sets `prog`, `apt_dir` and `meta` first and lists this
# file among the inputs of its hash.
# shellcheck shell=bash
: "${prog:?}" "${apt_dir:?}" "${meta:?}" # set by the sourcing script

log() { echo "$prog: $*" >&2; }
die() {
	echo "$prog: error: $*" >&2
	exit 2
}

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
	rm -f "$apt_dir"/*.version
	if ! apt-get "${apt_opts[@]}" -qq update >&2 || ! apt_lists_present; then
		echo "$prog: error: could not fetch the Debian arm64 package lists" \
			"(apt sources: /etc/apt/sources.list{,.d})" >&2
		exit 3
	fi
}

# What `$2` prints (apt's answers: slow), noted once per list update as $1.version.
noted() {
	local note=$apt_dir/$1.version
	if [[ ! -s $note || $note -ot $apt_dir/lists ]]; then
		{ "$2" >"$note.tmp" && mv "$note.tmp" "$note"; } || die "could not resolve $1"
	fi
	cat "$note"
}

candidate() {
	local v
	v=$(apt-cache "${apt_opts[@]}" policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	[[ -n $v && $v != "(none)" ]] || die "no arm64 $1 in the Debian package lists ($apt_dir); try --update"
	echo "$v"
}

# linux-image-arm64 ($meta) depends on exactly one linux-image-6.1.0-N-arm64 (= version).
kernel_pkg() {
	local v dep
	v=$(candidate "$meta")
	dep=$(apt-cache "${apt_opts[@]}" show "$meta=$v" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1)
	[[ $dep =~ ^(linux-image-6\.1\.[0-9.]+-[0-9]+-arm64)\ \(=\ ([^\)]+)\) ]] ||
		die "$meta $v depends on '$dep', not on one linux-image-6.1.*-arm64"
	echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
}

# `--dir`: print the output folder and exit 0 if it is built, 1 if not. Otherwise take
# the cache's lock, exit if another build finished it meanwhile, and start an empty
# build folder. Reads the sourcing script's mode, hash, out_root and debs; sets out, tmp,
# buildlog and t0 for it.
# shellcheck disable=SC2034,SC2154
begin_build() {
	out=$out_root/$hash
	if [[ $mode == dir ]]; then
		echo "$out"
		[[ -f $out/manifest.json ]] && exit 0
		exit 1
	fi
	require flock:util-linux dpkg-deb:dpkg mke2fs:e2fsprogs mkenvimage:u-boot-tools cpio:cpio \
		gzip:gzip "/usr/aarch64-linux-gnu/include/linux/gpio.h:linux-libc-dev-arm64-cross"
	mkdir -p "$out_root" "$debs"
	exec {lock}>"$out_root/.lock"
	flock "$lock"
	if [[ -f $out/manifest.json ]]; then
		echo "$out"
		exit 0
	fi
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
