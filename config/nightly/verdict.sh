# The night's one exit code from its steps' codes (sourced by nightly.sh; POSIX sh).
# night_exit SOAK ROBOT TREND STOPPED prints it: interrupted beats "the rig is broken"
# beats "the board failed" beats "the trend cannot tell yet". -1: the step did not run.
night_exit() {
  soak=$1 robot=$2 trend=$3 stopped=$4
  code=0
  case $soak in
    0) ;;
    1) code=1 ;;
    130|143) code=$soak ;;
    *) code=2 ;;  # 2 usage/config/rig, 3 gave up after consecutive rig errors
  esac
  case $robot in
    -1|0) ;;
    251|252|255) [ "$code" -lt 2 ] && code=2 ;;  # help, bad options or data, internal error
    253) [ "$code" -lt 128 ] && code=130 ;;      # robot was interrupted
    *) [ "$code" -eq 0 ] && code=1 ;;            # 1..250: that many tests failed
  esac
  case $trend in
    -1|0) ;;
    1) [ "$code" -eq 0 ] && code=1 ;;            # a new regression
    4) [ "$code" -eq 0 ] && code=4 ;;            # a slower change point it cannot confirm yet
    130|143) [ "$code" -lt 128 ] && code=$trend ;;
    *) [ "$code" -lt 2 ] && code=2 ;;            # bad config, InfluxDB away
  esac
  [ "$stopped" -ne 0 ] && code=$stopped
  echo "$code"
}
