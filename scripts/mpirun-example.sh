#!/bin/bash
# Under Open MPI: one nvshbench per GPU (here 2 nodes x 8 GPUs); NVSHMEM
# bootstraps through PMIx, every rank gets the environment below, and rank 0
# writes the results file. On one node, a single 'nvshbench run' needs no
# launcher at all (it starts one worker per GPU itself).
set -euo pipefail
export NVSHMEM_BOOTSTRAP=PMIX NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1} NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
NVSHBENCH=${NVSHBENCH:-nvshbench}
"$NVSHBENCH" build-shim >/dev/null
mpirun -np 16 --map-by ppr:8:node -x NVSHMEM_BOOTSTRAP -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x PATH \
  "$NVSHBENCH" run --out "results/mpirun-$(date +%Y%m%d-%H%M%S).jsonl" rma/put/block rma/get/block
