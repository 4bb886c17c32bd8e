#!/usr/bin/env bash
# The GPU calls of 2026-12-01 (fifth session), one H200.
# Run from the repository root on the GPU machine with build/carry.tar.xz,
# made here by carry.sh for the same $STEPS (nvshbench, gpu.test: this
# commit, CGO_ENABLED=0; libnvshbench.so: the shim built against the pinned
# wheels, NVSHMEM 3.4.5 / NCCL 2.28.9; and what each step below names).
# Steps ($STEPS, in order):
#   gputest   gpu-test with the 3.4.5 shim (the review's shim mends never ran)
#   probe     tma-probe/probe.cu built with the machine's nvcc and run: TMA and
#             SM stores on 1-66 SMs alone and beside partner CTAs (EXPECTED.md)
#   probe2    the probe again, its quick cases (256 MiB, 1 and 16 SMs, 1 and 3
#             iterations a launch) with the memory NVSHMEM's heap has: cudaMalloc,
#             cuMemCreate/cuMemMap (vmm), nvshmem_malloc on one PE (built here
#             against build/probe-nvshmem: the pinned wheel's headers and device
#             library; the machine's own libnvshmem_host 3.4.5); a system fence
#             after each copy; a non-blocking stream
#   dbg       the shim's persm/tma rows (256 MiB, 1 and 16 SMs) with a debug
#             build (build/libnvshbench-dbg.so: tma-probe/pmdbg.patch applied
#             to commit 8460bd3, 'nvshbench build-shim' of that tree): no knob,
#             then each knob alone (no fence; done counter in cudaMalloc memory;
#             source and destination in cudaMalloc memory), every launch
#             printing when the timed role and the last CTA ended (stamps)
#   new38     issue 35's rows built this session, never run: NVSHMEM 3.7's
#             float atomics and 3.8's RMA regions (and the counted-signal
#             row's waiver), 1 PE and 2 PEs, under 3.8.0 (they run; a call of
#             its own, carry.sh: the gputest call's 3.4.5 shim shows the
#             waivers); with --corrupt-checks they must all fail verification;
#             then gpu-test's TestFloatAtomics and TestNVSHMEM38Rows with the
#             3.8.0 shim
#   ce        the copy engine beside a compute kernel (never run): at 256 MiB,
#             then 1 MiB, on 1 PE, then 2 PEs, before gpu-test takes them
# Logs and results land in $OUT/own.tar.xz.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
[ -f build/carry.tar.xz ] && tar -C build -xJf build/carry.tar.xz && rm -f build/carry.tar.xz
export WORK=${WORK:-/tmp/nvshbench-session}
W2=$WORK/own; mkdir -p "$W2"
own() { tar -C "$W2" -cJf "$OUT/own.tar.xz" .; }
trap own EXIT
B=$PWD/build/nvshbench
A="--shim $PWD/build/libnvshbench.so"
N38="env NVSHMEM_HOME=$PWD/build/nvshmem38"
B38="--shim $PWD/build/libnvshbench-n38.so"
HERE=results/h200-2026-12-01f
step() {  # step SECONDS NAME CMD...
  local secs=$1 name=$2; shift 2
  local t0=$SECONDS
  timeout -k 10 "$secs" "$@" > "$W2/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" | tee -a "$W2/summary.txt"
  tail -3 "$W2/$name.log"
  own
}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
for s in ${STEPS:-gputest probe}; do
  case $s in
  gputest) step 570 gpu-test env NVSHBENCH_BIN="$B" NVSHBENCH_SHIM="$PWD/build/libnvshbench.so" build/gpu.test -test.v -test.timeout 560s ;;
  probe)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > "$W2/gpu.txt" 2>&1
    step 60 probe-build "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe" $HERE/tma-probe/probe.cu
    step 240 probe "$WORK/probe"
    cp "$W2/probe.log" "$W2/probe.csv" ;;
  probe2)
    "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe" $HERE/tma-probe/probe.cu -lcuda > "$W2/probe2-build.log" 2>&1
    NVL=$(dirname "$(find / -name libnvshmem_host.so.3 -not -path "*/proc/*" 2>/dev/null | head -1)")
    echo "machine's libnvshmem_host: $NVL" >> "$W2/probe2-build.log"
    PN=$PWD/build/probe-nvshmem
    "$NVCC" -DWITH_NVSHMEM -rdc=true -arch=sm_90 -O3 -std=c++17 -I$PN/include -o "$WORK/probe-n" $HERE/tma-probe/probe.cu \
      $PN/lib/libnvshmem_device.a -L"$NVL" -l:libnvshmem_host.so.3 -lcuda -Xlinker -rpath,"$NVL" >> "$W2/probe2-build.log" 2>&1
    for v in "mem=cuda" "mem=vmm" "mem=cuda fence=1" "mem=cuda stream=nonblocking"; do
      step 60 "probe2-${v// /-}" "$WORK/probe" cases=quick $v
    done
    step 90 probe2-mem=nvshmem "$WORK/probe-n" cases=quick mem=nvshmem
    step 90 probe2-mem=nvshmem-fence "$WORK/probe-n" cases=quick mem=nvshmem fence=1 ;;
  new38)
    NEW="--samples 10 --timeout 30s rma/atomic/float_add rma/atomic/float_fetch_add latency/atomic/float_add latency/atomic/float_fetch_add rma/atomic/fetch_add latency/atomic/fetch_add rma/rate/put-nbi-region/block rma/rate/put-nbi/block latency/issue/region rma/put-signal/counted"
    step 120 new38-1pe-3.8.0 $N38 "$B" run $B38 --out "$W2/new38-1pe-3.8.0.jsonl" --label new38-1pe-3.8.0 $NEW
    step 120 new38-2pe-3.8.0 $N38 "$B" run $B38 --pes-per-gpu 2 --out "$W2/new38-2pe-3.8.0.jsonl" --label new38-2pe-3.8.0 $NEW
    step 60 new38-corrupt-3.8.0 $N38 "$B" run $B38 --corrupt-checks --samples 1 --warmup 0 --out "$W2/new38-corrupt-3.8.0.jsonl" \
      --label new38-corrupt-3.8.0 rma/atomic/float_add rma/atomic/float_fetch_add latency/atomic/float_add latency/atomic/float_fetch_add rma/rate/put-nbi-region/block latency/issue/region
    step 300 gpu-test-3.8.0 $N38 NVSHBENCH_BIN="$B" NVSHBENCH_SHIM="$PWD/build/libnvshbench-n38.so" build/gpu.test -test.v -test.timeout 290s \
      -test.run 'TestFloatAtomics|TestNVSHMEM38Rows' ;;
  ce)
    CE="persm/ce persm/ce/beside-fma persm/compute/fma persm/compute/fma/beside-ce --sm-budgets 1 --samples 3 --warmup 1 --timeout 60s"
    step 120 ce-256m "$B" run $A $CE --sizes 256M --out "$W2/ce-256m.jsonl" --label ce-256m
    step 120 ce-1m "$B" run $A $CE --sizes 1M --out "$W2/ce-1m.jsonl" --label ce-1m
    step 120 ce-2pe "$B" run $A $CE --pes-per-gpu 2 --sizes 256M --out "$W2/ce-2pe.jsonl" --label ce-2pe ;;
  dbg)
    D="--shim $PWD/build/libnvshbench-dbg.so persm/tma --sizes 256M --sm-budgets 1,16 --samples 3 --warmup 1 --timeout 60s"
    export NB_PM_DBG_STAMPS=1
    B=$PWD/build/nvshbench-dbg  # the debug tree's binary (carry.sh)
    step 90 dbg-none "$B" run $D --out "$W2/dbg-none.jsonl" --label dbg-none
    step 90 dbg-nofence env NB_PM_DBG_NOFENCE=1 "$B" run $D --out "$W2/dbg-nofence.jsonl" --label dbg-nofence
    step 90 dbg-done-cuda env NB_PM_DBG_DONE_CUDA=1 "$B" run $D --out "$W2/dbg-done-cuda.jsonl" --label dbg-done-cuda
    step 90 dbg-mem-cuda env NB_PM_DBG_MEM_CUDA=1 "$B" run $D --out "$W2/dbg-mem-cuda.jsonl" --label dbg-mem-cuda
    unset NB_PM_DBG_STAMPS
    B=$PWD/build/nvshbench ;;
  esac
done
