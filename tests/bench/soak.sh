#!/bin/bash
# The desktop app left idle on Fleet: RSS and CPU of ebb-desktop and of WebKit's web
# process, sampled over time (issue 43: memory flat, idle CPU under 3% per process).
#
#   tests/bench/soak.sh [MINUTES] [STEP_S]          (defaults: 15 minutes, a sample each 30 s)
#
# Starts the demo under its own Xvfb (display :$SOAK_DISPLAY, default 91) with a fresh data
# directory, waits SOAK_WARMUP_S (default 60) and samples `ps` every STEP_S seconds. Prints one
# line a sample (minute, RSS MiB and CPU % over the step, of each process) and a summary: RSS
# at the first sample and the end, growth from the first sample (or from minute 10 when the run
# is longer than 20 minutes), mean CPU. The page is scrolled to the live charts first
# (SOAK_PAGE_DOWN pages; 0 stays at the top). Exits non-zero when SOAK_MAX_GROWTH_MIB is set and
# either process grew more than that. Needs a built app: EBB_DESKTOP (default
# target/debug/ebb-desktop under CARGO_TARGET_DIR or ./target), built with ui/dist in it, and
# xdotool to scroll.
set -euo pipefail
minutes=${1:-15}
step=${2:-30}
display=${SOAK_DISPLAY:-91}
warmup=${SOAK_WARMUP_S:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
app=${EBB_DESKTOP:-${CARGO_TARGET_DIR:-$root/target}/debug/ebb-desktop}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

Xvfb ":$display" -screen 0 1400x900x24 -nolisten tcp >/dev/null 2>&1 &
pids=("$!")
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$display" ] && break; sleep 0.1; done
DISPLAY=":$display" EBB_DATA_DIR="$work/data" "$app" --demo >"$work/app.log" 2>&1 &
app_pid=$!
pids=("$app_pid" "${pids[@]}")

# The web process is a child of the app (WebKitWebProcess, its name truncated by ps).
web_pid=""
for _ in $(seq 300); do
  web_pid=$(pgrep -P "$app_pid" -f WebKitWebProcess | head -1 || true)
  [ -n "$web_pid" ] && break
  sleep 0.1
done
[ -n "$web_pid" ] || { echo "no WebKitWebProcess under ebb-desktop ($app_pid)" >&2; cat "$work/app.log" >&2; exit 2; }
sleep "$warmup"
# Scrolled SOAK_PAGE_DOWN pages (default 1) so the live charts are in view: only a chart that
# can be seen is redrawn each second, and those redraws are what grew the web process.
for _ in $(seq "${SOAK_PAGE_DOWN:-1}"); do
  DISPLAY=":$display" xdotool mousemove 700 140 click 1 key Next || echo "cannot scroll (xdotool)" >&2
done

ticks=$(getconf CLK_TCK)
rss_mib() { awk '/^VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
# The heap and other private memory (RssAnon): what a leak grows. RSS also counts the shared
# libraries' pages, which the kernel drops and reads back as it likes.
anon_mib() { awk '/^RssAnon/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
printf "%6s %12s %12s %10s %12s %12s %10s\n" minute app_rss_mib app_anon_mib app_cpu_% web_rss_mib web_anon_mib web_cpu_%
samples=$((minutes * 60 / step))
a_prev=$(cpu_ticks "$app_pid"); w_prev=$(cpu_ticks "$web_pid")
a_first=$a_prev; w_first=$w_prev
declare -a a_rss w_rss a_anon w_anon
start=$(date +%s)
for i in $(seq 0 "$samples"); do
  if [ "$i" -gt 0 ]; then sleep "$step"; fi
  kill -0 "$app_pid" 2>/dev/null || { echo "ebb-desktop exited" >&2; cat "$work/app.log" >&2; exit 2; }
  a_now=$(cpu_ticks "$app_pid"); w_now=$(cpu_ticks "$web_pid")
  a_cpu=0; w_cpu=0
  if [ "$i" -gt 0 ]; then
    a_cpu=$(echo "scale=2; 100*($a_now-$a_prev)/$ticks/$step" | bc)
    w_cpu=$(echo "scale=2; 100*($w_now-$w_prev)/$ticks/$step" | bc)
  fi
  a_prev=$a_now; w_prev=$w_now
  a_rss[i]=$(rss_mib "$app_pid"); w_rss[i]=$(rss_mib "$web_pid")
  a_anon[i]=$(anon_mib "$app_pid"); w_anon[i]=$(anon_mib "$web_pid")
  minute=$(echo "scale=1; ($(date +%s)-$start)/60 + $warmup/60" | bc)
  printf "%6s %12s %12s %10s %12s %12s %10s\n" "$minute" "${a_rss[i]}" "${a_anon[i]}" "$a_cpu" "${w_rss[i]}" "${w_anon[i]}" "$w_cpu"
done
end_a=$(cpu_ticks "$app_pid"); end_w=$(cpu_ticks "$web_pid")

# Growth counted from the first sample, or from minute 10 of a long run.
from=0
if [ "$minutes" -gt 20 ]; then from=$(((600 - warmup) / step)); [ "$from" -lt 0 ] && from=0; fi
last=$samples
verdict=0
summary() {
  local name=$1 first=$2 final=$3 anon_first=$4 anon_final=$5
  local growth pct
  growth=$(echo "scale=1; $final-$first" | bc)
  pct=$(echo "scale=1; 100*($final-$first)/$first" | bc)
  echo "$name: RSS $first MiB -> $final MiB ($growth MiB, $pct%);" \
    "private (anon) $anon_first MiB -> $anon_final MiB ($(echo "scale=1; $anon_final-$anon_first" | bc) MiB)"
  if [ -n "${SOAK_MAX_GROWTH_MIB:-}" ] && [ "$(echo "$growth > $SOAK_MAX_GROWTH_MIB" | bc)" = 1 ]; then
    echo "$name grew more than $SOAK_MAX_GROWTH_MIB MiB" >&2
    verdict=1
  fi
}
echo "--- $minutes min after a ${warmup}s warm-up, growth from sample $from"
summary ebb-desktop "${a_rss[from]}" "${a_rss[last]}" "${a_anon[from]}" "${a_anon[last]}"
summary WebKitWebProcess "${w_rss[from]}" "${w_rss[last]}" "${w_anon[from]}" "${w_anon[last]}"
elapsed=$(($(date +%s) - start))
echo "mean CPU over ${elapsed}s: ebb-desktop $(echo "scale=2; 100*($end_a-$a_first)/$ticks/$elapsed" | bc)%," \
  "WebKitWebProcess $(echo "scale=2; 100*($end_w-$w_first)/$ticks/$elapsed" | bc)%"
exit "$verdict"
