#!/bin/bash
# On a machine with an NVIDIA GPU, from the repository root after `cargo build -p ebb-agent`:
# the agent through NVML against nvidia-smi, idle and under a leased PyTorch workload,
# an idempotent retry, and a release that stops the workload. Writes what it read to $OUT.
OUT=${OUT:-/tmp/ebb-gpu-check}; mkdir -p $OUT
set -x
B=$PWD/target/debug; A=http://127.0.0.1:7070
Q=index,uuid,name,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.mem
nvidia-smi --query-gpu=$Q --format=csv | tee $OUT/smi_idle.csv
mkdir -p /tmp/a
$B/ebb-agent serve --listen 127.0.0.1:7070 --state-dir /tmp/a --host-name gpu-check > $OUT/agent.log 2>&1 &
AG=$!
for i in $(seq 50); do curl -sf $A/v1/health >/dev/null && break; sleep 0.2; done
curl -s $A/v1/health; echo
curl -s $A/v1/gpus | tee $OUT/gpus_idle.json
curl -s $A/metrics > $OUT/metrics_idle.txt; grep -c . $OUT/metrics_idle.txt
cat > /tmp/load.py <<'PY'
import torch, time, os
print("CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES"), flush=True)
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
big = torch.empty(20 * 1024**3, dtype=torch.uint8, device="cuda")
t = time.time()
while time.time() - t < 40:
    y = x @ x
torch.cuda.synchronize()
PY
curl -s -X POST $A/v1/leases -H 'content-type: application/json' -H 'Idempotency-Key: dev-1' \
  -d '{"pool_id":"dev","holder_id":"device-check","count":1,"command":["python3","/tmp/load.py"]}' | tee $OUT/lease.json; echo
LID=$(python3 -c "import json;print(json.load(open('$OUT/lease.json'))['lease']['id'] if 'lease' in json.load(open('$OUT/lease.json')) else json.load(open('$OUT/lease.json'))['id'])")
echo lease=$LID
# the same key again: the same lease, no second allocation
curl -s -X POST $A/v1/leases -H 'content-type: application/json' -H 'Idempotency-Key: dev-1' \
  -d '{"pool_id":"dev","holder_id":"device-check","count":1,"command":["python3","/tmp/load.py"]}'; echo
sleep 20
nvidia-smi --query-gpu=$Q --format=csv | tee $OUT/smi_load.csv
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
curl -s $A/v1/gpus | tee $OUT/gpus_load.json
curl -s $A/metrics > $OUT/metrics_load.txt; grep -v '^#' $OUT/metrics_load.txt | head -40
curl -s $A/v1/leases/$LID; echo
T0=$(date +%s.%N)
curl -s -X DELETE $A/v1/leases/$LID; echo
sleep 3
echo release_s=$(python3 -c "import time;print(time.time()-$T0)")
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
curl -s $A/v1/leases; echo
cat /tmp/a/*.log 2>/dev/null | tail -20; ls /tmp/a
kill $AG; wait
tail -20 $OUT/agent.log
