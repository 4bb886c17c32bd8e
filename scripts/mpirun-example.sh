#!/bin/bash
# Under Open MPI: one nvshbench per GPU (here 2 nodes x 8 GPUs, NP and PPN
# to change that); every rank gets the environment below, and rank 0 writes
# the results file. NVSHMEM's bootstrap: nvshbench picks PMIx where the
# wheel's PMIx plugin loads, else MPI (Ubuntu 24.04's Open MPI 4.1 ships
# PMIx 5, which lacks symbols the plugin needs); set NVSHMEM_BOOTSTRAP
# yourself to override ('nvshbench doctor' lists what loads). nvshbench
# opens the NVSHMEM and NCCL it finds itself and hands NVSHMEM its plugins
# by their full paths: LD_LIBRARY_PATH is passed on as it is, nothing added.
# On one node, a single 'nvshbench run' needs no launcher at all (it starts
# one worker per GPU itself).
set -euo pipefail
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1} NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} TORCH_SYMM_MEM_DISABLE_MULTICAST=1
NVSHBENCH=${NVSHBENCH:-nvshbench}
NP=${NP:-16} PPN=${PPN:-8}
# Build the shim once, before the ranks race to the cache (not for the
# fake GPU layer of a test: NVSHBENCH_SHIM=fake).
if [ "${NVSHBENCH_SHIM:-}" != fake ]; then
  "$NVSHBENCH" build-shim >/dev/null
fi
pass=(-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x PATH)
[ -z "${LD_LIBRARY_PATH+set}" ] || pass+=(-x LD_LIBRARY_PATH)
mpirun -np "$NP" --map-by "ppr:$PPN:node" "${pass[@]}" \
  "$NVSHBENCH" run --out "results/mpirun-$(date +%Y%m%d-%H%M%S).jsonl" rma/put/block rma/get/block
