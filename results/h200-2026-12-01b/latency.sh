#!/usr/bin/env bash
# latency.sh: the session's last call: make gpu-test's binary, then the
# latency rows and floors old / new / old (build/old: 53d8fe9), the new build
# stamping its one-CTA kernels with plain stores again, and the plain chase.
# Run from the repository root with build/carry.tar.xz; writes into $OUT.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
tar -C build -xJf build/carry.tar.xz
B=$PWD/build/nvshbench
$B doctor --shim build/libnvshbench.so > "$OUT/doctor.txt" 2>&1
OLDLP=$(sed -n 's/^ *libraries loaded from[^)]*): //p' "$OUT/doctor.txt")
timeout 150 env NVSHBENCH_BIN="$B" NVSHBENCH_SHIM=$PWD/build/libnvshbench.so build/gpu.test -test.v -test.run 'TestOnePE|TestTwoPEsOnOneGPU' > "$OUT/gpu-test.log" 2>&1
echo "gpu-test rc=$?"; grep -E "floors:|^(--- |PASS|FAIL|ok)" "$OUT/gpu-test.log"
A="--sizes 8,256,4K --samples 10 --timeout 30s latency/put/block latency/get/block latency/p latency/g latency/atomic/fetch_add limit/chase-local"
LD_LIBRARY_PATH="$OLDLP" timeout 60 build/old/nvshbench run --shim build/old/libnvshbench.so --out "$OUT/before-1.jsonl" --label before $A > "$OUT/before-1.log" 2>&1
timeout 60 $B run --shim build/libnvshbench.so --out "$OUT/after.jsonl" --label after $A > "$OUT/after.log" 2>&1
LD_LIBRARY_PATH="$OLDLP" timeout 60 build/old/nvshbench run --shim build/old/libnvshbench.so --out "$OUT/before-2.jsonl" --label before $A > "$OUT/before-2.log" 2>&1
python3 results/h200-2026-12-01/beforeafter.py "$OUT" | tee "$OUT/latency.txt"
nvcc -O3 -arch=sm_90 -o /tmp/chase_probe results/h200-2026-12-01b/probe/chase_probe.cu && timeout 60 /tmp/chase_probe 2>&1 | grep -E "^plain|^#" | tee "$OUT/chase_probe.csv"
