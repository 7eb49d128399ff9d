# The nightly's bisect (sourced by nightly.sh; POSIX sh; docs/bisect.md, "Nightly"). Off
# unless BOOTRIG_BISECT_REPO names the repository the board's software is built from.
#
# BOOTRIG_BISECT_REPO   the git repository (unset: no bisect, no commit recorded)
# BOOTRIG_BISECT_BUILD  rig bisect's --build (needed with the repository)
# BOOTRIG_BISECT_REV    the revision the night's boots run (default HEAD), recorded each
#                       night as status.json's "commit"
# BOOTRIG_BISECT_CONFIG rig config the bisect boots (default: the soak's), its [influx]
#                       gets the annotation
# BOOTRIG_BISECT_ARGS   more rig bisect arguments, split on blanks (no quoting), e.g.
#                       --set sim.profile="{out}/board.toml" --max-boots 24

# night_commit prints the commit the night runs, or nothing when the bisect is off.
night_commit() {
  [ -n "${BOOTRIG_BISECT_REPO:-}" ] || return 0
  git -C "$BOOTRIG_BISECT_REPO" rev-parse --verify -q "${BOOTRIG_BISECT_REV:-HEAD}^{commit}" ||
    echo "bootrig nightly: $BOOTRIG_BISECT_REPO has no commit ${BOOTRIG_BISECT_REV:-HEAD}" >&2
}

# night_bisect PY OUT NIGHTS CONFIG TREND_EXIT: when the trend gate found a new regression
# (exit 1) and the bisect is on, `rig bisect` explains the first one between the commits
# of the night before its change point and of its night (NIGHTS/<stamp>/status.json),
# writes OUT/bisect.json (its --json), OUT/bisect.log and the folder OUT/bisect/, and
# puts the answer beside the change point in InfluxDB. Prints rig bisect's exit code, or
# -1 when it did not run.
night_bisect() {
  py=$1 out=$2 nights=$3 config=$4 trend=$5
  if [ "$trend" -ne 1 ] || [ -z "${BOOTRIG_BISECT_REPO:-}" ]; then
    echo -1
    return 0
  fi
  if [ -z "${BOOTRIG_BISECT_BUILD:-}" ]; then
    echo "bootrig nightly: BOOTRIG_BISECT_REPO is set but BOOTRIG_BISECT_BUILD is not" \
      >"$out/bisect.log"
    echo 2
    return 0
  fi
  # shellcheck disable=SC2086 # BOOTRIG_BISECT_ARGS is a list of arguments
  "$py" -m rig bisect --explain "$out/trend.json" --nights "$nights" --mark \
    --repo "$BOOTRIG_BISECT_REPO" --build "$BOOTRIG_BISECT_BUILD" \
    --config "${BOOTRIG_BISECT_CONFIG:-$config}" --out "$out/bisect" \
    ${BOOTRIG_BISECT_ARGS:-} --json >"$out/bisect.json" 2>"$out/bisect.log"
  echo $?
}
