#!/bin/sh
# bootrig nightly: a power-cycle soak, then the Robot Framework suites, outputs under
# results/nightly/<UTC stamp>/ (soak.json, soak.log, robot/, status.json).
#
# Environment: BOOTRIG_CONFIG (soak rig config, default config/nightly/soak.toml),
# BOOTRIG_ROBOT_CONFIG (rig config of the Robot suites, default config/rig.toml),
# BOOTRIG_CYCLES (override the soak's cycle count), BOOTRIG_PYTHON (.venv/bin/python),
# BOOTRIG_TREND_THRESHOLD (smallest regression the trend gate fails on, default 5ms).
#
# After the suites, `rig trend --mark --fail-on-new` over the soak config's InfluxDB
# history (docs/trend.md): marks the change points for Grafana and fails the night on a
# regression it has not reported before. Skipped (a note) when the config has no [influx].
# With BOOTRIG_BISECT_REPO and BOOTRIG_BISECT_BUILD set (config/nightly/bisect.sh), each
# night records the commit it runs, and a new regression starts `rig bisect`, whose answer
# goes to InfluxDB beside the change point (docs/bisect.md, "Nightly").
#
# Exit codes, for CI and systemd: 0 the board met every budget and the soak's failure
# rate, and no new regression; 1 it did not; 2 the rig could not run (config,
# instruments, Robot usage, InfluxDB for the trend); 4 nothing else failed but the trend
# has a slower change point its boots cannot confirm yet (config/nightly/verdict.sh);
# 130/143 interrupted by SIGINT/SIGTERM (the soak journal is closed and resumable).
set -u
repo=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
cd "$repo" || exit 2
py=${BOOTRIG_PYTHON:-.venv/bin/python}
config=${BOOTRIG_CONFIG:-config/nightly/soak.toml}
robot_config=${BOOTRIG_ROBOT_CONFIG:-config/rig.toml}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=results/nightly/$stamp
mkdir -p "$out" || exit 2
stopped=0
trap 'stopped=143' TERM  # the children get the signal too; we wait for them to finish
trap 'stopped=130' INT

. "$repo/config/nightly/bisect.sh"
commit=$(night_commit)
commit_json=null
[ -n "$commit" ] && commit_json="\"$commit\""
# The night's record from its start: a bisect tonight finds tonight's commit in it.
printf '{"stamp": "%s", "commit": %s}\n' "$stamp" "$commit_json" >"$out/status.json"

echo "bootrig nightly $stamp: soak with $config, then Robot suites with $robot_config"
"$py" -m rig.soak --config "$config" --id "nightly-$stamp" ${BOOTRIG_CYCLES:+--cycles "$BOOTRIG_CYCLES"} \
  --json >"$out/soak.json" 2>"$out/soak.log"
soak=$?
robot=-1
if [ "$stopped" -eq 0 ] && [ "$soak" -lt 128 ]; then
  "$py" -m robot --outputdir "$out/robot" --variable "CONFIG:$robot_config" testsuites \
    >"$out/robot.log" 2>&1
  robot=$?
fi

trend=-1
if [ "$stopped" -eq 0 ] && [ "$soak" -lt 128 ]; then
  "$py" -m rig trend --config "$config" --mark --fail-on-new --skip-without-influx \
    --threshold "${BOOTRIG_TREND_THRESHOLD:-5ms}" --json >"$out/trend.json" 2>"$out/trend.log"
  trend=$?
fi

bisect=-1
if [ "$stopped" -eq 0 ]; then
  bisect=$(night_bisect "$py" "$out" results/nightly "$config" "$trend")
fi

# One verdict: interrupted beats "the rig is broken" beats "the board failed" beats
# "the trend cannot tell yet". The bisect explains a failed night; it does not change it.
. "$repo/config/nightly/verdict.sh"
code=$(night_exit "$soak" "$robot" "$trend" "$stopped")
printf '{"stamp": "%s", "commit": %s, "soak_exit": %s, "robot_exit": %s, "trend_exit": %s, "bisect_exit": %s, "exit": %s}\n' \
  "$stamp" "$commit_json" "$soak" "$robot" "$trend" "$bisect" "$code" >"$out/status.json"
ln -sfn "$stamp" results/nightly/latest
echo "bootrig nightly $stamp: soak exit $soak, robot exit $robot, trend exit $trend, bisect exit $bisect -> exit $code ($out)"
exit "$code"
