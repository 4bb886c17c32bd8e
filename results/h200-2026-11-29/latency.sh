#!/usr/bin/env bash
# GPU tests and a latency run on the H200 test machine (1 PE and 2 PEs on the GPU).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/nvshbench-latency}
W=$OUT/w; mkdir -p "$W"
B=$PWD/build/nvshbench
export NVSHBENCH_CACHE=$PWD/build/cache
$B doctor --build > "$W/doctor.txt" 2>&1 || { tail -30 "$W/doctor.txt"; exit 1; }
( time NVSHBENCH_BIN=$B build/gpu.test -test.v ) > "$W/gpu-test.txt" 2>&1; echo "gpu-test rc=$?"; grep -E "^(---|ok|PASS|FAIL)" "$W/gpu-test.txt"; grep -E "gpu_test.go" "$W/gpu-test.txt" | head -20
( time $B run --out "$W/latency-1pe.jsonl" --label h200-1pe latency ) > "$W/lat1.log" 2>&1; echo "lat1 rc=$?"; tail -3 "$W/lat1.log"
( time $B run --pes-per-gpu 2 --sizes 8,256,4K,64K,1M --out "$W/latency-2pe.jsonl" --label h200-2pe latency ) > "$W/lat2.log" 2>&1; echo "lat2 rc=$?"; tail -3 "$W/lat2.log"
tar -C "$W" -czf "$OUT/bundle.tar.gz" .
