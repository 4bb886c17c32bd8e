#!/usr/bin/env bash
# One call to the 2-GPU H200 machine (device kind nvidia-h200-x2): the carried
# binaries (build/nvshbench, build/gpu.test, build/libnvshbench.so, built
# elsewhere with CGO_ENABLED=0 and the pip CUDA toolchain), a 2-GPU smoke
# run, the GPU tests, and the quick and full reproductions. Every step runs
# under a deadline; a step that hangs gets cuda-gdb backtraces of its
# workers before it is killed. The logs and results (charts left out: the
# device returns files of at most 16 MiB) land in $OUT/bundle.tar.xz, the
# only file under $OUT.
# STEPS (default "smoke full test quick mpi"; also quick1 (one GPU), nccldev, puts, lsalat, beforeafter, ops, gather, gatherwhy, collab) selects the steps.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/nvshbench-x2}
W=${WORK:-/tmp/nvshbench-x2}/w; mkdir -p "$W"
B=$PWD/build/nvshbench
STEPS=${STEPS:-smoke full test quick mpi}
export NVSHBENCH_CACHE=$PWD/build/cache
bundle() { tar -C "$W" -cJf "$OUT/bundle.tar.xz" --exclude='*.png' --exclude='*.svg' .; }
trap bundle EXIT

# guard SECONDS NAME CMD...: run CMD; past SECONDS, dump the workers' stacks and kill everything.
guard() {
  local secs=$1 name=$2; shift 2
  local t0=$SECONDS
  "$@" > "$W/$name.log" 2>&1 &
  local pid=$!
  while kill -0 $pid 2>/dev/null; do
    sleep 1
    if [ $((SECONDS - t0)) -ge "$secs" ]; then
      echo "$name: still running after ${secs}s: backtraces, then kill" >> "$W/$name.log"
      for w in $(pgrep -f __worker); do
        timeout 40 cuda-gdb -p "$w" -batch -ex "info cuda kernels" -ex "thread apply all bt" > "$W/$name-gdb-$w.txt" 2>&1
      done
      pkill -9 -f __worker; pkill -9 -f "$B"; pkill -9 -f gpu.test
      break
    fi
  done
  wait $pid; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s" | tee -a "$W/summary.txt"
  tail -3 "$W/$name.log"
  bundle  # also after each step: a call cut short keeps what ran
}

# binary old|new: b and sh name that binary and its shim (old: build/old/, built elsewhere).
binary() {
  if [ "$1" = old ]; then b=build/old/nvshbench; sh=build/old/libnvshbench.so; else b=$B; sh=build/libnvshbench.so; fi
}

nvidia-smi > "$W/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$W/topo.txt" 2>&1
if timeout 60 "$B" doctor --shim build/libnvshbench.so > "$W/doctor.txt" 2>&1; then
  export NVSHBENCH_SHIM=$PWD/build/libnvshbench.so
else
  echo "carried shim does not load: building it here" | tee -a "$W/summary.txt"
  timeout 200 "$B" doctor --build > "$W/doctor-build.txt" 2>&1
fi
head -30 "$W/doctor.txt"
for s in $STEPS; do
  case $s in
  smoke) guard 100 smoke "$B" run --gpus 2 --sizes 8,1M,64M --samples 3 --timeout 20s --out "$W/smoke.jsonl" \
           rma/put/block rma/get/block latency/put/block latency/g latency/get/thread latency/pingpong/put-signal \
           collectives/allreduce/nccl-ring collectives/allreduce/multicta collectives/allreduce/nvshmem-block ;;
  nccldev) guard 150 nccldev "$B" run --gpus 2 --sizes 8,4K,1M,64M,256M --samples 5 --timeout 30s --out "$W/nccldev.jsonl" \
           rma/put/block rma/get/block rma/put/warp rma/get/warp rma/put/thread rma/get/thread rma/st rma/ld rma/nccl-lsa rma/nccl-gin limit \
           collectives/allreduce/multicta collectives/allreduce/nccl-lsa collectives/allreduce/nccl-lsa-twoshot collectives/allreduce/nccl-ring ;;
  beforeafter)  # the same quick reproduction by the previous binary (build/old/, built elsewhere) and this one, 1 and 2 GPUs
    mkdir -p "$W/ba"
    for g in 1 2; do
      guard 100 "old-${g}gpu" build/old/nvshbench reproduce --quick --gpus $g --timeout 30s --shim build/old/libnvshbench.so --out "$W/ba/old-${g}gpu" --label old-${g}gpu
      guard 100 "new-${g}gpu" "$B" reproduce --quick --gpus $g --timeout 30s --shim build/libnvshbench.so --out "$W/ba/new-${g}gpu" --label new-${g}gpu
    done ;;
  ops)  # the previous binary and this one on the rows whose kernels changed, and the new signal_add (this one only)
    for v in ${OPS_ORDER:-old new}; do  # OPS_ORDER="new old": the other order (is a difference the order's?)
      binary $v
      guard 150 "ops-$v" "$b" run --gpus 2 --shim "$sh" --sizes 8,256,4K,64K,1M,64M,1G --samples 10 --timeout 30s --out "$W/ops-$v.jsonl" --label "ops-$v" \
        rma/atomic latency/get/block latency/g latency/nccl-lsa/get limit rma/st rma/ld rma/nccl-lsa/get/block
    done ;;
  gather) guard 150 gather "$B" run --gpus 2 --sizes 8:1G --samples 10 --timeout 30s --out "$W/allgather.jsonl" --label allgather \
           collectives/allgather collectives/alltoall ;;
  gatherwhy)  # why NCCL's allgather trails its send/recv alltoall: protocols, then more channels, with NCCL's own log
    guard 120 gather-protos "$B" run --gpus 2 --sizes 64M,1G --samples 10 --timeout 30s --out "$W/allgather-protos.jsonl" --label allgather-protos \
      --nccl-protos Simple,LL128 collectives/allgather/nccl collectives/alltoall/nccl
    guard 120 gather-debug env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,P2P "$B" run --gpus 2 --sizes 64M,1G --samples 10 --timeout 30s \
      --out "$W/allgather-debug.jsonl" --label allgather-debug collectives/allgather/nccl collectives/alltoall/nccl
    guard 120 gather-ch32 env NCCL_MIN_NCHANNELS=32 "$B" run --gpus 2 --sizes 64M,1G --samples 10 --timeout 30s \
      --out "$W/allgather-ch32.jsonl" --label allgather-minchannels32 collectives/allgather/nccl collectives/alltoall/nccl ;;
  collab)  # the collectives by the previous binary (build/old/) and this one, alternated twice
    for round in 1 2; do for v in old new; do
      binary $v
      guard 120 "coll-$v-$round" "$b" run --gpus 2 --shim "$sh" --sizes 8,64K,16M,256M --samples 10 --timeout 30s \
        --out "$W/coll-$v-$round.jsonl" --label "coll-$v-$round" collectives/allreduce/nccl collectives/allreduce/multicta \
        collectives/allreduce/nvshmem-block collectives/allreduce/nvshmem-stream collectives/allreduce/nccl-lsa \
        collectives/broadcast collectives/alltoall collectives/allgather collectives/barrier
    done; done ;;
  puts) guard 120 puts "$B" run --gpus 2 --sizes 8K:256M --samples 5 --timeout 30s --out "$W/puts.jsonl" --label puts \
           rma/put/block rma/st rma/nccl-lsa/put/block rma/get/block rma/nccl-lsa/get/block limit ;;
  lsalat) guard 120 lsalat "$B" run --gpus 2 --sizes 8:1M --samples 5 --timeout 30s --out "$W/lsalat.jsonl" --label lsa-latency \
           latency/put latency/get latency/g latency/nccl-lsa ;;
  test) guard 330 gpu-test env NVSHBENCH_BIN="$B" build/gpu.test -test.v -test.timeout 320s ;;
  quick1) guard 120 quick-1gpu "$B" reproduce --quick --gpus 1 --timeout 30s --out "$W/reproduce-quick-1gpu" --label h200-1gpu-quick ;;
  quick) guard 120 quick "$B" reproduce --quick --timeout 30s --out "$W/reproduce-quick" --label h200x2-quick ;;
  full) guard 330 full "$B" reproduce --timeout 30s --out "$W/reproduce" --label h200x2 ;;
  mpi) guard 330 mpi results/h200x2-2026-11-29/mpi-check.sh "$W" ;;
  esac
done
