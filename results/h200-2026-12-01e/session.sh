#!/usr/bin/env bash
# The GPU calls of 2026-12-01 (fourth session), one H200: issue 35 (NVSHMEM
# 3.8.0 beside the pinned 3.4.5, same binary and same NCCL 2.28.9), and the
# rows issues 31, 32 and 35 added this session.
# Run from the repository root on the GPU machine with build/carry.tar.xz:
#   nvshbench, gpu.test          this commit, CGO_ENABLED=0
#   libnvshbench.so              the shim built against the pinned wheels
#                                (NVSHMEM 3.4.5, NCCL 2.28.9)
#   libnvshbench-n38.so          the same sources built against NVSHMEM
#                                3.8.0's wheel and NCCL 2.28.9's (the
#                                machine's NCCL: 2.32.3's libnccl is 344 MB,
#                                too large to carry; issue 35 waives it)
#   nvshmem38/lib/               NVSHMEM 3.8.0's libnvshmem_host.so.3 and
#                                bootstrap plugins from the same wheel,
#                                found through NVSHMEM_HOME
# Steps ($STEPS, in order):
#   test      gpu-test (../h200-2026-12-01/session.sh's step) with the 3.4.5 shim
#   a1, b1    the plan on 1 PE with 3.4.5 (a) and 3.8.0 (b): RMA, latency and
#             the atomics, collectives, MoE
#   a2, b2    the plan on 2 PEs of the GPU: RMA, latency, atomics
#   rb, ra    the 8-byte latency rows again, 3.8.0 then 3.4.5 (the order
#             reversed, so drift within the call is not read as a version)
# Logs and results land in $OUT/bundle.tar.xz (the test step's) and
# $OUT/own.tar.xz (this script's).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
[ -f build/carry.tar.xz ] && tar -C build -xJf build/carry.tar.xz && rm -f build/carry.tar.xz
export WORK=${WORK:-/tmp/nvshbench-session}
W2=$WORK/own; mkdir -p "$W2"
own() { tar -C "$W2" -cJf "$OUT/own.tar.xz" .; }
trap own EXIT
STEPS=${STEPS:-test a1 b1}
for s in $STEPS; do [ "$s" = test ] && STEPS=test bash results/h200-2026-12-01/session.sh; done
B=$PWD/build/nvshbench
A="--shim $PWD/build/libnvshbench.so"
N38="env NVSHMEM_HOME=$PWD/build/nvshmem38"
B38="--shim $PWD/build/libnvshbench-n38.so"
timeout 60 "$B" doctor $A > "$W2/doctor-3.4.5.txt" 2>&1
timeout 60 $N38 "$B" doctor $B38 > "$W2/doctor-3.8.0.txt" 2>&1
step() {  # step SECONDS NAME CMD...
  local secs=$1 name=$2; shift 2
  local t0=$SECONDS
  timeout -k 10 "$secs" "$@" > "$W2/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" | tee -a "$W2/summary.txt"
  tail -2 "$W2/$name.log"
  own
}
P1="--sizes 8,4K,1M,64M --samples 10 --timeout 30s --moe-tokens 128 rma latency collectives moe"
P2="--pes-per-gpu 2 --sizes 8,4K,1M,64M --samples 10 --timeout 30s rma latency"
PL="--sizes 8 --samples 20 --timeout 30s latency"
for s in $STEPS; do
  case $s in
  a1) step 200 a1 "$B" run $A --out "$W2/plan-1pe-3.4.5.jsonl" --label nvshmem-3.4.5 $P1 ;;
  b1) step 200 b1 $N38 "$B" run $B38 --out "$W2/plan-1pe-3.8.0.jsonl" --label nvshmem-3.8.0 $P1 ;;
  a2) step 200 a2 "$B" run $A --out "$W2/plan-2pe-3.4.5.jsonl" --label nvshmem-3.4.5-2pe $P2 ;;
  b2) step 200 b2 $N38 "$B" run $B38 --out "$W2/plan-2pe-3.8.0.jsonl" --label nvshmem-3.8.0-2pe $P2 ;;
  rb) step 90 rb $N38 "$B" run $B38 --out "$W2/lat8-3.8.0.jsonl" --label lat8-3.8.0 $PL ;;
  ra) step 90 ra "$B" run $A --out "$W2/lat8-3.4.5.jsonl" --label lat8-3.4.5 $PL ;;
  esac
done
