#!/usr/bin/env bash
# What one call to the H200 test machine runs: GPU tests, then the quick and
# the full reproduction and a 2-PE run, bundled into $OUT/bundle.tar.gz.
# Needs build/nvshbench and build/gpu.test built here (make build; go test -c -tags gpu).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/nvshbench-session}
W=$OUT/w; mkdir -p "$W"
B=$PWD/build/nvshbench
export NVSHBENCH_CACHE=$PWD/build/cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$W/nvidia-smi.txt"
nvidia-smi topo -m > "$W/topo.txt" 2>&1
$B doctor --build > "$W/doctor.txt" 2>&1
( time NVSHBENCH_BIN=$B build/gpu.test -test.v ) > "$W/gpu-test.txt" 2>&1; echo "gpu-test rc=$?"; grep -E "^(---|ok|PASS|FAIL)" "$W/gpu-test.txt"
for step in "${@:-quick full pe2}"; do :; done
if [[ " ${STEPS:-quick full pe2} " == *" quick "* ]]; then
  ( time $B reproduce --quick --out "$W/h200-1gpu-quick" --label h200-quick ) > "$W/quick.log" 2>&1; echo "quick rc=$?"; tail -3 "$W/quick.log"
fi
if [[ " ${STEPS:-quick full pe2} " == *" full "* ]]; then
  ( time $B reproduce --out "$W/h200-1gpu" --label h200-1gpu ) > "$W/full.log" 2>&1; echo "full rc=$?"; tail -3 "$W/full.log"
fi
if [[ " ${STEPS:-quick full pe2} " == *" pe2 "* ]]; then
  ( time $B run --pes-per-gpu 2 --quick --out "$W/h200-2pe-quick.jsonl" --label h200-2pe rma ) > "$W/pe2.log" 2>&1; echo "pe2 rc=$?"; tail -3 "$W/pe2.log"
fi
tar -C "$W" -czf "$OUT/bundle.tar.gz" .
ls -la "$OUT"
