#!/usr/bin/env bash
# nvshbench's launched mode under Open MPI's mpirun on this node, two ranks
# (one per GPU): the bootstrap nvshbench picks, MPI set by hand, and PMIx set
# by hand (refused where its plugin cannot load); then the same benchmarks
# from a single controller, to compare. Logs and results into $1.
set -u
W=${1:-/tmp/mpi-check}; mkdir -p "$W"
B=$PWD/build/nvshbench
export LD_LIBRARY_PATH=$("$B" doctor 2>/dev/null | sed -n 's/^  runtime LD_LIBRARY_PATH additions: //p')${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BENCH="rma/put/block rma/get/block latency/g collectives/allreduce/nccl-ring collectives/allreduce/multicta"
ARGS="--sizes 8,1M,64M,256M --samples 10 --timeout 30s"
{
  mpirun --version 2>&1 | head -1
  mpirun -np 2 -x LD_LIBRARY_PATH -x NVSHBENCH_SHIM "$B" doctor 2>&1 | grep -A8 "bootstraps under"
} > "$W/mpi-env.txt" 2>&1
n=0
for boot in "" "NVSHMEM_BOOTSTRAP=MPI" "NVSHMEM_BOOTSTRAP=PMI NVSHMEM_BOOTSTRAP_PMI=PMIX"; do
  n=$((n+1))
  xs=""
  for kv in $boot; do xs="$xs -x ${kv%%=*}"; export "$kv"; done
  echo "== mpirun, bootstrap: ${boot:-chosen by nvshbench}" > "$W/mpi-$n.log"
  timeout 90 mpirun -np 2 $xs -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST \
    -x NVSHBENCH_SHIM -x NVSHBENCH_CACHE "$B" run $ARGS --label "mpirun-$n" --out "$W/mpirun-$n.jsonl" $BENCH >> "$W/mpi-$n.log" 2>&1
  echo "exit $?" >> "$W/mpi-$n.log"
  for kv in $boot; do unset "${kv%%=*}"; done
  tail -2 "$W/mpi-$n.log"
done
timeout 90 "$B" run $ARGS --label controller --out "$W/controller.jsonl" $BENCH > "$W/controller.log" 2>&1
echo "controller exit $?"
"$B" compare "$W/controller.jsonl" "$W/mpirun-1.jsonl" > "$W/compare.txt" 2>&1; echo "compare exit $?"
