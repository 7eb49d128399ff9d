#!/usr/bin/env bash
# Check the bootrig U-Boot patch against every U-Boot release in a U-Boot git
# repository, one table row per release (the table in README.md, "U-Boot releases").
#
#   check-releases.sh [options] UBOOT_GIT [TAG...]
#
# UBOOT_GIT is a clone of U-Boot (its top folder or its .git folder, bare or not). With
# no TAG, every release vYYYY.MM from --from on (point releases like v2023.07.02 left
# out), plus the newest -rc if it is newer than the newest release. Nothing is fetched:
# the tags must already be in the clone (git fetch --tags there first).
#
# Per release it prints:
#   patch        what `patch -p1` says (per patch, for a series): clean, offset (context
#                found elsewhere, unchanged), fuzz (context lines ignored: check where the
#                hunk landed) or fails, with the files and hunks (a missing file:
#                "FILE missing")
#   hook site    the file holding boot_selected_os() and its parameters (argc/argv
#                before v2024.04, bmi since)
#   compiles     with --compile only: the patched tree built for --defconfig with
#                CONFIG_BOOTRIG_MARKER=y and the --config options ("yes", "yes, N
#                warnings in bootrig code" or "no: " and the first error; "yes" needs
#                bootrig.o built and its tag string in u-boot); "-" when the patch does
#                not apply or --compile was not given
#   env recipe   whether the commands of the environment-only recipe exist: `gpio set`
#                (cmd/gpio.c), `mw` (cmd/mem.c), `echo` (cmd/echo.c)
#
# Options:
#   --patch FILE      a patch to apply (repeat for a series, applied in the order given);
#                     default: the *.patch files next to this script, in name order
#   --from TAG        first release to check (default v2020.01)
#   --compile         also build each release the patch applies to (about 1 to 2 min
#                     each on two cores); needs make, gcc, bison, flex, bc, libssl-dev
#                     and the cross compiler
#   --defconfig NAME  the board to build (default qemu_arm64_defconfig)
#   --config OPT      a Kconfig line to add, e.g. CONFIG_DM_GPIO=y (repeat for more);
#                     default CONFIG_DM_GPIO=y, so that bootrig.c's GPIO code is built
#                     (qemu_arm64_defconfig leaves DM_GPIO off)
#   --tsv             tab-separated values with a header line instead of a markdown table
#   -h, --help        this text
# Environment: CROSS_COMPILE (default aarch64-linux-gnu-), TMPDIR for the scratch trees.
# Exit codes: 0 the table was printed (whatever it says), 2 bad arguments or input.
set -euo pipefail

prog=$(basename "$0")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
	echo "$prog: error: $*" >&2
	exit 2
}

patches=()
from=v2020.01
compile=0
defconfig=qemu_arm64_defconfig
configs=()
format=markdown
repo=
tags=()
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"
		exit 0
		;;
	--patch)
		[ $# -ge 2 ] || die "--patch needs a file"
		patches+=("$2")
		shift
		;;
	--from)
		[ $# -ge 2 ] || die "--from needs a tag"
		from=$2
		shift
		;;
	--defconfig)
		[ $# -ge 2 ] || die "--defconfig needs a name"
		defconfig=$2
		shift
		;;
	--config)
		[ $# -ge 2 ] || die "--config needs an option"
		[[ $2 =~ ^CONFIG_[A-Za-z0-9_]+=.+$ ]] || die "--config '$2': want CONFIG_NAME=value"
		configs+=("$2")
		shift
		;;
	--compile) compile=1 ;;
	--tsv) format=tsv ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*)
		if [ -z "$repo" ]; then
			repo=$1
		else
			tags+=("$1")
		fi
		;;
	esac
	shift
done

[ -n "$repo" ] || die "no U-Boot git repository given (try --help)"
[ -d "$repo" ] || die "$repo: no such folder"
# --git-dir, so that a folder inside some other repository is not taken for it
gitdir=$repo
[ -e "$repo/.git" ] && gitdir=$repo/.git
git --git-dir="$gitdir" rev-parse --git-dir >/dev/null 2>&1 ||
	die "$repo: not a git repository (want a U-Boot clone or its .git folder)"
g() { git --git-dir="$gitdir" "$@"; }

if [ ${#patches[@]} -eq 0 ]; then
	for p in "$here"/*.patch; do
		[ -f "$p" ] && patches+=("$p")
	done
	[ ${#patches[@]} -gt 0 ] || die "no *.patch next to $0 (give --patch FILE)"
fi
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	[ -f "$p" ] || die "$p: no such patch file"
	grep -q '^+++ ' "$p" || die "$p: not a patch (no '+++ ' line)"
	# patch runs in the scratch trees: give it an absolute path
	patches[i]=$(cd "$(dirname "$p")" && pwd)/$(basename "$p")
done
for tool in patch tar awk; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
cross=${CROSS_COMPILE-aarch64-linux-gnu-}
[ ${#configs[@]} -gt 0 ] || configs=(CONFIG_DM_GPIO=y)
if [ "$compile" = 1 ]; then
	for tool in make bison flex bc "${cross}gcc"; do
		command -v "$tool" >/dev/null || die "--compile: $tool is missing"
	done
fi

is_release() { [[ $1 =~ ^v[0-9]{4}\.[0-9]{2}$ ]]; }
if [ ${#tags[@]} -eq 0 ]; then
	g rev-parse -q --verify "refs/tags/$from" >/dev/null || die "$repo: no tag $from"
	mapfile -t all < <(g tag -l 'v2*' | grep -E '^v[0-9]{4}\.[0-9]{2}(-rc[0-9]+)?$' | sort -V)
	newest=
	for t in "${all[@]}"; do
		if is_release "$t"; then
			# keep what is >= --from
			if [ "$(printf '%s\n' "$from" "$t" | sort -V | head -1)" = "$from" ]; then
				tags+=("$t")
			fi
			newest=$t
		fi
	done
	[ ${#tags[@]} -gt 0 ] || die "$repo: no U-Boot release tags (vYYYY.MM) from $from on"
	last=${all[${#all[@]}-1]}
	# the newest -rc, if its release is not out yet (sort -V puts v2026.07 before
	# v2026.07-rc1, so the last tag is an -rc whenever any -rc exists)
	if ! is_release "$last" && [ "${last%-rc*}" != "$newest" ]; then
		tags+=("$last")
	fi
else
	for t in "${tags[@]}"; do
		g rev-parse -q --verify "refs/tags/$t^{commit}" >/dev/null || die "$repo: no tag $t"
	done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bootrig-uboot-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 2' INT TERM

# Paths (-p1) a patch reads or creates
touched() { awk '/^(---|\+\+\+) / && $2 != "/dev/null" { sub(/^[^\/]*\//, "", $2); print $2 }' "$1" | sort -u; }

# Summarise GNU patch's report: "clean", "offset", "fuzz: FILE hunk N (fuzz F)", or
# "fails: FILE hunk N; ..." (then the fuzzy ones)
summarise() {
	awk '
	/^(checking|patching) file / { file = $3; next }
	/^can.t find file to patch/ { missing = 1; next }
	/^\|?(---|\+\+\+) / && missing { f = $2; sub(/^[^\/]*\//, "", f); if ($1 ~ /\+\+\+/) want = f; next }
	/^No file to patch/ { bad = bad sep want " missing"; sep = "; "; missing = 0; next }
	/^Hunk #[0-9]+ FAILED/ { n = substr($2, 2); bad = bad sep file " hunk " n; sep = "; "; next }
	/^Hunk #[0-9]+ succeeded .* with fuzz [0-9]+/ {
		n = substr($2, 2); f = $0; sub(/.* with fuzz /, "", f); sub(/[^0-9].*/, "", f)
		fuzz = fuzz fsep file " hunk " n " (fuzz " f ")"; fsep = "; "; next
	}
	/\(offset -?[0-9]+ lines?\)/ { offset = 1; next }
	END {
		if (bad != "") print "fails: " bad (fuzz != "" ? "; fuzz: " fuzz : "")
		else if (fuzz != "") print "fuzz: " fuzz
		else if (offset) print "offset"
		else print "clean"
	}'
}

hook_site() {
	local tag=$1 file sig
	for file in boot/bootm_os.c common/bootm_os.c ""; do
		g cat-file -e "$tag:$file" 2>/dev/null && g show "$tag:$file" | grep -q '^int boot_selected_os(' && break
	done
	[ -n "$file" ] || {
		echo "not found"
		return
	}
	sig=$(g show "$tag:$file" | awk '/^int boot_selected_os\(/ { s = $0; while (s !~ /\)/ && (getline l) > 0) s = s l; print s; exit }')
	case $sig in
	*bootm_info*) echo "$file (bmi)" ;;
	*argc*) echo "$file (argc, argv)" ;;
	*) echo "$file" ;;
	esac
}

# Does TAG:FILE, with whitespace dropped, contain WORD?
has() { g show "$1:$2" 2>/dev/null | tr -d ' \t\n' | grep -qF "$3"; }

env_recipe() {
	local tag=$1 missing=()
	if ! has "$tag" cmd/gpio.c 'U_BOOT_CMD(gpio,' || ! has "$tag" cmd/gpio.c 'sub_cmd=GPIOC_SET'; then
		missing+=("gpio set")
	fi
	has "$tag" cmd/mem.c 'U_BOOT_CMD(mw,' || missing+=("mw")
	has "$tag" cmd/echo.c 'U_BOOT_CMD(echo,' || missing+=("echo")
	if [ ${#missing[@]} -eq 0 ]; then
		echo "yes"
	else
		echo "missing: ${missing[*]}"
	fi
}

# Check TAG out into DIR through an index of our own (the clone is not touched). A
# partial mirror may lack some large blobs (test data): those files are left out.
export_tree() {
	local tag=$1 dir=$2 path
	export GIT_INDEX_FILE=$work/index
	g ls-tree -r "$tag" | awk -F '\t' '{ split($1, a, " "); if (a[2] == "blob") print a[3] "\t" $2 }' >"$work/blobs"
	cut -f1 "$work/blobs" | g cat-file --batch-check | awk '$2 == "missing" { print $1 }' >"$work/absent"
	g --work-tree="$dir" read-tree "$tag"
	while IFS=$'\t' read -r _ path; do
		echo "$prog: $tag: $path is absent from the clone, left out" >&2
		g --work-tree="$dir" update-index --force-remove -- "$path"
	done < <(awk -F '\t' 'NR == FNR { m[$1] = 1; next } $1 in m' "$work/absent" "$work/blobs")
	g --work-tree="$dir" checkout-index -a -f --prefix="$dir/"
	unset GIT_INDEX_FILE
}

build() {
	local tag=$1 tree=$work/tree out=$work/out log=$work/build.log p n
	rm -rf "$tree" "$out"
	mkdir -p "$tree"
	export_tree "$tag" "$tree"
	for p in "${patches[@]}"; do
		patch -d "$tree" -s -p1 --forward --batch --no-backup-if-mismatch -i "$p" >/dev/null 2>&1 ||
			{
				echo "no: the patch did not apply"
				return
			}
	done
	if ! {
		make -C "$tree" -s O="$out" "$defconfig" &&
			printf '%s\n' CONFIG_BOOTRIG_MARKER=y "${configs[@]}" >>"$out/.config" &&
			make -C "$tree" -s O="$out" olddefconfig
	} >"$log" 2>&1; then
		echo "no: $defconfig: $(grep -m1 -iE 'error|\*\*\*' "$log" || tail -1 "$log")"
		return
	fi
	# Kconfig drops what it cannot honour (a missing dependency)
	for p in CONFIG_BOOTRIG_MARKER=y "${configs[@]}"; do
		grep -qxF "$p" "$out/.config" || {
			echo "no: Kconfig did not keep $p"
			return
		}
	done
	if make -C "$tree" O="$out" CROSS_COMPILE="$cross" -j"$(nproc)" >"$log" 2>&1; then
		n=$(grep -cE '(bootrig\.[ch]|bootm_os\.c):[0-9]+:[0-9]+: warning' "$log" || true)
		# built is not enough: the hook must be in the image
		if [ -z "$(find "$out" -name bootrig.o)" ] || ! grep -qa 'bootrig: marker %s' "$out/u-boot"; then
			echo "no: built, but without the hook (no bootrig.o or tag in u-boot)"
		elif [ "$n" -gt 0 ]; then
			echo "yes, $n warnings in bootrig code"
		else
			echo "yes"
		fi
	else
		echo "no: $(grep -m1 -E 'error:|undefined reference|Error [0-9]' "$log" | sed -e "s|$tree/||g" -e "s|$out/||g")"
	fi
	rm -rf "$tree" "$out"
}

row() {
	if [ "$format" = tsv ]; then
		(
			IFS=$'\t'
			echo "$*"
		)
	else
		local cell line="|"
		for cell in "$@"; do line+=" ${cell//|/\\|} |"; done
		echo "$line"
	fi
}

row release patch "hook site" compiles "env recipe"
[ "$format" = tsv ] || row --- --- --- --- ---
for tag in "${tags[@]}"; do
	scratch=$work/dry
	rm -rf "$scratch"
	mkdir -p "$scratch"
	# only the files the patches read: git show, as git archive reads every blob
	for p in "${patches[@]}"; do
		while read -r path; do
			if g cat-file -e "$tag:$path" 2>/dev/null; then
				mkdir -p "$scratch/$(dirname "$path")"
				g show "$tag:$path" >"$scratch/$path"
			fi
		done < <(touched "$p")
	done
	result=
	applied=1
	for p in "${patches[@]}"; do
		# applied for real in the scratch copy, so a series' later patches see the earlier ones
		rc=0
		report=$(patch -d "$scratch" -p1 --forward --batch --no-backup-if-mismatch -i "$p" 2>&1) || rc=$?
		one=$(summarise <<<"$report")
		# patch failed in a way summarise does not know: say what it said
		if [ "$rc" != 0 ] && [[ $one != fails:* ]]; then
			one="fails: $(head -1 <<<"$report") (patch exit $rc)"
		fi
		[[ $one == fails:* ]] && applied=0
		if [ ${#patches[@]} -gt 1 ]; then
			result+="${result:+; }$(basename "$p"): $one"
		else
			result=$one
		fi
	done
	compiled=-
	if [ "$compile" = 1 ] && [ "$applied" = 1 ]; then
		echo "$prog: building $tag ($defconfig)" >&2
		compiled=$(build "$tag")
	fi
	row "$tag" "$result" "$(hook_site "$tag")" "$compiled" "$(env_recipe "$tag")"
done
