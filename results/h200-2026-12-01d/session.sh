#!/usr/bin/env bash
# The GPU calls of 2026-12-01 (third session) for issues 34 and 31, one H200.
# Run from the repository root on the GPU machine with build/carry.tar.xz
# (build/nvshbench, build/gpu.test, build/libnvshbench.so of this commit,
# built without a GPU with CGO_ENABLED=0 and the pip CUDA toolchain;
# build/old/: nvshbench and its shim of 90f8058, before this session's
# restructuring). Steps ($STEPS, in order):
#   test         make gpu-test's binary (../h200-2026-12-01/session.sh's
#                step): 1 PE, 2 PEs on the GPU, graphs, and every operation
#                with its output damaged (TestCorruptedOutputsFail)
#   beforeafter  the same points old / new / old: RMA, the atomics, the
#                collectives of every implementation, MoE
#   new1, new2   the rows issue 31 added, on 1 PE and on 2 PEs of the GPU
#   cap          the atomics' and issue rates' rows (and a few more) after the
#                fused loops' iteration cap went from 1000 to 2^20
#   cap2         2 PEs on the GPU: the calibration's agreed third launch
#   ba2          the collectives one launch per operation and two atomics,
#                old / new / old / new (the first call's before/after had
#                them 35-45 % apart, host-bound launches whose old/old also
#                moved 10-28 %)
# Logs and results land in $OUT/bundle.tar.xz (the shared step's) and
# $OUT/own.tar.xz (this script's).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
[ -f build/carry.tar.xz ] && tar -C build -xJf build/carry.tar.xz && rm -f build/carry.tar.xz
export WORK=${WORK:-/tmp/nvshbench-session}
W2=$WORK/own; mkdir -p "$W2"
own() { tar -C "$W2" -cJf "$OUT/own.tar.xz" .; }
trap own EXIT
STEPS=${STEPS:-test beforeafter}
for s in $STEPS; do [ "$s" = test ] && STEPS=test bash results/h200-2026-12-01/session.sh; done
B=$PWD/build/nvshbench
S="--shim $PWD/build/libnvshbench.so"
timeout 60 "$B" doctor $S > "$W2/doctor.txt" 2>&1
OLDLP=$(sed -n 's/^ *libraries loaded from[^)]*): //p' "$W2/doctor.txt")
step() {  # step SECONDS NAME CMD...
  local secs=$1 name=$2; shift 2
  local t0=$SECONDS
  timeout -k 10 "$secs" "$@" > "$W2/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" | tee -a "$W2/summary.txt"
  tail -2 "$W2/$name.log"
  own
}
BA="--sizes 8,4K,1M,64M --samples 10 --timeout 30s rma/put/block rma/get/block rma/p rma/st rma/nccl-lsa/put/block
  rma/atomic/fetch_add rma/atomic/add rma/atomic/compare_swap rma/atomic/swap rma/atomic/signal_add
  latency/put/block latency/get/block latency/g latency/atomic/fetch_add latency/atomic/compare_swap
  collectives/allreduce/multicta collectives/allreduce/nccl-lsa collectives/allreduce/nvshmem-block collectives/allreduce/nccl
  collectives/broadcast collectives/alltoall collectives/allgather moe"
BA2="--sizes 8,4K,1M --samples 10 --timeout 30s rma/atomic/add rma/atomic/fetch_add
  collectives/allreduce/nvshmem-block collectives/allreduce/nccl collectives/broadcast collectives/alltoall collectives/allgather"
NEW="--samples 10 --timeout 30s rma/atomic latency/atomic rma/iput rma/iget rma/rate rma/host rma/nccl latency/nccl latency/stream host
  collectives/reducescatter"
for s in $STEPS; do
  case $s in
  beforeafter)
    step 150 before1 env LD_LIBRARY_PATH="$OLDLP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" build/old/nvshbench run --shim build/old/libnvshbench.so \
      --moe-tokens 128 --out "$W2/before-1.jsonl" --label before $BA
    step 150 after "$B" run $S --moe-tokens 128 --out "$W2/after.jsonl" --label after $BA
    step 150 before2 env LD_LIBRARY_PATH="$OLDLP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" build/old/nvshbench run --shim build/old/libnvshbench.so \
      --moe-tokens 128 --out "$W2/before-2.jsonl" --label before $BA ;;
  ba2)
    for k in 1 2; do
      step 60 ba2-before$k env LD_LIBRARY_PATH="$OLDLP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" build/old/nvshbench run --shim build/old/libnvshbench.so \
        --out "$W2/ba2-before-$k.jsonl" --label before $BA2
      step 60 ba2-after$k "$B" run $S --out "$W2/ba2-after-$k.jsonl" --label after $BA2
    done ;;
  cap)  # after raising the fused loops' cap (1000 -> 2^20 iterations): the rows whose timers disagreed, old cap beside
    step 120 cap "$B" run $S --sizes 8,4K --samples 10 --timeout 30s --out "$W2/cap.jsonl" --label cap rma/atomic rma/rate rma/put/block rma/p \
      collectives/allreduce/multicta collectives/allgather/nvshmem-block ;;
  cap2)  # the calibration's third launch where the second was under 1 ms, agreed: 2 PEs (synchronised launches too)
    step 120 cap2 "$B" run $S --pes-per-gpu 2 --bidir --sizes 8,4K --samples 5 --timeout 30s --out "$W2/cap2-2pe.jsonl" --label cap2-2pe \
      rma/atomic/add rma/atomic/fetch_add rma/rate/p rma/put/block latency/put/block latency/atomic/fetch_add collectives/barrier/nvshmem-block ;;
  new1) step 280 new-1pe "$B" run $S --sizes 8,4K,1M,64M --out "$W2/new-1pe.jsonl" --label new-1pe $NEW ;;
  new2) step 280 new-2pe "$B" run $S --pes-per-gpu 2 --sizes 8,4K,1M --out "$W2/new-2pe.jsonl" --label new-2pe $NEW ;;
  esac
done
