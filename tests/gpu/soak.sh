#!/bin/bash
# On a many-core machine, from the repository root after `cargo build --release -p ebb-cli -p ebb-agent`
# and `cargo xtask bundle`: (1) the agent's .deb run as its unit runs it on a real GPU (NVML);
# (2) `ebb daemon` on 1,250 simulated hosts x 8 GPUs at 1 Hz for SOAK_SECONDS (default 420):
# RSS over time, CPU, and the readings stored of those the agents took. Root only (dpkg).
OUT=${OUT:-/tmp/ebb-soak}; mkdir -p $OUT
R=$PWD/target/release; DEB=$R/bundle/deb/ebb-agent_0.1.0_amd64.deb
echo "== 1. the agent's .deb on this GPU host"
dpkg -i $DEB 2>&1 | tail -3
TOKEN=$(ebb-agent token new --scope lease --config /etc/ebb-agent/agent.toml)
STATE_DIRECTORY=/var/lib/ebb-agent EBB_AGENT_LISTEN=127.0.0.1:7443 RUST_LOG=info runuser -u ebb-agent -- /usr/bin/ebb-agent serve --config /etc/ebb-agent/agent.toml > $OUT/deb-agent.log 2>&1 &
sleep 3
curl -sk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:7443/v1/health; echo
curl -sk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:7443/v1/gpus | python3 -c "import json,sys; d=json.load(sys.stdin); g=d['gpus'][0]; print(d['host'], len(d['gpus']), g['model'], g['memory_total_mib'], g['temperature_c'], g['power_draw_w'])"
curl -s -o /dev/null -w "no token: %{http_code}\n" -k https://127.0.0.1:7443/v1/gpus
ls -la /var/lib/ebb-agent/tls; head -3 $OUT/deb-agent.log
pkill -f "ebb-agent serve --config"; sleep 1; dpkg -P ebb-agent | tail -1
echo "== 2. soak"
ulimit -n 65536
D=/tmp/soak; rm -rf $D; mkdir -p $D
$R/ebb-agent fleet --hosts 1250 --gpus-per-host 8 --base-port 40000 > $D/fleet.txt 2>/dev/null &
for i in $(seq 120); do grep -q "fleet ready" $D/fleet.txt && break; sleep 0.5; done
tail -1 $D/fleet.txt
T0=$(date +%s)
grep -v "fleet ready" $D/fleet.txt | while read name region model url; do
  $R/ebb --data-dir $D/console --token-store file hosts add $name $url --region $region >/dev/null || echo "add $name failed"
done
echo "registered $(grep -vc 'fleet ready' $D/fleet.txt) hosts in $(( $(date +%s) - T0 )) s"
$R/ebb --data-dir $D/console --token-store file daemon --metrics-listen off > $D/daemon.log 2>&1 &
DP=$!
SECS=${SOAK_SECONDS:-420}
python3 - $DP $SECS $D <<'PY'
import sys, time, json, sqlite3, urllib.request, concurrent.futures as cf
pid, secs, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def stat():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / 100.0, int(f[21]) * 4096
start = time.time(); cpu0 = None; marks = [60, 180, 300, 420, 600]; peak = 0
while time.time() - start < secs:
    time.sleep(1)
    cpu, rss = stat(); peak = max(peak, rss)
    el = time.time() - start
    if cpu0 is None and el >= 10: cpu0, t0 = cpu, time.time()
    if marks and el >= marks[0]:
        print(f"RSS at {marks.pop(0)} s: {rss/2**20:.1f} MiB", flush=True)
cpu1, _ = stat()
print(f"CPU {(cpu1-cpu0)/(time.time()-t0):.3f} cores over {time.time()-t0:.0f} s; RSS at most {peak/2**20:.1f} MiB", flush=True)
now = int(time.time() * 1000); lo, hi = now - 50000, now - 5000
urls = [l.split()[3] for l in open(f"{d}/fleet.txt") if not l.startswith("fleet ready")]
def taken(u):
    b = json.load(urllib.request.urlopen(u + "/v1/samples", timeout=10))
    return sum(len(s["gpus"]) for s in b["samples"] if lo <= s["sampled_at_ms"] <= hi)
with cf.ThreadPoolExecutor(64) as ex: total = sum(ex.map(taken, urls))
time.sleep(3)
db = sqlite3.connect(f"file:{d}/console/metrics.db?mode=ro", uri=True)
stored = db.execute("SELECT count(*) FROM samples WHERE t_ms BETWEEN ? AND ?", (lo, hi)).fetchone()[0]
allrows = db.execute("SELECT count(*) FROM samples").fetchone()[0]
print(f"readings in a 45 s window near the end: taken {total}, stored {stored} ({100*stored/max(total,1):.2f} %); {allrows} rows stored in all")
PY
kill $DP; sleep 1; grep -ci warn $D/daemon.log; grep -i warn $D/daemon.log | sort | uniq -c | sort -rn | head -5
kill %1 2>/dev/null
