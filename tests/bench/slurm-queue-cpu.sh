#!/bin/bash
# The daemon CPU a Slurm-bound pool's queue metrics add, at the queue a cluster has now.
#
#   SLURM_CONF=/path/slurm.conf tests/bench/slurm-queue-cpu.sh PARTITION NODES
#
# e.g. against a test cluster (see crates/ebb-testkit/src/slurm.rs) with 1,000 jobs queued
# (`for i in $(seq 1000); do sbatch -p gpu --gres=gpu:2 -w n1 --wrap 'sleep 1'; done`
# with n1 down). Runs `ebb daemon` 60 s on an unbound and on a bound data directory (the
# same unreachable host in both) and prints each one's CPU, its children (the Slurm
# commands) included, in cores. Needs target/debug/ebb (cargo build -p ebb-cli).
set -euo pipefail
partition=${1:?partition}
nodes=${2:?nodes, e.g. n[1-2]}
EBB=${EBB:-$(dirname "$0")/../../target/debug/ebb}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
measure() {
  "$EBB" --data-dir "$1" --token-store file daemon --metrics-listen off >/dev/null 2>&1 &
  local pid=$!
  sleep 5
  local a b
  a=$(awk '{print $14+$15+$16+$17}' /proc/$pid/stat)
  sleep 60
  b=$(awk '{print $14+$15+$16+$17}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null || true
  echo "scale=4; ($b-$a)/$(getconf CLK_TCK)/60" | bc
}
for d in plain bound; do
  mkdir -p "$work/$d"
  "$EBB" --data-dir "$work/$d" --token-store file hosts add gpu-a http://127.0.0.1:9 --region cn-north >/dev/null
  "$EBB" --data-dir "$work/$d" --token-store file pool create train --model A100 --region cn-north --min 0 --max 8 >/dev/null
done
cat > "$work/bound/slurm.toml" <<T
[[partition]]
name = "$partition"
pool = "train"
mode = "ebb"
gpus_per_node = 2
[[partition.hosts]]
host = "gpu-a"
nodes = "$nodes"
port = 17101
T
echo "queued jobs: $(squeue -h -p "$partition" | wc -l)"
echo "unbound daemon: $(measure "$work/plain") cores"
echo "bound daemon:   $(measure "$work/bound") cores"
