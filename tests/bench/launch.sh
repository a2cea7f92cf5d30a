#!/bin/bash
# Launch to content (issue 43): the demo started under its own Xvfb, the screen shot every
# 0.5 s, each shot's number of distinct colours printed (a black or blank window has one or
# two; the shell's skeleton dozens; charts and tables hundreds).
#
#   tests/bench/launch.sh [SECONDS] [OUT_DIR]        (defaults: 6 s, a temp dir, kept)
#
# Look at the shots too: the count says something is drawn, not what. Needs a built app:
# EBB_DESKTOP (default target/debug/ebb-desktop under CARGO_TARGET_DIR or ./target), and
# imagemagick's `import` and `identify`.
set -euo pipefail
seconds=${1:-6}
out=${2:-$(mktemp -d)}
display=${LAUNCH_DISPLAY:-92}
root=$(cd "$(dirname "$0")/../.." && pwd)
app=${EBB_DESKTOP:-${CARGO_TARGET_DIR:-$root/target}/debug/ebb-desktop}
mkdir -p "$out"
data=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

Xvfb ":$display" -screen 0 1400x900x24 -nolisten tcp >/dev/null 2>&1 &
pids=("$!")
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$display" ] && break; sleep 0.1; done
start=$(date +%s.%N)
DISPLAY=":$display" EBB_DATA_DIR="$data" "$app" --demo >"$out/app.log" 2>&1 &
pids=("$!" "${pids[@]}")
steps=$(echo "$seconds * 2" | bc)
for i in $(seq 1 "$steps"); do
  at=$(echo "scale=1; $i / 2" | bc)
  # Sleep to the step's time from launch, whatever the last shot took.
  wait_s=$(echo "$start + $at - $(date +%s.%N)" | bc)
  if [ "$(echo "$wait_s > 0" | bc)" = 1 ]; then sleep "$wait_s"; fi
  taken=$(echo "scale=2; $(date +%s.%N) - $start" | bc)
  shot="$out/shot-$(printf %04.1f "$at").png"
  DISPLAY=":$display" import -window root "$shot" 2>/dev/null || true
  colours=$(identify -format %k "$shot" 2>/dev/null || echo 0)
  printf "%5ss (taken at %5ss): %6s colours  %s\n" "$at" "$taken" "$colours" "$shot"
done
grep -h "first page loaded" "$out/app.log" | sed 's/\x1b\[[0-9;]*m//g' || true
