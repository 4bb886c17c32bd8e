#!/usr/bin/env bash
# Probe nvshbench's launched mode under Open MPI's mpirun on this node with
# each NVSHMEM bootstrap, two ranks (one per GPU); logs and results into $1.
set -u
W=${1:-/tmp/mpi-check}; mkdir -p "$W"
B=$PWD/build/nvshbench
NV=$(python3 -c 'import nvidia.nvshmem, os; print(os.path.dirname(nvidia.nvshmem.__file__))' 2>/dev/null || echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem)
NC=$(dirname "$NV")/nccl
export LD_LIBRARY_PATH=$NV/lib:$NC/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{
  command -v mpirun; mpirun --version 2>&1 | head -2
  ompi_info 2>/dev/null | grep -i -E "pmix|MCA ess" | head -12
  for p in "$NV"/lib/nvshmem_bootstrap_*.so*; do echo "== $p"; ldd "$p" | grep -E "pmix|mpi|not found"; done
  ls /usr/lib/x86_64-linux-gnu/ | grep -i -E "pmix|libmpi" | head
} > "$W/mpi-env.txt" 2>&1
n=0
for boot in "NVSHMEM_BOOTSTRAP=MPI" "NVSHMEM_BOOTSTRAP=PMI NVSHMEM_BOOTSTRAP_PMI=PMIX" "NVSHMEM_BOOTSTRAP=PMIX"; do
  n=$((n+1))
  xs=""
  for kv in $boot; do xs="$xs -x ${kv%%=*}"; export "$kv"; done
  echo "== $boot" > "$W/mpi-$n.log"
  timeout 60 mpirun -np 2 $xs -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST \
    -x NVSHBENCH_SHIM -x NVSHBENCH_CACHE "$B" run --sizes 1M,64M --samples 5 --timeout 30s --out "$W/mpi-$n.jsonl" \
    rma/put/block rma/get/block >> "$W/mpi-$n.log" 2>&1
  echo "exit $?" >> "$W/mpi-$n.log"
  for kv in $boot; do unset "${kv%%=*}"; done
  tail -2 "$W/mpi-$n.log"
done
