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
#   gputest   gpu-test with the 3.4.5 shim under a longer deadline (this
#             session added TestPerSM and TestForcedAlgorithms), its log here
#   a1, b1    the plan on 1 PE with 3.4.5 (a) and 3.8.0 (b): RMA, latency and
#             the atomics, collectives, MoE
#   a2, b2    the plan on 2 PEs of the GPU: RMA, latency, atomics
#   rb, ra    the 8-byte latency rows again, 3.8.0 then 3.4.5 (the order
#             reversed, so drift within the call is not read as a version)
#   r31       issue 31's last rows (1 PE, 2 PEs, and with --corrupt-checks):
#             forced collective algorithms, sync/teamsync, heap growth and
#             reuse, team_split_2d
#   new       the rows newer NVSHMEM has, under 3.8.0 (3.4.5 waives them):
#             TMA-backed put/get under both policies, 1 and 2 PEs; the
#             signal ping-pong with NVSHMEM's wait and with a plain spin,
#             under both versions
#   e2        what moved the 8-byte rows: 3.8.0's fetch_add and quiet with
#             NVSHMEM_INFO (its TMA policy printed), NVSHMEM_TMA_POLICY=DISABLE
#             set, and the heap's granularity changed (placement), 3.4.5 too
#   conf      the host-issued rows that moved most, 3.4.5 / 3.8.0 / 3.4.5 /
#             3.8.0: memcpy, NCCL send, gets and issue rates at small sizes
#   bps       issue 32: transfer mechanisms over SM budgets, and beside a
#             compute kernel (1 PE and 2 PEs)
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
  gputest) step 570 gpu-test env NVSHBENCH_BIN="$B" NVSHBENCH_SHIM="$PWD/build/libnvshbench.so" build/gpu.test -test.v -test.timeout 560s ;;
  bps)
    step 150 persm-1pe "$B" run $A 'persm/*' limit/sm-copy limit/ce-copy --sizes 64K,1M,16M,256M,1G --sm-budgets 1,2,4,8,16,32,66,all \
      --samples 5 --warmup 1 --timeout 60s --out "$W2/persm-1pe.jsonl" --label persm-1pe
    step 120 persm-beside "$B" run $A persm --sizes 1M,256M --sm-budgets 1,4,16,66 --samples 5 --warmup 1 --timeout 60s \
      --out "$W2/persm-beside-1pe.jsonl" --label persm-beside-1pe
    step 90 persm-2pe "$B" run $A persm --pes-per-gpu 2 --sizes 1M,256M --sm-budgets 1,8,66,all --samples 3 --warmup 1 --timeout 60s \
      --out "$W2/persm-2pe.jsonl" --label persm-2pe ;;
  r31)
    step 150 r31-1pe "$B" run $A --sizes 1K,64K,1M,4M,16M --samples 5 --timeout 30s --out "$W2/r31-1pe.jsonl" --label r31-1pe \
      --nvshmem-algos allgather:ll8,allgather:oneshot,broadcast:put2all,broadcast:tree-ll,broadcast:flat-tree,reducescatter:oneshot \
      'collectives/*/nvshmem-block' collectives/sync collectives/teamsync host/heap-grow host/heap-reuse host/team-split-2d host/team-split host/malloc
    step 90 r31-2pe "$B" run $A --pes-per-gpu 2 --sizes 1K,4M --samples 5 --timeout 30s --nvshmem-algos broadcast:put2all --out "$W2/r31-2pe.jsonl" \
      --label r31-2pe host/heap-grow host/heap-reuse host/team-split-2d collectives/sync collectives/teamsync collectives/broadcast/nvshmem-block
    step 90 r31-corrupt "$B" run $A --corrupt-checks --sizes 1K,4M --samples 1 --warmup 0 --nvshmem-algos broadcast:put2all --out "$W2/r31-corrupt.jsonl" \
      --label r31-corrupt host/heap-grow host/heap-reuse host/team-split-2d collectives/sync collectives/teamsync collectives/broadcast/nvshmem-block ;;
  new)
    TMA="--sizes 4K,64K,1M,16M,256M --samples 10 --timeout 30s rma/put-tma rma/get-tma rma/put/block rma/get/block latency/issue/flush"
    step 120 new-1pe-3.8.0 $N38 "$B" run $B38 --out "$W2/new-1pe-3.8.0.jsonl" --label new-1pe-3.8.0 $TMA
    step 120 new-2pe-3.8.0 $N38 "$B" run $B38 --pes-per-gpu 2 --out "$W2/new-2pe-3.8.0.jsonl" --label new-2pe-3.8.0 $TMA
    step 60 new-1pe-3.4.5 "$B" run $A --out "$W2/new-1pe-3.4.5.jsonl" --label new-1pe-3.4.5 --sizes 4K --samples 3 rma/put-tma rma/get-tma latency/issue/flush
    PP="--samples 20 --timeout 30s latency/pingpong/signal latency/pingpong/signal-spin latency/pingpong/atomic"
    step 60 pp-3.4.5 "$B" run $A --out "$W2/pp-3.4.5.jsonl" --label pp-3.4.5 $PP
    step 60 pp-3.8.0 $N38 "$B" run $B38 --out "$W2/pp-3.8.0.jsonl" --label pp-3.8.0 $PP ;;
  e2)
    E2="--sizes 8 --samples 20 --timeout 30s latency/atomic/fetch_add latency/quiet latency/put/block"
    step 60 e2-default $N38 NVSHMEM_INFO=1 "$B" run $B38 --out "$W2/e2-3.8.0-default.jsonl" --label e2-3.8.0-default $E2
    step 60 e2-tmaoff $N38 NVSHMEM_TMA_POLICY=DISABLE "$B" run $B38 --out "$W2/e2-3.8.0-tma-disable.jsonl" --label e2-3.8.0-tma-disable $E2
    step 60 e2-gran38 $N38 NVSHMEM_CUMEM_GRANULARITY=2097152 "$B" run $B38 --out "$W2/e2-3.8.0-gran2m.jsonl" --label e2-3.8.0-gran2m $E2
    step 60 e2-gran345 env NVSHMEM_CUMEM_GRANULARITY=2097152 "$B" run $A --out "$W2/e2-3.4.5-gran2m.jsonl" --label e2-3.4.5-gran2m $E2
    step 60 e2-345 "$B" run $A --out "$W2/e2-3.4.5-default.jsonl" --label e2-3.4.5-default $E2 ;;
  conf)
    C="--sizes 8,4K,1M --samples 10 --timeout 30s rma/host rma/nccl/send rma/get/block rma/rate/put-nbi latency/stream"
    for k in 1 2; do
      step 60 conf-3.4.5-$k "$B" run $A --out "$W2/conf-3.4.5-$k.jsonl" --label conf-3.4.5-$k $C
      step 60 conf-3.8.0-$k $N38 "$B" run $B38 --out "$W2/conf-3.8.0-$k.jsonl" --label conf-3.8.0-$k $C
    done ;;
  esac
done
