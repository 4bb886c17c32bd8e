#!/usr/bin/env bash
# One call to the 1-GPU H200 test machine: build the shim, GPU tests, the
# full and the quick reproduction; every step bounded; everything bundled in
# $OUT/bundle.tar.gz (even when a step runs out of time).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/nvshbench-final}
W=$OUT/w; mkdir -p "$W"
B=$PWD/build/nvshbench
export NVSHBENCH_CACHE=$PWD/build/cache
trap 'tar -C "$W" -czf "$OUT/bundle.tar.gz" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$W/nvidia-smi.txt"
nvidia-smi topo -m > "$W/topo.txt" 2>&1
timeout 180 $B doctor --build > "$W/doctor.txt" 2>&1 || { echo "doctor failed"; tail -30 "$W/doctor.txt"; exit 1; }
[ -n "${SKIP_GPU_TEST:-}" ] || ( time timeout 120 env NVSHBENCH_BIN=$B build/gpu.test -test.v ) > "$W/gpu-test.txt" 2>&1; echo "gpu-test rc=$?"
grep -E "^(---|ok|PASS|FAIL)|gpu_test.go:[0-9]+: [a-z]" "$W/gpu-test.txt" | grep -v "point(s)" | head -30
( time timeout 220 $B reproduce --timeout 30s --out "$W/reproduce" --label h200-1gpu ) > "$W/reproduce.log" 2>&1; echo "full rc=$?"; tail -4 "$W/reproduce.log"
( time timeout 60 $B reproduce --quick --timeout 30s --out "$W/reproduce-quick" --label h200-1gpu-quick ) > "$W/reproduce-quick.log" 2>&1; echo "quick rc=$?"; tail -4 "$W/reproduce-quick.log"
