#!/usr/bin/env bash
# The GPU calls of 2026-12-01 (sixth session), one H200.
# Run from the repository root on the GPU machine with build/carry.tar.xz,
# made here by carry.sh for the same $STEPS (nvshbench: this commit,
# CGO_ENABLED=0; libnvshbench.so: the shim against the pinned wheels,
# NVSHMEM 3.4.5 / NCCL 2.28.9; and what each step below names).
# Steps ($STEPS, in order):
#   tma      tma-probe.cu (built here with the machine's nvcc: plain, -rdc,
#            and against NVSHMEM with build/probe-nvshmem, the pinned
#            wheel's headers and device library): TMA and SM stores at 256 MiB
#            and 1 MiB, 1 and 16 SMs, alone and beside FMA, with the source
#            and destination in each kind of memory (EXPECTED.md says what
#            each case separates), and the pointer chase over each buffer
#   ce       ce-probe.cu: the copy engine's copies beside backgrounds of each
#            kind and shape, with nvidia-smi sampling power, clocks and their
#            event reasons every 20 ms
#   persm    the bytes-per-SM rows exactly as results/h200-2026-12-01e
#            ran them (persm-beside-1pe: the committed TMA 2x), twice, each
#            its own process, with nvidia-smi sampling
#   tma2     call B: the probe with its stages aligned to 128 bytes in shared
#            memory (align=1), built plain, -rdc and against NVSHMEM (call A:
#            the -rdc builds 2x slower on every memory; their stages sit 16
#            bytes past a 128-byte line)
#   ce2      call B: ce-probe's sweep of the FMA background's shape and code
#            (threads a CTA, CTAs an SM, its two compilations, stop checks
#            16x rarer) at 256 MiB, then its cases with the stop word
#            copied device to device
#   persm2   call B: the TMA rows alone and beside compute with the shim's
#            stages aligned at run time (this commit)
#   tma3     call D: tma2 again with the alignment computed (call B's align=1
#            was folded away by the compiler, which believed the array's
#            __align__(128)), with the NVSHMEM build (carry.sh: 'has tma3')
#   ce3      call D: do the copies need an SM? ce-probe's block cases (the
#            destination now cleared before the background starts), with the
#            stop word copied host to device and device to device
#   persm3   call D: persm2 with the shim's alignment no longer folded
#   cecheck  call E: the copy-engine rows with the shim's new SM check
#            (value ce_sm_free), 1 PE at 256 MiB and 1 MiB, 2 PEs at 256 MiB
#   gputest2 call F: gpu-test's TestPerSM and TestCorruptedOutputsFail only
#            (call E: TestPerSM/1pe failed on three fed copy points the
#            feeder could not keep 90 % busy, now not judged without headroom)
#   new38    issue 35's region row under NVSHMEM 3.8.0, like for like (its
#            'none' point now the region kernel with no region), 1 and 2 PEs,
#            beside rma/rate/put-nbi/block; --corrupt-checks; a call of its
#            own (carry.sh)
#   gputest  gpu-test with the 3.4.5 shim
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
HERE=results/h200-2026-12-01g
step() {  # step SECONDS NAME CMD...
  local secs=$1 name=$2; shift 2
  local t0=$SECONDS
  timeout -k 10 "$secs" "$@" > "$W2/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" | tee -a "$W2/summary.txt"
  tail -3 "$W2/$name.log"
  own
}
smi_start() {  # smi_start NAME: samples every 20 ms until smi_stop
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,clocks_event_reasons.active,temperature.gpu,utilization.gpu \
    --format=csv,nounits -lms 20 > "$W2/smi-$1.csv" 2>&1 &
  SMI=$!
}
smi_stop() { kill "$SMI" 2>/dev/null; wait "$SMI" 2>/dev/null; }
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,compute_mode --format=csv > "$W2/gpu.txt" 2>&1
for s in ${STEPS:-tma ce persm}; do
  case $s in
  tma)
    P=$HERE/tma-probe.cu
    "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe" $P -lcuda > "$W2/tma-build.log" 2>&1
    "$NVCC" -rdc=true -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe-rdc" $P -lcuda >> "$W2/tma-build.log" 2>&1
    NVL=$(dirname "$(find / -name libnvshmem_host.so.3 -not -path "*/proc/*" 2>/dev/null | head -1)")
    echo "machine's libnvshmem_host: $NVL" >> "$W2/tma-build.log"
    PN=$PWD/build/probe-nvshmem
    "$NVCC" -DWITH_NVSHMEM -rdc=true -arch=sm_90 -O3 -std=c++17 -I$PN/include -o "$WORK/probe-n" $P \
      $PN/lib/libnvshmem_device.a -L"$NVL" -l:libnvshmem_host.so.3 -lcuda -Xlinker -rpath,"$NVL" >> "$W2/tma-build.log" 2>&1
    Q="cases=quick sizes=256M,1M chase=1"
    step 60 tma-cuda "$WORK/probe" $Q mem=cuda
    step 60 tma-vmm "$WORK/probe" $Q mem=vmm
    step 60 tma-cuda-rdc "$WORK/probe-rdc" $Q mem=cuda
    step 90 tma-nvshmem "$WORK/probe-n" $Q mem=nvshmem
    step 90 tma-nvshmem-again "$WORK/probe-n" $Q mem=nvshmem
    step 90 tma-cuda-init "$WORK/probe-n" $Q mem=cuda init=1
    step 90 tma-cuda-n "$WORK/probe-n" $Q mem=cuda
    step 90 tma-nvshmem-one "$WORK/probe-n" $Q mem=nvshmem layout=one
    step 90 tma-nvshmem-one-gap2m "$WORK/probe-n" $Q mem=nvshmem layout=one gap=2097152
    step 90 tma-src-nvshmem "$WORK/probe-n" $Q src=nvshmem dst=cuda
    step 90 tma-dst-nvshmem "$WORK/probe-n" $Q src=cuda dst=nvshmem
    step 90 tma-nvshmem-novmm env NVSHMEM_DISABLE_CUDA_VMM=1 "$WORK/probe-n" $Q mem=nvshmem
    step 90 tma-nvshmem-gran2m env NVSHMEM_CUMEM_GRANULARITY=2097152 "$WORK/probe-n" $Q mem=nvshmem
    step 90 tma-nvshmem-bigheap env NVSHMEM_SYMMETRIC_SIZE=4G "$WORK/probe-n" $Q mem=nvshmem ;;
  tma2)
    P=$HERE/tma-probe.cu
    "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe" $P -lcuda > "$W2/tma2-build.log" 2>&1
    "$NVCC" -rdc=true -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe-rdc" $P -lcuda >> "$W2/tma2-build.log" 2>&1
    NVL=$(dirname "$(find / -name libnvshmem_host.so.3 -not -path "*/proc/*" 2>/dev/null | head -1)")
    PN=$PWD/build/probe-nvshmem
    "$NVCC" -DWITH_NVSHMEM -rdc=true -arch=sm_90 -O3 -std=c++17 -I$PN/include -o "$WORK/probe-n" $P \
      $PN/lib/libnvshmem_device.a -L"$NVL" -l:libnvshmem_host.so.3 -lcuda -Xlinker -rpath,"$NVL" >> "$W2/tma2-build.log" 2>&1
    Q="cases=quick sizes=256M,1M"
    step 60 tma2-cuda "$WORK/probe" $Q mem=cuda
    step 60 tma2-cuda-align "$WORK/probe" $Q mem=cuda align=1
    step 60 tma2-cuda-rdc "$WORK/probe-rdc" $Q mem=cuda
    step 60 tma2-cuda-rdc-align "$WORK/probe-rdc" $Q mem=cuda align=1
    step 90 tma2-nvshmem "$WORK/probe-n" $Q mem=nvshmem
    step 90 tma2-nvshmem-align "$WORK/probe-n" $Q mem=nvshmem align=1 ;;
  ce2)
    "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/ce-probe" $HERE/ce-probe.cu > "$W2/ce2-build.log" 2>&1
    smi_start ce2
    step 150 ce2-sweep "$WORK/ce-probe" sweep=1 target=0.05
    step 150 ce2-d2d "$WORK/ce-probe" stop=d2d target=0.05
    smi_stop ;;
  tma3)
    P=$HERE/tma-probe.cu
    "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe" $P -lcuda > "$W2/tma3-build.log" 2>&1
    "$NVCC" -rdc=true -arch=sm_90 -O3 -std=c++17 -o "$WORK/probe-rdc" $P -lcuda >> "$W2/tma3-build.log" 2>&1
    NVL=$(dirname "$(find / -name libnvshmem_host.so.3 -not -path "*/proc/*" 2>/dev/null | head -1)")
    PN=$PWD/build/probe-nvshmem
    "$NVCC" -DWITH_NVSHMEM -rdc=true -arch=sm_90 -O3 -std=c++17 -I$PN/include -o "$WORK/probe-n" $P \
      $PN/lib/libnvshmem_device.a -L"$NVL" -l:libnvshmem_host.so.3 -lcuda -Xlinker -rpath,"$NVL" >> "$W2/tma3-build.log" 2>&1
    Q="cases=quick sizes=256M,1M"
    step 60 tma3-cuda "$WORK/probe" $Q mem=cuda
    step 60 tma3-cuda-align "$WORK/probe" $Q mem=cuda align=1
    step 60 tma3-cuda-rdc "$WORK/probe-rdc" $Q mem=cuda
    step 60 tma3-cuda-rdc-align "$WORK/probe-rdc" $Q mem=cuda align=1
    step 90 tma3-nvshmem "$WORK/probe-n" $Q mem=nvshmem
    step 90 tma3-nvshmem-align "$WORK/probe-n" $Q mem=nvshmem align=1 ;;
  ce3)
    "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/ce-probe" $HERE/ce-probe.cu > "$W2/ce3-build.log" 2>&1
    step 90 ce3-block-h2d "$WORK/ce-probe" block=1
    step 90 ce3-block-d2d "$WORK/ce-probe" block=1 stop=d2d ;;
  persm3)
    step 120 persm3-tma "$B" run $A persm/tma persm/tma/beside-fma persm/tma/beside-mma --sizes 1M,256M --sm-budgets 1,16,66 \
      --samples 5 --warmup 1 --timeout 60s --out "$W2/persm3-tma.jsonl" --label persm3-tma ;;
  cecheck)
    # (call E passed --sm-budgets 1 here, which no copy-engine row takes: refused, exit 2)
    CE="persm/ce persm/ce/beside-fma persm/ce/beside-mma persm/compute/fma/beside-ce --samples 3 --warmup 1 --timeout 60s"
    step 120 cecheck-1pe "$B" run $A $CE --sizes 1M,256M --out "$W2/cecheck-1pe.jsonl" --label cecheck-1pe
    step 120 cecheck-2pe "$B" run $A $CE --pes-per-gpu 2 --sizes 256M --out "$W2/cecheck-2pe.jsonl" --label cecheck-2pe ;;
  persm2)
    step 120 persm2-tma "$B" run $A persm/tma persm/tma/beside-fma persm/tma/beside-mma --sizes 1M,256M --sm-budgets 1,16,66 \
      --samples 5 --warmup 1 --timeout 60s --out "$W2/persm2-tma.jsonl" --label persm2-tma ;;
  ce)
    "$NVCC" -arch=sm_90 -O3 -std=c++17 -o "$WORK/ce-probe" $HERE/ce-probe.cu > "$W2/ce-build.log" 2>&1
    smi_start ce
    step 240 ce "$WORK/ce-probe"
    smi_stop ;;
  persm)
    for i in 1 2; do
      smi_start persm-$i
      step 120 persm-beside-$i "$B" run $A persm --sizes 1M,256M --sm-budgets 1,4,16,66 --samples 5 --warmup 1 --timeout 60s \
        --out "$W2/persm-beside-$i.jsonl" --label persm-beside-$i
      smi_stop
    done ;;
  new38)
    R="--samples 10 --timeout 30s rma/rate/put-nbi-region/block rma/rate/put-nbi/block latency/issue/region"
    step 120 region-1pe-3.8.0 $N38 "$B" run $B38 --out "$W2/region-1pe-3.8.0.jsonl" --label region-1pe-3.8.0 $R
    step 120 region-2pe-3.8.0 $N38 "$B" run $B38 --pes-per-gpu 2 --out "$W2/region-2pe-3.8.0.jsonl" --label region-2pe-3.8.0 $R
    step 60 region-corrupt-3.8.0 $N38 "$B" run $B38 --corrupt-checks --samples 1 --warmup 0 --out "$W2/region-corrupt-3.8.0.jsonl" \
      --label region-corrupt-3.8.0 rma/rate/put-nbi-region/block
    step 200 gpu-test-3.8.0 $N38 NVSHBENCH_BIN="$B" NVSHBENCH_SHIM="$PWD/build/libnvshbench-n38.so" build/gpu.test -test.v -test.timeout 190s \
      -test.run 'TestNVSHMEM38Rows' ;;
  gputest2) step 400 gpu-test2 env NVSHBENCH_BIN="$B" NVSHBENCH_SHIM="$PWD/build/libnvshbench.so" build/gpu.test -test.v -test.timeout 390s \
    -test.run 'TestPerSM|TestCorruptedOutputsFail' ;;
  gputest) step 570 gpu-test env NVSHBENCH_BIN="$B" NVSHBENCH_SHIM="$PWD/build/libnvshbench.so" build/gpu.test -test.v -test.timeout 560s ;;
  esac
done
