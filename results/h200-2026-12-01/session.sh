#!/usr/bin/env bash
# The GPU session of 2026-12-01 (one call to the device machine per run of
# this script): the carried binaries (build/nvshbench, build/gpu.test,
# build/libnvshbench.so, built elsewhere with CGO_ENABLED=0 and the pip CUDA
# toolchain: 'make build cuda' and 'go test -c -tags gpu -o build/gpu.test
# ./cuda/gputest'; or all of them and build/old/ in build/carry.tar.xz), then
# the steps in $STEPS. Every step runs under a
# deadline; a step that hangs gets cuda-gdb backtraces of its workers before
# it is killed. Logs and results land in $OUT/bundle.tar.xz (charts left out:
# plot redraws them from the results), the only file under $OUT.
#
# Steps: test (make gpu-test's binary), quick (reproduce --quick), full
# (reproduce), probe (floors and chases, copy references, per-op vs fused),
# moe / moegraph (the MoE suite, plain and in a CUDA graph), ops (the atomics
# on 2 PEs: signal_add and swap with their operation counts), beforeafter
# (build/old/: the binary and shim of 73700bc, before this session's shim
# split, against this one, same points, old then new then old), iso (the
# fused one-CTA AllReduce alone, old / new / old).
set -u
# The binaries may come as one archive (the device call carries 64 MiB at most).
[ -f build/carry.tar.xz ] && tar -C build -xJf build/carry.tar.xz
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/nvshbench-session}
W=${WORK:-/tmp/nvshbench-session}/w; mkdir -p "$W"
B=$PWD/build/nvshbench
STEPS=${STEPS:-test quick}
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
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

nvidia-smi > "$W/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$W/topo.txt" 2>&1
nvidia-smi nvlink -s > "$W/nvlink.txt" 2>&1
if timeout 60 "$B" doctor --shim build/libnvshbench.so > "$W/doctor.txt" 2>&1; then
  export NVSHBENCH_SHIM=$PWD/build/libnvshbench.so
else
  echo "carried shim does not load: building it here" | tee -a "$W/summary.txt"
  timeout 200 "$B" doctor --build > "$W/doctor-build.txt" 2>&1
fi
S=${NVSHBENCH_SHIM:+--shim $NVSHBENCH_SHIM}
head -40 "$W/doctor.txt"
for s in $STEPS; do
  case $s in
  test) guard 420 gpu-test env NVSHBENCH_BIN="$B" build/gpu.test -test.v -test.timeout 410s ;;
  quick) guard 150 quick "$B" reproduce --quick $S --timeout 30s --out "$W/reproduce-quick" --label "h200x$GPUS-quick" ;;
  full) guard 480 full "$B" reproduce $S --timeout 30s --out "$W/reproduce" --label "h200x$GPUS" ;;
  probe) guard 200 probe "$B" run $S --sizes 8,256,4K,64K,1M,64M,256M,1G --samples 10 --timeout 30s --out "$W/probe.jsonl" --label probe \
           limit latency/g latency/get/block latency/put/block latency/atomic latency/quiet rma/put/block rma/p rma/st rma/nccl-lsa/put/block \
           collectives/allreduce/multicta collectives/allreduce/nvshmem-block collectives/allreduce/nccl ;;
  moe) guard 300 moe "$B" run $S --timeout 60s --out "$W/moe.jsonl" --label moe moe ;;
  moegraph) guard 200 moe-graph "$B" run $S --graph --moe-routing uniform --timeout 60s --out "$W/moe-graph.jsonl" --label moe-graph moe ;;
  iso)  # the fused one-CTA NVSHMEM AllReduce at 4 KiB alone, old then new then old: is its before/after gap the plan's?
    OLDLP=$(sed -n 's/^ *libraries loaded from[^)]*): //p' "$W/doctor.txt")
    ISO="--sizes 4K,64K --samples 10 --timeout 30s collectives/allreduce/nvshmem-block"
    guard 60 iso-before1 env LD_LIBRARY_PATH="$OLDLP" build/old/nvshbench run --shim build/old/libnvshbench.so --out "$W/iso-before-1.jsonl" --label before $ISO
    guard 60 iso-after "$B" run $S --out "$W/iso-after.jsonl" --label after $ISO
    guard 60 iso-before2 env LD_LIBRARY_PATH="$OLDLP" build/old/nvshbench run --shim build/old/libnvshbench.so --out "$W/iso-before-2.jsonl" --label before $ISO ;;
  ops) guard 90 ops "$B" run $S --pes-per-gpu 2 --samples 10 --timeout 30s --out "$W/ops-2pe.jsonl" --label ops-2pe rma/atomic latency/atomic ;;
  beforeafter)
    # The old binary opens its shim without preloading NVSHMEM: point the loader at the wheel's.
    OLDLP=$(sed -n 's/^ *libraries loaded from[^)]*): //p' "$W/doctor.txt")
    BA="--sizes 4K,64K,1M,16M,256M --samples 10 --timeout 30s rma/put/block rma/get/block rma/put/warp rma/p rma/g rma/st rma/ld rma/nccl-lsa/put/block collectives/allreduce/multicta collectives/allreduce/nccl-lsa collectives/allreduce/nvshmem-block"
    guard 100 before1 env LD_LIBRARY_PATH="$OLDLP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" build/old/nvshbench run --shim build/old/libnvshbench.so --out "$W/before-1.jsonl" --label before $BA
    guard 100 after "$B" run $S --out "$W/after.jsonl" --label after $BA
    guard 100 before2 env LD_LIBRARY_PATH="$OLDLP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" build/old/nvshbench run --shim build/old/libnvshbench.so --out "$W/before-2.jsonl" --label before $BA ;;
  esac
done
