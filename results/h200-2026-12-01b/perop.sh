#!/usr/bin/env bash
# perop.sh: the last call of the session: launches of one operation (the
# multi-CTA AllReduce, NCCL's LSA AllReduce, NVSHMEM's one-CTA AllReduce,
# MoE ll dispatch/combine) old / new / old, the new build ending their stamps
# from CTA 0 alone. Run from the repository root with build/carry.tar.xz;
# writes $OUT/perop.txt and the three results files.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
tar -C build -xJf build/carry.tar.xz
B=build/nvshbench
$B doctor --shim build/libnvshbench.so > "$OUT/doctor.txt" 2>&1
OLDLP=$(sed -n 's/^ *libraries loaded from[^)]*): //p' "$OUT/doctor.txt")
A="--sizes 4K,64K,1M --samples 10 --timeout 30s --moe-tokens 128 --moe-modes ll --moe-routing uniform
   collectives/allreduce/multicta collectives/allreduce/nccl-lsa collectives/allreduce/nvshmem-block moe/dispatch/nvshmem moe/combine/nvshmem"
LD_LIBRARY_PATH="$OLDLP" build/old/nvshbench run --shim build/old/libnvshbench.so --out "$OUT/before-1.jsonl" --label before $A > "$OUT/before-1.log" 2>&1
$B run --shim build/libnvshbench.so --out "$OUT/after.jsonl" --label after $A > "$OUT/after.log" 2>&1
LD_LIBRARY_PATH="$OLDLP" build/old/nvshbench run --shim build/old/libnvshbench.so --out "$OUT/before-2.jsonl" --label before $A > "$OUT/before-2.log" 2>&1
tail -1 "$OUT"/*.log
python3 results/h200-2026-12-01/beforeafter.py "$OUT" | grep -v fused | tee "$OUT/perop.txt"
