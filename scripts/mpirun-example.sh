#!/bin/bash
# One node under mpirun: start a single nvshbench; it starts one worker per
# local GPU and passes them the NVSHMEM unique ID (the launcher's own PMIx
# bootstrap for multi-node jobs is not implemented yet: see README).
set -euo pipefail
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1} NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
mpirun -np 1 -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH \
  "${NVSHBENCH:-nvshbench}" run --out "results/mpirun-$(hostname).jsonl" rma
